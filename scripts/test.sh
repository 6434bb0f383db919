#!/usr/bin/env bash
# Builds what changed and runs every test (GoogleTest through CTest).
#   scripts/test.sh                     the primary configuration (build/, LibTorch 2.13 from the wheel)
#   scripts/test.sh --libtorch debian   the second (build-debian/, Debian's LibTorch 1.13)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [ "${1:-}" = "--libtorch" ]; then
  case "${2:-}" in
    wheel) build=build ;;
    debian) build=build-debian ;;
    *) echo "test: --libtorch: expected wheel or debian" >&2; exit 2 ;;
  esac
fi
[ -f "$build/build.ninja" ] || scripts/setup.sh "$@"
cmake --build "$build" -j2
rm -rf "$build/test-tmp"  # what a killed test left behind
ctest --test-dir "$build" --output-on-failure -j2
