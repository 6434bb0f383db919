#!/usr/bin/env bash
# The idle dump's cost per dispatcher call in a Python process: 100,000 torch.add on float32[16]
# (best of 5 loops per run) without the tool and under `acccheck dump` with the step not requested,
# ROUNDS interleaved pairs; prints best and median per call of each. Multiplied by a script's
# RecordFunction calls per step it estimates the idle overhead below this VM's run-to-run noise.
# Usage: bench/python_op_overhead.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
cat >"$work/ops.py" <<'PY'
import time, torch
x, y = torch.randn(16), torch.randn(16)
best = 1e9
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(100000):
        torch.add(x, y)
    best = min(best, time.perf_counter() - t0)
print("%.4f" % (best / 100000 * 1e6))
PY
plain=() idle=()
for _ in $(seq "$rounds"); do
  plain+=("$(/usr/bin/python3 "$work/ops.py")")
  idle+=("$("$build/acccheck" dump --dump-path "$work/d" --step 999999 -- /usr/bin/python3 "$work/ops.py" 2>/dev/null)")
  rm -rf "$work/d"
done
stats() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "best %.3f us, median %.3f us", a[1], (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "per torch.add call, $rounds interleaved runs"
echo "  plain: $(stats "${plain[@]}")"
echo "  idle:  $(stats "${idle[@]}")"
