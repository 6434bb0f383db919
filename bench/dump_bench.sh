#!/usr/bin/env bash
# dump overhead: the median step time of the example training program (examples/train) with no
# tool, with the tool loaded but not dumping (a step that is not requested), in statistics mode and
# in tensor mode, each with stacks off and on; all in one run, modes interleaved round by round (in
# an order that turns each round) so the shared VM's noise hits every mode alike. Also bytes per
# entry against the reference's dump, and the writer's memory bound (queue high-water mark).
# Usage: [PIN=1] bench/dump_bench.sh [BUILD_DIR] [ROUNDS] [STEPS] [CONFIGS]
#   CONFIGS: which model/size pairs, e.g. "mlp/small" (default: all four); a short op-bound step
#   wants more steps and rounds than the default to get past this VM's noise.
#   PIN=1: every run on CPU 0 and the dump's writer thread on CPU 1. On this project's 2-vCPU VM
#   one vCPU is at times ~40 % slower than the other and the scheduler moves the training thread
#   between them mid-run (RESULTS.md, eleventh session): pinned, the quartiles of the ratios narrow
#   from ±30 % to ±3 %. Where writer and program thread then share a physical core, the figures
#   include what the writer takes from the program.
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
steps=${3:-30}
configs=${4:-"mlp/small cnn/small mlp/large cnn/large"}
acc="$build/acccheck"
train="$build/examples/acccheck-example-train"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1

# CMD... on CPU 0 (with PIN=1), and any thread named acccheck-writer it starts on CPU 1.
pinned() {
  if [ "${PIN:-0}" != 1 ]; then "$@"; return; fi
  taskset -c 0 "$@" &
  local pid=$! mover
  ( for _ in $(seq 500); do
      for c in /proc/[0-9]*/task/[0-9]*/comm; do
        [ "$(cat "$c" 2>/dev/null)" = acccheck-writer ] || continue
        t=${c%/comm}; taskset -p -c 1 "${t##*/}" >/dev/null 2>&1 && exit 0
      done
      sleep 0.02
    done ) &
  mover=$!
  wait "$pid"; local rc=$?
  kill "$mover" 2>/dev/null; wait "$mover" 2>/dev/null
  return $rc
}

median_of() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# Sizes: "small" steps are op-bound (about 1-2 ms for ~50 recorded calls: the per-call cost shows),
# "large" ones are compute-bound like a real training step.
size_args() {
  case "$1/$2" in
    mlp/small) echo --hidden 256 --batch 64 ;;
    mlp/large) echo --hidden 1024 --batch 512 ;;
    cnn/small) echo --batch 32 ;;
    cnn/large) echo --batch 256 ;;
  esac
}

# One run → the program's own "median step" (its first step, the warm-up, is one of many).
run_mode() {
  local model=$1 mode=$2 args=(--model "$1" --steps "$steps")
  read -r -a extra <<<"$(size_args "$model" "$size")"
  args+=("${extra[@]}")
  rm -rf "$work/d"
  case $mode in
    none)        pinned "$train" "${args[@]}" ;;
    idle)        pinned "$acc" dump --dump-path "$work/d" --step 999999 -- "$train" "${args[@]}" ;;
    stats-off)   pinned "$acc" dump --dump-path "$work/d" --stack off -- "$train" "${args[@]}" ;;
    stats-full)  pinned "$acc" dump --dump-path "$work/d" --stack full -- "$train" "${args[@]}" ;;
    tensor-off)  pinned "$acc" dump --dump-path "$work/d" --task tensor --stack off -- "$train" "${args[@]}" ;;
    tensor-full) pinned "$acc" dump --dump-path "$work/d" --task tensor --stack full -- "$train" "${args[@]}" ;;
    rf-noop)     pinned env LD_PRELOAD="$rf_noop" "$train" "${args[@]}" ;;
  esac 2>/dev/null | sed -n 's/^median step: \([0-9.]*\) ms/\1/p'
}

modes=(none idle stats-off stats-full tensor-off tensor-full)
# rf-noop: no tool, one RecordFunction callback that does nothing (bench/record_function_noop.cpp),
# the floor of a capture built on RecordFunction, which the tool's mode key replaced.
rf_noop=$(realpath -m "$build/bench/libacccheck_bench_rf_noop.so")
[ -f "$rf_noop" ] && modes+=(rf-noop)
for config in $configs; do
  model=${config%/*} size=${config#*/}
  declare -A samples=() ratios=()
  # The order of the modes turns by one each round: with a fixed order, the run right after the
  # no-tool run came out up to 0.1x better on this VM whatever it was (RESULTS.md, ninth session).
  for round in $(seq "$rounds"); do
    declare -A this_round=()
    for k in "${!modes[@]}"; do
      m=${modes[$(((k + round) % ${#modes[@]}))]}
      this_round[$m]=$(run_mode "$model" "$m")
      samples[$m]+="${this_round[$m]} "
    done
    # Each mode against the no-tool run of the same round: the VM's speed drifts over minutes.
    for m in "${modes[@]}"; do
      ratios[$m]+="$(awk -v t="${this_round[$m]}" -v b="${this_round[none]}" 'BEGIN {if (t != "" && b > 0) print t / b}') "
    done
    unset this_round
  done
  base=$(echo "${samples[none]}" | tr ' ' '\n' | grep . | median_of)
  echo "model $model, $size ($(size_args "$model" "$size"); $steps steps, median of $rounds runs of the per-run median step time;"
  echo "  last column: median of the rounds' own ratios)"
  for m in "${modes[@]}"; do
    med=$(echo "${samples[$m]}" | tr ' ' '\n' | grep . | median_of)
    ratio=$(echo "${ratios[$m]}" | tr ' ' '\n' | grep . | median_of)
    awk -v m="$m" -v t="$med" -v b="$base" -v r="$ratio" 'BEGIN {printf "  %-12s %8.3f ms  %5.2fx  %5.2fx\n", m, t, t / b, r}'
  done
  unset samples ratios
done

# The writer's memory is bounded by the queue, not by the step length: peak RSS of tensor mode for
# a short and a long run (every step dumped).
for n in 10 60; do
  rm -rf "$work/d"
  rss=$( { /usr/bin/time -f '%M' "$acc" dump --dump-path "$work/d" --task tensor --stack off -- "$train" --steps "$n" \
           --hidden 256 --batch 64 >/dev/null 2>"$work/rss"; } ; tail -1 "$work/rss")
  echo "tensor mode, $n steps: peak RSS $((rss / 1024)) MiB"
done

# Bytes per entry: the same calls in the reference's dump (examples/dumps/msprobe-mlp) and in ours.
rm -rf "$work/d"
"$acc" dump --dump-path "$work/d" --step 1 -- "$train" --steps 2 >/dev/null 2>&1
/usr/bin/env python3 - "$work/d/step1/rank/dump.json" "$(dirname "$0")/../examples/dumps/msprobe-mlp/dump.json" <<'PY'
import json, sys
ours, ref = (json.load(open(p)) for p in sys.argv[1:3])
def size(body):  # the entry as json.dump(indent=1) writes it, at its depth in the file
    return len(json.dumps(body, indent=1).replace("\n", "\n  "))
pairs = [("Aten.relu.0.forward", "Functional.relu.0.forward"), ("Aten.relu.0.backward", "Functional.relu.0.backward"),
         ("Aten.mse_loss.0.forward", "Functional.mse_loss.0.forward"),
         ("Aten.mse_loss.0.backward", "Functional.mse_loss.0.backward"),
         ("Aten.ones_like.0.forward", "Torch.ones_like.0.forward"), ("Aten.add_.0.forward", "Tensor.add_.0.forward")]
print("bytes per entry (ours vs the reference's dump of the same call)")
for a, b in pairs:
    if a in ours["data"] and b in ref["data"]:
        print("  %-26s %5d   %-32s %5d" % (a, size(ours["data"][a]), b, size(ref["data"][b])))
PY
