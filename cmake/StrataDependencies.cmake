# SPDX-License-Identifier: Apache-2.0
# Finds strata's fixed dependencies; when one is missing, stops with the package that provides it
# and the command that installs it.
set(STRATA_INSTALL_HINT "run scripts/install-deps.sh (or: sudo apt-get install")

macro(strata_missing what package)
  message(FATAL_ERROR "strata: ${what} was not found. Install the Debian package '${package}': "
    "${STRATA_INSTALL_HINT} ${package}).")
endmacro()

macro(strata_find_core_dependencies)
  find_path(STRATA_HANA_INCLUDE_DIR boost/hana.hpp)
  if(NOT STRATA_HANA_INCLUDE_DIR)
    strata_missing("Boost.Hana (boost/hana.hpp)" libboost1.81-dev)
  endif()
  # CCCL (Thrust, CUB, libcu++) ships with the CUDA Toolkit; the host backend includes it directly.
  find_path(STRATA_CCCL_INCLUDE_DIR thrust/version.h
    HINTS $ENV{CUDA_PATH}/include/cccl $ENV{CUDA_HOME}/include/cccl /usr/local/cuda/include/cccl
          /usr/local/cuda/include /usr/include)
  if(NOT STRATA_CCCL_INCLUDE_DIR)
    message(FATAL_ERROR "strata: CCCL (thrust/version.h) was not found. Install the CUDA Toolkit 13 "
      "(it ships Thrust, CUB and libcu++) and put its bin/ on PATH, or set CUDA_PATH.")
  endif()
  find_package(OpenMP QUIET)
  if(NOT OpenMP_CXX_FOUND)
    strata_missing("OpenMP for the C++ compiler" libgomp1)
  endif()
endmacro()

macro(strata_find_test_dependencies)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    strata_missing("GoogleTest" libgtest-dev)
  endif()
endmacro()

macro(strata_find_bench_dependencies)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    strata_missing("Google Benchmark" libbenchmark-dev)
  endif()
endmacro()

# CLI11 (argument parsing) and nlohmann-json (JSON output) for the command lines: the strata
# driver, the particle demo and the benchmark tools. Defines CLI11::CLI11 and nlohmann_json::nlohmann_json.
macro(strata_find_cli_dependencies)
  find_package(CLI11 CONFIG QUIET)
  if(NOT CLI11_FOUND)
    strata_missing("CLI11 (CLI/CLI.hpp)" libcli11-dev)
  endif()
  find_package(nlohmann_json 3 CONFIG QUIET)
  if(NOT nlohmann_json_FOUND)
    strata_missing("nlohmann-json (nlohmann/json.hpp)" nlohmann-json3-dev)
  endif()
endmacro()

# NCCL for the distributed layer on the CUDA backend: a system NCCL, or the header and library of
# PyPI's nvidia-nccl-cu13 (found through the Python that CMake sees). Defines strata::nccl.
macro(strata_find_nccl)
  set(STRATA_NCCL_FOUND FALSE)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(_strata_nccl_hint "")
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import nvidia.nccl, os; print(nvidia.nccl.__path__[0])"
                    OUTPUT_VARIABLE _strata_nccl_hint OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  # The toolkit's NCCL first, then PyPI's: header and library from the same place.
  find_path(STRATA_NCCL_INCLUDE_DIR nccl.h HINTS $ENV{CUDA_PATH}/include /usr/local/cuda/include ${_strata_nccl_hint}/include)
  get_filename_component(_strata_nccl_root "${STRATA_NCCL_INCLUDE_DIR}" DIRECTORY)
  find_library(STRATA_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_strata_nccl_root}/lib64 ${_strata_nccl_root}/lib NO_DEFAULT_PATH)
  if(STRATA_NCCL_INCLUDE_DIR AND STRATA_NCCL_LIBRARY)
    set(STRATA_NCCL_FOUND TRUE)
    if(NOT TARGET strata::nccl)
      add_library(strata::nccl UNKNOWN IMPORTED)
      set_target_properties(strata::nccl PROPERTIES IMPORTED_LOCATION "${STRATA_NCCL_LIBRARY}"
                                                    INTERFACE_INCLUDE_DIRECTORIES "${STRATA_NCCL_INCLUDE_DIR}")
    endif()
  endif()
endmacro()

# MPI for the optional bootstrap of a job of one process per GPU (strata/distributed/mpi.hpp): a
# system MPI, or PyPI's mpich wheel in the prefix of the Python that CMake sees (scripts/install-deps.sh
# installs it). Sets STRATA_MPI_FOUND; the target is MPI::MPI_CXX.
macro(strata_find_mpi)
  if(NOT DEFINED MPI_HOME AND NOT DEFINED ENV{MPI_HOME})
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
      execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import sys; print(sys.prefix)"
                      OUTPUT_VARIABLE _strata_py_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(EXISTS "${_strata_py_prefix}/include/mpi.h" AND EXISTS "${_strata_py_prefix}/bin/mpicxx")
        set(MPI_HOME "${_strata_py_prefix}")
      endif()
    endif()
  endif()
  find_package(MPI COMPONENTS CXX QUIET)
  set(STRATA_MPI_FOUND ${MPI_CXX_FOUND})
endmacro()

# The HDF5 C library for strata/io/hdf5.hpp (Debian's libhdf5-dev puts it under hdf5/serial). Defines
# the target strata::hdf5 where found; the io tests, examples and guide blocks are left out where not.
macro(strata_find_hdf5)
  if(NOT TARGET strata::hdf5)
    find_path(STRATA_HDF5_INCLUDE_DIR hdf5.h PATH_SUFFIXES hdf5/serial)
    find_library(STRATA_HDF5_LIBRARY NAMES hdf5_serial hdf5 PATH_SUFFIXES hdf5/serial)
    if(STRATA_HDF5_INCLUDE_DIR AND STRATA_HDF5_LIBRARY)
      add_library(strata::hdf5 INTERFACE IMPORTED)
      target_include_directories(strata::hdf5 INTERFACE ${STRATA_HDF5_INCLUDE_DIR})
      target_link_libraries(strata::hdf5 INTERFACE ${STRATA_HDF5_LIBRARY})
    else()
      message(WARNING "HDF5 not found: strata/io/hdf5.hpp's tests, example and guide blocks are left out (install libhdf5-dev)")
    endif()
  endif()
endmacro()

# The Arrow C Data Interface's structs (arrow/c/abi.h) for strata/io/arrow.hpp, from a real Arrow
# distribution: Arrow C++'s CMake package, or the headers inside the pyarrow wheel of the Python
# that CMake sees (pyarrow.get_include(); scripts/install-deps.sh installs pyarrow there). Header
# only: nothing is linked. Defines the target strata::arrow_abi where found; the Arrow tests and
# guide blocks are left out where not, and configuring says so.
macro(strata_find_arrow_abi)
  if(NOT TARGET strata::arrow_abi)
    set(_strata_arrow_hints "")
    find_package(Arrow CONFIG QUIET)
    if(Arrow_FOUND AND TARGET Arrow::arrow_shared)
      get_target_property(_strata_arrow_inc Arrow::arrow_shared INTERFACE_INCLUDE_DIRECTORIES)
      list(APPEND _strata_arrow_hints ${_strata_arrow_inc})
    endif()
    # The Python module's build names its interpreter Python_EXECUTABLE; the C++ build finds python3.
    set(_strata_arrow_python "${Python_EXECUTABLE}")
    if(NOT _strata_arrow_python)
      find_package(Python3 COMPONENTS Interpreter QUIET)
      set(_strata_arrow_python "${Python3_EXECUTABLE}")
    endif()
    if(_strata_arrow_python)
      execute_process(COMMAND "${_strata_arrow_python}" -c "import pyarrow; print(pyarrow.get_include())"
                      OUTPUT_VARIABLE _strata_pyarrow_inc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      list(APPEND _strata_arrow_hints ${_strata_pyarrow_inc})
    endif()
    find_path(STRATA_ARROW_ABI_INCLUDE_DIR arrow/c/abi.h HINTS ${_strata_arrow_hints})
    if(STRATA_ARROW_ABI_INCLUDE_DIR)
      add_library(strata::arrow_abi INTERFACE IMPORTED)
      # SYSTEM: the header is Arrow's, its warnings are not strata's.
      target_include_directories(strata::arrow_abi SYSTEM INTERFACE ${STRATA_ARROW_ABI_INCLUDE_DIR})
      message(STATUS "Arrow C Data Interface: ${STRATA_ARROW_ABI_INCLUDE_DIR}/arrow/c/abi.h")
    else()
      message(WARNING "arrow/c/abi.h not found (neither an Arrow CMake package nor pyarrow for '${_strata_arrow_python}'): "
                      "strata/io/arrow.hpp's test and guide blocks are left out (pip install pyarrow, or scripts/install-deps.sh)")
    endif()
  endif()
endmacro()
