#!/usr/bin/env bash
# The dump's cost per step on the real-model corpus, in CPU samples rather than wall-clock time
# (issue 24 item 11). On the project's VM the same plain step takes 2.5 ms one minute and 4.4 ms the
# next (other tenants; no steal time is reported), so corpus_dump_bench.sh's wall-clock ratios move
# by up to 2x between runs. Here each run is sampled with perf while it trains (the training thread
# only, after the first seconds), and its samples are divided by those the Python interpreter itself
# took outside the tool: the interpreter's work per step is the same with or without the tool, and a
# slower or faster machine scales both alike, so the ratio to the plain run's is the step's cost.
# What this hides: a slowdown of every instruction of the training thread that the writer thread
# would cause from the other core (the wall-clock bench includes it, within its noise).
# Usage: [PYTHON=...] [MODELS="vit:fp32 ..."] [MODES="plain full off idle"] [ROUNDS=2] [SECS=8]
#        bench/corpus_cpu_cost.sh [BUILD_DIR]
# MODES: plain (no tool), full (every step dumped, default stacks), off (--stack off), python,
# idle (the tool attached, no step dumped: the fallback's cost alone). Needs `perf` (linux-perf)
# allowed to sample the process (kernel.perf_event_paranoid <= 2 for one's own processes).
set -euo pipefail
build=${1:-build-debian}
acc="$build/acccheck"
script="$(cd "$(dirname "$0")/.." && pwd)/tests/models/train_model.py"
python=${PYTHON:-/usr/bin/python3}
read -r -a models <<< "${MODELS:-gpt:fp32 gpt:bf16 lstm:fp32 gru:fp32 resnet18:fp32 resnet18:bf16 mobilenet_v3_small:fp32 efficientnet_b0:fp32 vit:fp32 swin_t:fp32}"
read -r -a modes <<< "${MODES:-plain full off idle}"
rounds=${ROUNDS:-2}
secs=${SECS:-8}
export OMP_NUM_THREADS=${THREADS:-1} OPENBLAS_NUM_THREADS=${THREADS:-1}
command -v perf > /dev/null || { echo "corpus_cpu_cost.sh: perf not found (apt-get install linux-perf)" >&2; exit 1; }
work=$(mktemp -d)
trap 'pkill -f "$script .*--steps 100000000" 2> /dev/null || true; rm -rf "$work"' EXIT

# "<all samples> <interpreter samples outside the tool>" of a perf script with call chains.
count_samples() {
  "$python" -c '
import re, sys
total = interp = 0
frames = []
def sample(frames):
    global total, interp
    if not frames: return
    total += 1
    leaf = frames[0][1].rsplit("/", 1)[-1]
    if ("python3" in leaf or "libpython" in leaf) and not any("acccheck" in s or "acccheck" in d for s, d in frames):
        interp += 1
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line.strip():
        sample(frames); frames = []
    elif line[0] not in " \t":
        frames = []
    else:
        m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)$", line)
        if m: frames.append((m.group(1), m.group(2)))
sample(frames)
print(total, interp)'
}

# One run of a model in a mode; prints its samples per interpreter sample.
measure() {
  local model=${1%%:*} dtype=${1##*:} mode=$2
  local args=("$script" "$model" --dtype "$dtype" --steps 100000000)
  rm -rf "$work/d"
  case $mode in
    plain) "$python" -W ignore "${args[@]}" ;;
    idle)  "$acc" dump --dump-path "$work/d" --step 999999999 -- "$python" -W ignore "${args[@]}" ;;
    *)     "$acc" dump --dump-path "$work/d" --stack "$mode" -- "$python" -W ignore "${args[@]}" ;;
  esac > /dev/null 2>&1 &
  sleep 8  # past the imports, the model's construction and the first steps
  local pid
  pid=$(pgrep -f "^$python -W ignore $script $model --dtype $dtype" | head -1)
  perf record -q -F 500 -e cpu-clock --call-graph dwarf,8192 -t "$pid" -o "$work/perf.data" -- sleep "$secs" > /dev/null 2>&1
  pkill -f "$script $model --dtype $dtype --steps 100000000" || true
  wait 2> /dev/null || true
  perf script --no-inline -i "$work/perf.data" -F ip,sym,dso 2> /dev/null | count_samples | awk '{printf "%.4f\n", $1 / $2}'
}

echo "corpus dump cost in CPU samples: $python, $build, $rounds rounds of ${secs} s, OMP_NUM_THREADS=$OMP_NUM_THREADS"
echo "(training-thread samples per interpreter sample, the mean of the rounds, x the plain run's)"
printf '  %-26s' model; for m in "${modes[@]}"; do printf ' %8s' "$m"; done; echo
for model in "${models[@]}"; do
  declare -A sum=()
  for _ in $(seq "$rounds"); do
    for m in "${modes[@]}"; do sum[$m]=$(awk -v a="${sum[$m]:-0}" -v b="$(measure "$model" "$m")" 'BEGIN {print a + b}'); done
  done
  printf '  %-26s' "$model"
  for m in "${modes[@]}"; do printf ' %7.2fx' "$(awk -v t="${sum[$m]}" -v b="${sum[plain]}" 'BEGIN {print t / b}')"; done
  echo
  unset sum
done
