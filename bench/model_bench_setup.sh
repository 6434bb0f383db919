# Sourced by the scripts over tests/models/train_model.py (first_step_ab.sh, dumped_step_ab.sh,
# per_step_ratio.sh):
# model_bench_setup MODEL[:DTYPE] sets name and dtype (fp32 when none is given), python (PYTHON, else
# /usr/bin/python3 — Debian's python3-torch and python3-torchvision), script (the corpus's training
# script), one intra-op thread as in corpus_dump_bench.sh, and work (a folder removed on exit).
model_bench_setup() {
  model=$1
  name=${model%%:*}
  dtype=${model##*:}
  [ "$dtype" = "$model" ] && dtype=fp32
  python=${PYTHON:-/usr/bin/python3}
  script="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/models/train_model.py"
  export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

# The training script's output run under BUILD's dump, `--step STEPS` (a list: "5 6 7"), into a dump
# folder emptied first; NAME=VALUE arguments after STEPS go into its environment. The script's
# arguments are the caller's `args` array.
dumped_run() {
  local build=$1 steps=$2
  shift 2
  rm -rf "$work/d"
  # shellcheck disable=SC2086  # STEPS is a list of step numbers
  env "$@" "$build/acccheck" dump --dump-path "$work/d" --step $steps -- "$python" -W ignore "${args[@]}" 2>/dev/null
}

# The same without the tool.
plain_run() { "$python" -W ignore "${args[@]}" 2>/dev/null; }

# train_model.py's "step N time T ms" lines (--print-steps) → "N T" lines.
step_lines() { sed -n 's/^step \([0-9]*\) time \([0-9.]*\) ms/\1 \2/p'; }
