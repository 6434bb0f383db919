#!/usr/bin/env bash
# Builds what changed and runs every test (GoogleTest through CTest).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || scripts/setup.sh
cmake --build build -j2
rm -rf build/test-tmp  # what a killed test left behind
ctest --test-dir build --output-on-failure -j2
