#!/usr/bin/env bash
# The whole test suite again under AddressSanitizer + UndefinedBehaviorSanitizer, LibTorch-linked
# tests included (build-asan/), on the primary configuration (LibTorch 2.13 from .venv's wheel:
# scripts/setup.sh makes it). LibTorch itself is not instrumented; leak checking is on for the
# torch-free suites and off where LibTorch's own process-lifetime allocations would be reported.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || scripts/setup.sh
# -O1 -g1 (ASan's own advice; line tables only): instrumented at -O2 with full debug information the
# tree took 2.4 times as long to compile (15 min of a 44 min CI run on 2 cores), and a report still
# names each frame's function, file and line.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DACCCHECK_SANITIZE="address;undefined" -DACCCHECK_PYTHON="$PWD/.venv/bin/python" -DACCCHECK_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j2
rm -rf build-asan/test-tmp  # what a killed test left behind
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions="$PWD/scripts/ubsan-suppressions.txt"
# handle_segv=0: the crash tests (npu-sim's `crash` fault) expect the worker to die of SIGSEGV, as it
# does without ASan, instead of ASan's report and exit code.
# verify_asan_link_order=0: `acccheck dump -- /bin/sh …` preloads the (instrumented) dump engine into
# programs that are not instrumented.
torch_free='^(TorchFreeLayout|Number|Float|Csv|RecordJson|DumpJson|DumpOptions|StreamingDumpJsonWriter|HookPlugins|Cli|StandardSelector|Metric|Stage1|RunUtVerdict|Benchmark|Absolute|Binary|Ulp|Thousandth|Accumulative|ImpossibleValues|PluginLoader|Loader|Compare|PluginHost|Report|TensorFileCheck|ErrorDataFiles|RealDataFile)'
ASAN_OPTIONS=detect_leaks=1:handle_segv=0 ctest --test-dir build-asan -j2 --output-on-failure -R "$torch_free"
# The detection suite and the real-model corpus (hundreds of replays of code the e2e tests already
# cover) and the msprobe interoperability tests (the reference tool's Python, not acccheck's code)
# run in the normal builds only: under ASan they would add a quarter of an hour and find nothing
# the others do not. Neither do the three repro tests that build and run the generated program
# (2.8 min of g++ and a program that links no acccheck code; the repro command itself, its
# refusals and its real-data copies stay here).
ASAN_OPTIONS=detect_leaks=0:handle_segv=0:verify_asan_link_order=0 ctest --test-dir build-asan -j2 --output-on-failure \
  -E "$torch_free|^Scenarios/Detection|^DetectionHealthy|^Models/ModelCorpus|^MsprobeInterop|^VendorFusedOpExample|^Dtypes/FusedOpsProgram|^Demo\.Repro(KeepsHostileTexts|OfATensorDump|BuildsAndShows)"
