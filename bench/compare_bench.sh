#!/usr/bin/env bash
# Times `acccheck compare` on synthetic NPU/GPU details pairs of 10k, 100k and 1M APIs and reports
# wall time and peak RSS (GNU time). Usage: bench/compare_bench.sh [BUILD_DIR] [SIZES...]
set -euo pipefail
build=${1:-build}
shift || true
sizes=("${@:-10000 100000 1000000}")
[ -x "$build/bench/make_details" ] || { echo "build first: cmake --build $build --target make_details" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-10s %-8s %10s %12s %s\n' APIs rows best_wall_s peak_RSS_MB exit
for n in ${sizes[@]}; do
  "$build/bench/make_details" "$n" "$work"
  rows=$(( n + (n + 1) / 2 ))  # one forward row per API, a backward row for every other API
  # warm the page cache and the plugin loading once, then measure
  "$build/acccheck" compare -npu "$work/npu_details.csv" -gpu "$work/gpu_details.csv" -o "$work/out" >/dev/null || true
  # best of three: this is a shared 2-core VM, single runs vary by ±15 %
  wall=""; rss=0
  for _ in 1 2 3; do
    /usr/bin/time -f '%e %M' -o "$work/time" "$build/acccheck" compare -npu "$work/npu_details.csv" \
        -gpu "$work/gpu_details.csv" -o "$work/out" --log-level warn >/dev/null
    rc=$?
    read -r w r < "$work/time"
    if [ -z "$wall" ] || awk "BEGIN{exit !($w < $wall)}"; then wall=$w; fi
    [ "$r" -gt "$rss" ] && rss=$r
    rm -rf "$work/out"
  done
  printf '%-10s %-8s %10s %12s %s\n' "$n" "$rows" "$wall" "$((rss / 1024))" "$rc"
  rm -rf "$work/out"
done
