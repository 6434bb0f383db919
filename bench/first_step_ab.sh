#!/usr/bin/env bash
# The first dumped step of a process, two builds interleaved (issue 24 item 11): each round runs
# tests/models/train_model.py once under build A and once under build B with only step 5 dumped
# (default stacks), and takes step 5's time ÷ the median of steps 2–4 of the same run — what
# MODES=first of corpus_dump_bench.sh measures, on 7-step runs, so that enough rounds fit for a
# single step's time to be worth comparing (one run's ratio moves by ±0.2 on this VM).
# Usage: [PYTHON=...] bench/first_step_ab.sh MODEL[:DTYPE] ROUNDS BUILD_A BUILD_B
# BUILD_*: a folder holding `acccheck` (a build tree, or a copy of acccheck, libacccheck_preload.so
# and plugins/). PYTHON: the interpreter whose torch is the builds' LibTorch (/usr/bin/python3 —
# Debian's python3-torch and python3-torchvision — by default). One intra-op thread, as in
# corpus_dump_bench.sh.
set -euo pipefail
. "$(dirname "$0")/model_bench_setup.sh"
model_bench_setup "${1:?model}"
rounds=${2:-21}
a=${3:?build A}
b=${4:?build B}

args=("$script" "$name" --dtype "$dtype" --steps 7 --time --print-steps)
first_ratio() {
  dumped_run "$1" 5 | step_lines |
    awk '{ t[$1] = $2 } END { b[1] = t[2]; b[2] = t[3]; b[3] = t[4]
      for (i = 1; i <= 3; i++) for (j = i + 1; j <= 3; j++) if (b[j] < b[i]) { x = b[i]; b[i] = b[j]; b[j] = x }
      printf "%.3f\n", t[5] / b[2] }'
}

for _ in $(seq "$rounds"); do echo "$(first_ratio "$a") $(first_ratio "$b")"; done |
  awk -v m="$model" '{ a[NR] = $1; b[NR] = $2 }
    function median(v, n,   i, j, x) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    END { printf "%s first dumped step: A %.3fx  B %.3fx  (medians of %d rounds)\n", m, median(a, NR), median(b, NR), NR }'
