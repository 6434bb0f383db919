#!/usr/bin/env bash
# Installs what acccheck needs (idempotent: only what is missing) and builds it.
#
#   scripts/setup.sh [cmake -D options]                  the primary configuration: LibTorch 2.13 from
#                                                        the PyPI wheel, in .venv/ (git-ignored) → build/
#   scripts/setup.sh --libtorch debian [cmake -D ...]    the second: Debian's libtorch-dev (1.13) and
#                                                        python3-torch → build-debian/
#
# Debian packages come through apt-get; Python packages through pip into .venv/ inside the checkout
# (torch==2.13.0 is the CPU build; the default PyPI torch is a CUDA build of several GB).
set -euo pipefail
cd "$(dirname "$0")/.."

libtorch=wheel
if [ "${1:-}" = "--libtorch" ]; then
  libtorch="${2:?--libtorch wheel|debian}"
  shift 2
fi
case "$libtorch" in wheel|debian) ;; *) echo "setup: --libtorch: expected wheel or debian, got '$libtorch'" >&2; exit 2 ;; esac

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0            # LibTorch 1.13 (CPU), the second configuration; OpenBLAS instead of the reference BLAS
  libboost-dev libboost-program-options-dev
  libboost-stacktrace-dev              # dump: symbolising C++ call stacks (stack.json)
  libunwind8                           # dump: the cached stack walk (loaded at run time; Boost's without it)
  libyaml-cpp-dev libspdlog-dev rapidjson-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  time                                 # /usr/bin/time for the bench scripts
  python3-torch python3-torchvision    # Debian's PyTorch for /usr/bin/python3: the second configuration's Python,
                                       # and the other LibTorch the primary one's tests expect to be refused
  python3-venv                         # the venv of the primary configuration (where the first python3 is Debian's)
  openmpi-bin                          # mpirun: the run_ut shard test under OpenMPI
  clang-14 libfuzzer-14-dev libclang-rt-14-dev  # the libFuzzer harnesses (bench/fuzz.sh; ASan/UBSan runtimes)
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

# The primary configuration's Python: a venv with PyTorch 2.13 (CPU), numpy, and the reference tool
# (mindstudio-probe) for the interoperability tests. The wheel is for CPython 3.11: take that
# interpreter where there is one (ACCCHECK_VENV_PYTHON chooses another).
make_venv() {
  local py="${ACCCHECK_VENV_PYTHON:-}"
  if [ -z "$py" ]; then
    for candidate in python3.11 python3; do
      if command -v "$candidate" >/dev/null; then py="$candidate"; break; fi
    done
  fi
  if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $py ($("$py" --version 2>&1))"
    "$py" -m venv .venv
  fi
  if ! .venv/bin/python -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
    # On these machines pip finds the CPU wheel on disk (pip's find-links); elsewhere add
    # --index-url https://download.pytorch.org/whl/cpu, or PyPI's default is a CUDA build.
    echo "setup: installing torch==2.13.0 (CPU) into .venv"
    .venv/bin/pip install -q --disable-pip-version-check torch==2.13.0
  fi
  .venv/bin/python -c 'import numpy' 2>/dev/null || .venv/bin/pip install -q --disable-pip-version-check numpy
  # torchvision for the real-model corpus (tests/models/): 0.28.0 is the release made with torch
  # 2.13. PyPI's is built against CUDA torch, so its C++ operators do not load beside the CPU wheel
  # (the models do not use them; train_model.py says how it copes): installed without dependencies,
  # which would pull the CUDA torch (pillow, which it imports, has none). Optional: the corpus's
  # torchvision models skip without it.
  .venv/bin/python -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torchvision") is None)' ||
    .venv/bin/pip install -q --disable-pip-version-check --no-deps torchvision==0.28.0 pillow ||
    echo "setup: torchvision could not be installed: the corpus's torchvision models will skip on this configuration"
  # The reference tool is optional: the tests that need it say so and skip where it cannot be installed.
  .venv/bin/python -c 'import msprobe' 2>/dev/null ||
    .venv/bin/pip install -q --disable-pip-version-check mindstudio-probe ||
    echo "setup: mindstudio-probe could not be installed: the msprobe interoperability tests will skip"
}

if [ "$libtorch" = wheel ]; then
  make_venv
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCCHECK_PYTHON="$PWD/.venv/bin/python" "$@"
  cmake --build build -j2
else
  cmake -S . -B build-debian -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCCHECK_PYTHON= "$@"
  cmake --build build-debian -j2
fi
