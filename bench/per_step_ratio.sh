#!/usr/bin/env bash
# Every step's time under the dump ÷ the plain run's, step by step (issue 24 item 11): where a dumped
# stretch costs — the steps before it (the heap's headroom), its first dumped step (what is cold),
# the later ones, the steps after it (the writer finishing the files). Each round runs
# tests/models/train_model.py once without the tool and once per build with `--step STEPS`
# (RUN_STEPS-step runs, default stacks); per build and step, the median over the rounds of that
# step's time ÷ the plain run's in the same round.
# Usage: [PYTHON=...] [STEPS="5 6 7"] [RUN_STEPS=12] bench/per_step_ratio.sh MODEL[:DTYPE] ROUNDS BUILD...
# BUILD: a folder holding `acccheck` (a build tree, or a copy of acccheck, libacccheck_preload.so
# and plugins/). PYTHON: the interpreter whose torch is the builds' LibTorch (/usr/bin/python3 by
# default). One intra-op thread, as in corpus_dump_bench.sh.
set -euo pipefail
. "$(dirname "$0")/model_bench_setup.sh"
model_bench_setup "${1:?model}"
rounds=${2:?rounds}
shift 2
[ $# -ge 1 ] || { echo "usage: $0 MODEL[:DTYPE] ROUNDS BUILD..." >&2; exit 2; }
steps=${STEPS:-5 6 7}
run_steps=${RUN_STEPS:-12}
args=("$script" "$name" --dtype "$dtype" --steps "$run_steps" --time --print-steps)

# "N T" pairs of the run's steps, on one line.
step_times() { step_lines | tr '\n' ' '; }

for round in $(seq "$rounds"); do
  echo "0 $(plain_run | step_times)" >> "$work/times"
  i=0
  for build in "$@"; do
    i=$((i + 1))
    echo "$i $(dumped_run "$build" "$steps" | step_times)" >> "$work/times"
  done
  echo "round $round done" >&2
done

# Per build: each step's ratio to the plain run of the same round, the median over the rounds.
i=0
for build in "$@"; do
  i=$((i + 1))
  awk -v b="$i" -v n="$run_steps" -v label="$name: $build (--step $steps)" '
    $1 == 0 { r++; for (k = 2; k < NF; k += 2) plain[r, $k] = $(k + 1) }
    $1 == b { d++; for (k = 2; k < NF; k += 2) dumped[d, $k] = $(k + 1) }
    END {
      line = label
      for (s = 0; s < n; s++) {
        m = 0
        for (j = 1; j <= d && j <= r; j++) if ((j, s) in plain && (j, s) in dumped && plain[j, s] > 0) v[++m] = dumped[j, s] / plain[j, s]
        # insertion sort, then the median
        for (x = 2; x <= m; x++) { t = v[x]; for (y = x - 1; y >= 1 && v[y] > t; y--) v[y + 1] = v[y]; v[y + 1] = t }
        med = m == 0 ? 0 : (m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2)
        line = line sprintf("  %d:%.3f", s, med)
      }
      print line
    }' "$work/times"
done
