# Sourced by the A/B scripts over tests/models/train_model.py (first_step_ab.sh, dumped_step_ab.sh):
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
