#!/usr/bin/env bash
# dump overhead on an unmodified Python script (tests/fixtures/python/train_transformer.py): plain
# step, tool idle (a step that is not requested), statistics, statistics + Python stacks, tensor
# mode — interleaved round by round in one run.
# Usage: [PYTHON=...] [ARGS="..."] bench/python_dump_bench.sh [BUILD_DIR] [ROUNDS] [STEPS]
# PYTHON: the interpreter whose torch is BUILD_DIR's LibTorch — /usr/bin/python3 (Debian's
# python3-torch 1.13, for build-debian/; the default) or .venv/bin/python (the 2.13 wheel, build/).
# ARGS: the model's size instead of the default one, e.g. the small op-bound step of issue 24's item 11:
# ARGS="--dim 64 --seq 16 --batch 4 --vocab 1000".
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
steps=${3:-20}
acc="$build/acccheck"
script="$(dirname "$0")/../tests/fixtures/python/train_transformer.py"
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
read -r -a size <<< "${ARGS:---dim 256 --seq 64 --batch 16 --vocab 1000}"
args=(--steps "$steps" --workers 0 "${size[@]}")

median_of() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
run_mode() {
  rm -rf "$work/d"
  case $1 in
    plain)         "$python" "$script" "${args[@]}" ;;
    idle)          "$acc" dump --dump-path "$work/d" --step 999999 -- "$python" "$script" "${args[@]}" ;;
    stats)         "$acc" dump --dump-path "$work/d" --stack off -- "$python" "$script" "${args[@]}" ;;
    stats+python)  "$acc" dump --dump-path "$work/d" --stack python -- "$python" "$script" "${args[@]}" ;;
    tensor)        "$acc" dump --dump-path "$work/d" --task tensor --stack off -- "$python" "$script" "${args[@]}" ;;
  esac 2>/dev/null | sed -n 's/^median step: \([0-9.]*\) ms/\1/p'
}

modes=(plain idle stats stats+python tensor)
declare -A samples=()
for _ in $(seq "$rounds"); do
  for m in "${modes[@]}"; do samples[$m]+="$(run_mode "$m") "; done
done
base=$(echo "${samples[plain]}" | tr ' ' '\n' | grep . | median_of)
echo "train_transformer.py ${args[*]} (median of $rounds runs of the script's median step time)"
for m in "${modes[@]}"; do
  med=$(echo "${samples[$m]}" | tr ' ' '\n' | grep . | median_of)
  awk -v m="$m" -v t="$med" -v b="$base" 'BEGIN {printf "  %-13s %9.3f ms  %5.2fx\n", m, t, t / b}'
done
