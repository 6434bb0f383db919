#!/usr/bin/env bash
# Smallest defect caught in the vendor fused operators (docs/detection.md, "Fused operators"): the
# fused transformer block (tests/programs/fused_ops_training.cpp) dumped once per dtype, replayed on
# the cpu device once and on npu-sim once per planted fault, compared; a fault counts as caught when
# compare flags the operator it was planted in (in the planted direction) and nothing else.
#   bench/fused_detection.sh [BUILD_DIR]    (default build/)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
acc="$build/acccheck"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
magnitudes="0.0001 0.0003 0.001 0.003 0.01 0.03 0.1 0.3"
echo "| operator | dtype | direction | fault | smallest caught | largest missed | false alarms |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for dtype in float16 bfloat16; do
  d="$work/$dtype"
  "$acc" dump --dump-path "$d/dump" --step 1 -- "$build/tests/fused_ops_training" "$build/plugins" 2 "$dtype" >/dev/null 2>&1
  json="$d/dump/step1/rank/dump.json"
  "$acc" run_ut -api_info "$json" --device cpu -n 2 -o "$d/cpu" --timestamp 20260101000000 >/dev/null 2>&1
  for target in "npu::npu_fusion_attention forward NPU.npu_fusion_attention.0 2" "npu::npu_fusion_attention backward NPU.npu_fusion_attention.0 3" \
                "npu::npu_rms_norm forward NPU.npu_rms_norm.0 2" "npu::npu_rms_norm backward NPU.npu_rms_norm.0 3"; do
    set -- $target
    op=$1 direction=$2 api=$3 column=$4
    caught="not caught (≤ 0.3)" missed="—" false_alarms=0
    for m in $magnitudes; do
      run="$d/${op#npu::}-$direction-$m"
      printf 'seed: 5\nfaults:\n  - {op: "%s", direction: %s, kind: rel_noise, magnitude: %s}\n' "$op" "$direction" "$m" > "$run.yaml"
      "$acc" run_ut -api_info "$json" --device npu-sim -n 2 -o "$run" --timestamp 20260101000000 --device-config "$run.yaml" >/dev/null 2>&1
      "$acc" compare -npu "$run/accuracy_checking_details_20260101000000.csv" -gpu "$d/cpu/accuracy_checking_details_20260101000000.csv" \
        -o "$run/cmp" --timestamp 20260101000001 >/dev/null 2>&1 || true
      result="$run/cmp/api_precision_compare_result_20260101000001.csv"
      hit=$(awk -F, -v api="$api" -v c="$column" '$1 == api && $c == "error"' "$result" | wc -l)
      others=$(awk -F, -v api="$api" '$1 != api && ($2 == "error" || $3 == "error")' "$result" | wc -l)
      false_alarms=$((false_alarms + others))
      if [ "$hit" -gt 0 ]; then caught=$m; break; fi
      missed=$m
    done
    echo "| \`$op\` | $dtype | $direction | rel_noise (relative noise) | $caught | $missed | $false_alarms |"
  done
done
