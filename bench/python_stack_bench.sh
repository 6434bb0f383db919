#!/usr/bin/env bash
# The cost of Python call stacks per captured call: 5,000 torch.add (best of 3 loops, µs per call)
# called 21 Python frames deep from a function with a long body (a long line table), dumped with
# `--stack python` and with `--stack off`, RUNS runs each, interleaved. The difference is what the
# stack capture costs a call.
# Usage: [PYTHON=.venv/bin/python] bench/python_stack_bench.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-5}
python=${PYTHON:-.venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
{
  echo 'import time, torch'
  echo 'x, y = torch.randn(16), torch.randn(16)'
  echo 'def deep(n):'
  echo '    a = 0'
  for _ in $(seq 4); do echo '    a += 1; a += 2; a += 3; a += 4; a += 5; a += 6; a += 7; a += 8; a += 9; a += 10'; done
  echo '    if n == 0:'
  echo '        best = 1e9'
  echo '        for _ in range(3):'
  echo '            t0 = time.perf_counter()'
  echo '            for _ in range(5000):'
  echo '                torch.add(x, y)'
  echo '            best = min(best, time.perf_counter() - t0)'
  echo '        return best / 5000 * 1e6'
  echo '    return deep(n - 1)'
  echo 'print("%.3f" % deep(20))'
} >"$work/deep.py"
declare -A samples=()
for _ in $(seq "$runs"); do
  for mode in python off; do
    samples[$mode]+="$("$build/acccheck" dump --dump-path "$work/d" --stack $mode -- "$python" "$work/deep.py" 2>/dev/null) "
    rm -rf "$work/d"
  done
done
for mode in python off; do
  echo "stack $mode: $(echo "${samples[$mode]}" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {printf "best %.2f us, median %.2f us per call", a[1], (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')"
done
