#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what strata's builds need and this machine lacks; does nothing when all is present.
set -euo pipefail

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
has_header() { echo "#include <$1>" | "${CXX:-g++}" -x c++ -std=c++20 -E - >/dev/null 2>&1; }

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
command -v python3 >/dev/null || need+=(python3 python3-pip)
if command -v g++ >/dev/null; then
  has_header boost/hana.hpp || need+=(libboost1.81-dev)
  has_header gtest/gtest.h || need+=(libgtest-dev)
  has_header benchmark/benchmark.h || need+=(libbenchmark-dev)
  has_header CLI/CLI.hpp || need+=(libcli11-dev)
  has_header nlohmann/json.hpp || need+=(nlohmann-json3-dev)
else
  need+=(libboost1.81-dev libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev)
fi
if ((${#need[@]})); then
  echo "install-deps: installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# DLPack's header for the interop layer's tests: without it they are left out (CMake says so).
if ! has_header dlpack/dlpack.h; then
  echo "install-deps: installing libdlpack-dev"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libdlpack-dev; } ||
    echo "install-deps: could not install libdlpack-dev; the DLPack tests will be left out" >&2
fi

# HDF5's C library for the io layer (strata/io/hdf5.hpp): without it its tests and example are left out.
if ! has_header hdf5.h && ! has_header hdf5/serial/hdf5.h; then
  echo "install-deps: installing libhdf5-dev"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libhdf5-dev; } ||
    echo "install-deps: could not install libhdf5-dev; the io tests will be left out" >&2
fi

# pyarrow for the python3 CMake finds: its wheel carries Arrow's C Data Interface header
# (arrow/c/abi.h) that strata/io/arrow.hpp's test and guide blocks build against (CMake's
# strata_find_arrow_abi asks this python3 for pyarrow.get_include()). The C++ build runs before
# scripts/test-python.sh makes its virtual environment, so the header comes from here. Without it
# the Arrow test is left out (CMake says so).
if ! python3 -c 'import pyarrow' 2>/dev/null; then
  echo "install-deps: installing pyarrow from PyPI (Arrow's C Data Interface header)"
  python3 -m pip install -q pyarrow || echo "install-deps: could not install pyarrow; the Arrow test will be left out" >&2
fi

# CCCL (Thrust, CUB, libcu++) comes with the CUDA Toolkit; the host backend needs its headers too.
if ! command -v nvcc >/dev/null && [ ! -e /usr/local/cuda/include/cccl/thrust/version.h ]; then
  echo "install-deps: the CUDA Toolkit 13 (nvcc and CCCL) is missing; install it from NVIDIA's packages" >&2
  exit 1
fi

# cuobjdump + nvdisasm let the vector-width check read SASS; without them it reads PTX.
if ! command -v cuobjdump >/dev/null || ! command -v nvdisasm >/dev/null; then
  if ! python3 -c 'import nvidia, os, sys; sys.exit(not any(os.path.exists(os.path.join(p, "cu13/bin/nvdisasm")) for p in nvidia.__path__))' 2>/dev/null; then
    echo "install-deps: installing cuobjdump and nvdisasm from PyPI"
    python3 -m pip install -q nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37 ||
      echo "install-deps: could not install cuobjdump; the vector-width check will read PTX" >&2
  fi
fi
# NCCL's header and library for the distributed layer's CUDA build (the host backend needs neither).
if ! python3 -c 'import nvidia.nccl' 2>/dev/null && [ ! -e /usr/include/nccl.h ] && [ ! -e /usr/local/cuda/include/nccl.h ]; then
  echo "install-deps: installing NCCL (nvidia-nccl-cu13) from PyPI"
  python3 -m pip install -q nvidia-nccl-cu13 ||
    echo "install-deps: could not install NCCL; the CUDA build leaves the distributed test out" >&2
fi
# MPI (PyPI's mpich: header, library, mpiexec) for the CUDA build's test of join_mpi(); without it
# that test is left out (the library needs MPI only where a user includes strata/distributed/mpi.hpp).
if ! command -v mpicxx >/dev/null && ! python3 -c 'import os, sys; sys.exit(not os.path.exists(os.path.join(sys.prefix, "include", "mpi.h")))' 2>/dev/null; then
  echo "install-deps: installing MPI (mpich) from PyPI"
  python3 -m pip install -q mpich || echo "install-deps: could not install mpich; the CUDA build leaves mpi_join_test out" >&2
fi
echo "install-deps: all dependencies present"
