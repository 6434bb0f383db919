#!/usr/bin/env bash
# Dump cost per step on the real-model corpus (tests/models/train_model.py, issue 24 item 11):
# every step of the run is dumped (statistics, default stacks: Python frames for calls from Python,
# symbolised C++ frames otherwise), and the median step (steps after the first two) is compared
# with the same script without the tool — rounds interleaved, the median of the rounds reported.
# Usage: [PYTHON=...] [MODELS="gpt:fp32 ..."] [MODES="plain full off"] bench/corpus_dump_bench.sh [BUILD_DIR] [ROUNDS] [STEPS]
# PYTHON: the interpreter whose torch is BUILD_DIR's LibTorch (/usr/bin/python3 — Debian's
# python3-torch and python3-torchvision — for build-debian/, the default; .venv/bin/python for build/,
# which has no torchvision: MODELS="gpt:fp32 gpt:bf16 lstm:fp32 gru:fp32").
# THREADS: LibTorch's intra-op threads (OMP_NUM_THREADS), 1 by default: on this 2-vCPU VM the second
# core is then the writer thread's, as on a training host with cores to spare; THREADS= leaves
# LibTorch's default (its OpenMP workers spin between parallel regions on the writer's core).
# MODES: plain (no tool), idle (the tool attached, no step dumped), full (the default --stack), python, off (--stack off), one (only step 5
# of the run dumped: the median is then of that step alone, over the rounds), plain5 (the plain
# script's step 5 alone: with one, the line also gives one ÷ plain5 — the same step of a run
# without the tool, still warming up as the dumped run's step 5 is, where the plain median is of
# steps 2–40). Two modes compare a
# dumped step with undumped steps of the same run, which this VM's drift (the same plain step 2.6 ms
# in one run, 5.1 ms in another minutes later) cannot blur, and print that ratio instead of one
# with the plain run: first (only step 5 dumped, with the default stacks: ÷ the median of steps
# 2–4: what `--step 5` costs), every4 (steps 5, 9, 13, … dumped: each ÷ the step before it, the
# median of those ratios: a dumped step once the first one's set-up is done).
set -euo pipefail
build=${1:-build-debian}
rounds=${2:-5}
steps=${3:-30}
acc="$build/acccheck"
script="$(cd "$(dirname "$0")/.." && pwd)/tests/models/train_model.py"
python=${PYTHON:-/usr/bin/python3}
read -r -a models <<< "${MODELS:-gpt:fp32 gpt:bf16 lstm:fp32 gru:fp32 resnet18:fp32 resnet18:bf16 mobilenet_v3_small:fp32 efficientnet_b0:fp32 vit:fp32 swin_t:fp32 shufflenet_v2:fp32 maxvit:fp32 lraspp:fp32}"
read -r -a modes <<< "${MODES:-plain full off}"
threads=${THREADS-1}
if [ -n "$threads" ]; then export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median_of() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# One run; prints the median step in ms (mode one: the dumped step's own time).
run_mode() {
  local model=${1%%:*} dtype=${1##*:} mode=$2
  local args=("$script" "$model" --dtype "$dtype" --steps "$steps" --time)
  rm -rf "$work/d"
  case $mode in
    plain) "$python" -W ignore "${args[@]}" ;;
    plain5) "$python" -W ignore "${args[@]}" --print-steps ;;
    idle) "$acc" dump --dump-path "$work/d" --step 99999999 -- "$python" -W ignore "${args[@]}" ;;
    one|first) "$acc" dump --dump-path "$work/d" --step 5 -- "$python" -W ignore "${args[@]}" --print-steps ;;
    every4) "$acc" dump --dump-path "$work/d" --step $(seq 5 4 $((steps - 1))) -- "$python" -W ignore "${args[@]}" --print-steps ;;
    *)     "$acc" dump --dump-path "$work/d" --stack "$mode" -- "$python" -W ignore "${args[@]}" ;;
  esac 2>/dev/null | case $mode in
    one|plain5) sed -n 's/^step 5 time \([0-9.]*\) ms/\1/p' ;;
    first|every4) sed -n 's/^step \([0-9]*\) time \([0-9.]*\) ms/\1 \2/p' | within_run "$mode" ;;
    *) sed -n 's/^median step: \([0-9.]*\) ms/\1/p' ;;
  esac
}
# "step ms" lines → the dumped step's time ÷ undumped steps of the same run (modes first, every4).
within_run() {
  awk -v mode="$1" '{ t[$1] = $2 } END {
    if (mode == "first") { n = 0; for (k = 2; k <= 4; k++) b[++n] = t[k]
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { x = b[i]; b[i] = b[j]; b[j] = x }
      print t[5] / b[2]; exit }
    n = 0; for (k = 5; (k in t) && ((k - 1) in t); k += 4) r[++n] = t[k] / t[k - 1]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) { x = r[i]; r[i] = r[j]; r[j] = x }
    print (n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2) }'
}

echo "corpus dump cost: $python, $build, $rounds rounds of $steps steps, OMP_NUM_THREADS=${threads:-default} (median step; × the plain run)"
printf '  %-26s' model; for m in "${modes[@]}"; do printf ' %18s' "$m"; done; echo
for model in "${models[@]}"; do
  declare -A samples=()
  for _ in $(seq "$rounds"); do
    for m in "${modes[@]}"; do samples[$m]+="$(run_mode "$model" "$m") "; done
  done
  base=$(echo "${samples[plain]:-}" | tr ' ' '\n' | grep . | median_of || true)
  printf '  %-26s' "$model"
  for m in "${modes[@]}"; do
    med=$(echo "${samples[$m]}" | tr ' ' '\n' | grep . | median_of)
    if [ "$m" = first ] || [ "$m" = every4 ]; then printf ' %12s %5.2fx' "(same run)" "$med"
    elif [ -n "$base" ]; then printf ' %9.3f ms %5.2fx' "$med" "$(awk -v t="$med" -v b="$base" 'BEGIN {print t / b}')"
    else printf ' %9.3f ms       ' "$med"; fi
  done
  if [ -n "${samples[one]:-}" ] && [ -n "${samples[plain5]:-}" ]; then
    one=$(echo "${samples[one]}" | tr ' ' '\n' | grep . | median_of)
    p5=$(echo "${samples[plain5]}" | tr ' ' '\n' | grep . | median_of)
    printf '   one ÷ plain5 %.2fx' "$(awk -v t="$one" -v b="$p5" 'BEGIN {print t / b}')"
  fi
  echo
  unset samples
done
