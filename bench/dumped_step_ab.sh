#!/usr/bin/env bash
# Dumped steps against the plain script, several builds or settings interleaved (issue 24 item 11):
# each round runs tests/models/train_model.py once without the tool and once per variant with
# `--step 5 6 7` (12-step runs, default stacks; FIRST_TIMED and RUN_STEPS below), and takes the mean
# of the dumped steps 5–7 ÷ the mean of the plain run's steps 5–7. The median over the rounds is reported per variant, with the
# rounds' range: three dumped steps a run and a plain run in every round make this steadier than
# one step's time (a single step moves by ±0.2 from run to run on this project's VM). With two
# variants or more, each one's ratio over the first variant's in the same round is also reported
# (the median over the rounds): the two runs of a round share the VM's period, so this paired
# figure tells differences of ~0.02x apart in 25–31 rounds where the medians' ranges overlap.
# Usage: [PYTHON=...] [DUMP_STEPS="0-11"] [FIRST_TIMED=5] [RUN_STEPS=12] bench/dumped_step_ab.sh MODEL[:DTYPE] ROUNDS VARIANT...
# FIRST_TIMED (5) and RUN_STEPS (12): the three steps timed are FIRST_TIMED to FIRST_TIMED + 2 of
# RUN_STEPS-step runs. DUMP_STEPS: the steps dumped (`--step`; the timed ones by default). A
# variant's own `DUMP_STEPS=0-11` or `DUMP_STEPS=5,6,7` (commas for spaces) among its settings
# overrides it for that variant, so the two selections can be paired in the same rounds.
# VARIANT: BUILD[,NAME=VALUE[ NAME=VALUE...]] — a folder holding `acccheck` (a build tree, or a
# copy of acccheck, libacccheck_preload.so and plugins/) and, after a comma, environment settings for
# that variant's runs (a temporary build's switches, GLIBC_TUNABLES, ...).
# PYTHON: the interpreter whose torch is the builds' LibTorch (/usr/bin/python3 — Debian's
# python3-torch and python3-torchvision — by default). One intra-op thread, as in corpus_dump_bench.sh.
set -euo pipefail
. "$(dirname "$0")/model_bench_setup.sh"
model_bench_setup "${1:?model}"
rounds=${2:?rounds}
shift 2
[ $# -ge 1 ] || { echo "usage: $0 MODEL[:DTYPE] ROUNDS VARIANT..." >&2; exit 2; }

first_timed=${FIRST_TIMED:-5}
run_steps=${RUN_STEPS:-12}
# "step N time T ms" lines → the mean time of the three timed steps.
timed_steps() {
  step_lines |
    awk -v f="$first_timed" '$1 >= f && $1 <= f + 2 { s += $2; n++ } END { if (n == 3) printf "%.4f\n", s / n; else print "nan" }'
}
args=("$script" "$name" --dtype "$dtype" --steps "$run_steps" --time --print-steps)

for round in $(seq "$rounds"); do
  plain=$(plain_run | timed_steps)
  i=0
  for v in "$@"; do
    i=$((i + 1))
    build=${v%%,*}
    settings=()
    [ "$build" != "$v" ] && read -r -a settings <<< "${v#*,}"
    steps=${DUMP_STEPS:-$first_timed $((first_timed + 1)) $((first_timed + 2))}
    env_settings=()
    for kv in ${settings[@]+"${settings[@]}"}; do
      case $kv in
        DUMP_STEPS=*) steps=${kv#DUMP_STEPS=}; steps=${steps//,/ } ;;
        *) env_settings+=("$kv") ;;
      esac
    done
    dumped=$(dumped_run "$build" "$steps" ${env_settings[@]+"${env_settings[@]}"} | timed_steps)
    awk -v i="$i" -v d="$dumped" -v p="$plain" 'BEGIN { printf "%d %.4f\n", i, d / p }' >> "$work/ratios"
  done
  echo "round $round done" >&2
done

i=0
for v in "$@"; do
  i=$((i + 1))
  awk -v i="$i" '$1 == i { print $2 }' "$work/ratios" | sort -g |
    awk -v v="$v" -v m="$model" -v f="$first_timed" '{ a[NR] = $1 } END {
      med = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
      printf "%s dumped steps %d-%d / plain: %.3fx (rounds %.3f-%.3f, %d rounds)  %s\n", m, f, f + 2, med, a[1], a[NR], NR, v }'
done
# Paired: variant i's ratio ÷ variant 1's in the same round (POSIX awk: Debian's default is mawk).
for v in $(seq 2 $#); do
  awk -v v="$v" '$1 == 1 { one[++n1] = $2 } $1 == v { mine[++nv] = $2 } END {
      for (k = 1; k <= nv && k <= n1; k++) printf "%.6f\n", mine[k] / one[k] }' "$work/ratios" | sort -g |
    awk -v v="$v" '{ p[NR] = $1 } END { if (NR) printf "variant %d / variant 1, paired (the same round): median %.4f over %d rounds\n",
      v, NR % 2 ? p[(NR + 1) / 2] : (p[NR / 2] + p[NR / 2 + 1]) / 2, NR }'
done
