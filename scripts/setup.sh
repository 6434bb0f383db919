#!/usr/bin/env bash
# Installs every Debian package acccheck needs (idempotent: only what is missing), then configures
# and builds into ./build. Usage: scripts/setup.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0            # LibTorch 1.13 (CPU); OpenBLAS instead of the reference BLAS
  libboost-dev libboost-program-options-dev
  libboost-stacktrace-dev              # dump: symbolising C++ call stacks (stack.json)
  libunwind8                           # dump: the cached stack walk (loaded at run time; Boost's without it)
  libyaml-cpp-dev libspdlog-dev rapidjson-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  time                                 # /usr/bin/time for the bench scripts
  python3-torch                        # Debian's PyTorch for /usr/bin/python3: .pt interoperability tests
  openmpi-bin                          # mpirun: the run_ut shard test under OpenMPI
  clang-14 libfuzzer-14-dev            # the libFuzzer harnesses (bench/fuzz.sh)
  chromium fonts-wqy-microhei          # the HTML report test opens reports headless (CJK column names)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build -j2
