# acccheck_find_torch(): finds the LibTorch acccheck builds against and says where it came from.
#
# Two configurations (README, docs/build.md):
#   ACCCHECK_PYTHON=/path/to/python   the LibTorch inside that Python's torch package (a PyPI wheel),
#                                     found the way torch C++ extensions find it
#                                     (torch.utils.cmake_prefix_path); the primary configuration.
#   ACCCHECK_PYTHON empty             find_package(Torch) as installed (Debian's libtorch-dev 1.13).
# Sets Torch_* (find_package), ACCCHECK_TORCH_VERSION (major.minor), ACCCHECK_TORCH_FULL_VERSION,
# ACCCHECK_TORCH_ORIGIN (one line for `acccheck --version`), ACCCHECK_TORCH_PREFIX_PATH (what
# consumers of the installed package prepend to find the same LibTorch; empty for a system one), ACCCHECK_TORCH_LIB_DIR (where
# libtorch_cpu lives) and ACCCHECK_TORCH_CPU_LIBRARY, ACCCHECK_TEST_PYTHON (the tests' Python),
# ACCCHECK_FOREIGN_TORCH_PYTHON (a Python with another LibTorch, for the tests that expect a refusal).
macro(acccheck_find_torch)
  if(ACCCHECK_PYTHON)
    execute_process(
      COMMAND "${ACCCHECK_PYTHON}" -c
              "import os, torch, torch.utils; print(torch.utils.cmake_prefix_path); print(os.path.dirname(torch.__file__)); print(torch.__version__)"
      RESULT_VARIABLE _acccheck_py_rc OUTPUT_VARIABLE _acccheck_py_out ERROR_VARIABLE _acccheck_py_err
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _acccheck_py_rc EQUAL 0)
      string(REGEX REPLACE "\n$" "" _acccheck_py_err "${_acccheck_py_err}")
      string(REGEX MATCH "[^\n]*$" _acccheck_py_err "${_acccheck_py_err}")
      message(FATAL_ERROR "ACCCHECK_PYTHON=${ACCCHECK_PYTHON}: cannot import torch (${_acccheck_py_err}); "
                          "install it (scripts/setup.sh makes .venv with torch==2.13.0) or leave ACCCHECK_PYTHON empty "
                          "for an installed LibTorch")
    endif()
    string(REPLACE "\n" ";" _acccheck_py_out "${_acccheck_py_out}")
    list(GET _acccheck_py_out 0 _acccheck_torch_cmake)
    list(GET _acccheck_py_out 1 _acccheck_torch_pkg)
    list(GET _acccheck_py_out 2 ACCCHECK_TORCH_FULL_VERSION)
    # The package root first: TorchConfig's find_library(... PATHS <root>/lib) would otherwise take
    # a system LibTorch (Debian's /usr/lib/<triplet>/libtorch.so) before the wheel's own.
    set(ACCCHECK_TORCH_PREFIX_PATH "${_acccheck_torch_pkg};${_acccheck_torch_cmake}")
    list(PREPEND CMAKE_PREFIX_PATH ${ACCCHECK_TORCH_PREFIX_PATH})
    find_package(Torch REQUIRED PATHS "${_acccheck_torch_cmake}" NO_DEFAULT_PATH)
    # The wheel's Caffe2 config gives caffe2::mkl link folders built from an empty MKL_ROOT
    # (/lib/intel64, /lib/win-x64, …; pytorch/pytorch#73008). MKL is inside libtorch_cpu: none is
    # needed, and they would land in every binary's RPATH.
    if(TARGET caffe2::mkl AND NOT MKL_ROOT)
      set_property(TARGET caffe2::mkl PROPERTY INTERFACE_LINK_DIRECTORIES)
    endif()
    set(ACCCHECK_TORCH_ORIGIN "torch ${ACCCHECK_TORCH_FULL_VERSION} of ${ACCCHECK_PYTHON} (${_acccheck_torch_pkg})")
  else()
    find_package(Torch REQUIRED)
    set(ACCCHECK_TORCH_FULL_VERSION "${Torch_VERSION}")
    set(ACCCHECK_TORCH_PREFIX_PATH "")
  endif()
  # The core library every LibTorch-using target links: its directory is the install RPATH of what
  # acccheck installs (a wheel's torch/lib is on no system path), and the dump's preload library
  # refuses a program that loads another one.
  if(TARGET torch_cpu)
    get_target_property(ACCCHECK_TORCH_CPU_LIBRARY torch_cpu IMPORTED_LOCATION)
  endif()
  if(NOT ACCCHECK_TORCH_CPU_LIBRARY)
    get_filename_component(_acccheck_torch_lib_hint "${TORCH_LIBRARY}" DIRECTORY)
    find_library(ACCCHECK_TORCH_CPU_LIBRARY torch_cpu PATHS "${_acccheck_torch_lib_hint}" NO_DEFAULT_PATH REQUIRED)
  endif()
  get_filename_component(ACCCHECK_TORCH_LIB_DIR "${ACCCHECK_TORCH_CPU_LIBRARY}" DIRECTORY)
  if(NOT ACCCHECK_PYTHON)
    set(ACCCHECK_TORCH_ORIGIN "LibTorch ${ACCCHECK_TORCH_FULL_VERSION} installed in ${ACCCHECK_TORCH_LIB_DIR}")
  endif()
  # Installed copies find the wheel's libraries: the install RPATH of every installed binary gets
  # torch/lib after its own $ORIGIN entries (targets with an INSTALL_RPATH of their own append
  # ACCCHECK_TORCH_RPATH_SUFFIX, ";<torch/lib>" — never an empty entry, which would mean the current
  # folder; a system LibTorch needs nothing and adds nothing).
  set(ACCCHECK_TORCH_RPATH_SUFFIX "")
  if(NOT ACCCHECK_TORCH_LIB_DIR MATCHES "^(/usr)?/lib(64)?(/|$)")
    set(ACCCHECK_TORCH_RPATH_SUFFIX ";${ACCCHECK_TORCH_LIB_DIR}")
    list(APPEND CMAKE_INSTALL_RPATH "${ACCCHECK_TORCH_LIB_DIR}")
  endif()
  if(NOT ACCCHECK_TEST_PYTHON)
    if(ACCCHECK_PYTHON)
      set(ACCCHECK_TEST_PYTHON "${ACCCHECK_PYTHON}")
    else()
      set(ACCCHECK_TEST_PYTHON "/usr/bin/python3")
    endif()
  endif()
  # The other configuration's Python (another LibTorch), which the tests expect to be refused.
  if(NOT DEFINED ACCCHECK_FOREIGN_TORCH_PYTHON)
    if(ACCCHECK_PYTHON)
      set(ACCCHECK_FOREIGN_TORCH_PYTHON "/usr/bin/python3")
    else()
      set(ACCCHECK_FOREIGN_TORCH_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python")
    endif()
  endif()
  message(STATUS "acccheck: LibTorch ${ACCCHECK_TORCH_FULL_VERSION}: ${ACCCHECK_TORCH_ORIGIN}; "
                 "core library ${ACCCHECK_TORCH_CPU_LIBRARY}; tests' Python ${ACCCHECK_TEST_PYTHON}")
endmacro()
