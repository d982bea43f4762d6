# Every third-party dependency comes in here, as an imported target.
find_package(Threads REQUIRED)
find_package(CUDAToolkit 12.0 REQUIRED)
find_package(NCCL REQUIRED)
find_package(cxxopts REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)

# spdlog and fmt in header-only mode: no shared library of either is needed at run time.
add_library(mgbench_logging INTERFACE)
get_target_property(_spdlog_inc spdlog::spdlog_header_only INTERFACE_INCLUDE_DIRECTORIES)
target_include_directories(mgbench_logging SYSTEM INTERFACE ${_spdlog_inc})
target_compile_definitions(mgbench_logging INTERFACE SPDLOG_FMT_EXTERNAL SPDLOG_HEADER_ONLY)
target_link_libraries(mgbench_logging INTERFACE fmt::fmt-header-only Threads::Threads)

# SQLite (history store) is not a build dependency: libsqlite3.so.0 is loaded at run time
# (harness/store/src/sqlite_api.cpp), as NVML is.

# MPI (multi-node launch), optional.
set(MGBENCH_HAVE_MPI OFF)
if(NOT MGBENCH_WITH_MPI STREQUAL "OFF")
  include(${CMAKE_CURRENT_LIST_DIR}/MgbenchFindMpi.cmake)
  mgbench_find_mpi(C)
  if(MPI_C_FOUND)
    set(MGBENCH_HAVE_MPI ON)
  elseif(MGBENCH_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "MGBENCH_WITH_MPI=ON but MPI was not found")
  else()
    message(STATUS "MPI not found: --launcher mpirun/srun disabled")
  endif()
endif()

if(MGBENCH_BUILD_TESTS)
  find_package(Catch2 REQUIRED)
endif()
if(MGBENCH_BUILD_MICRO)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "Google Benchmark not found: micro-benchmarks disabled")
    set(MGBENCH_BUILD_MICRO OFF)
  endif()
endif()

# Warnings for our own targets: -Wshadow and -Wconversion on host code. MGBENCH_WERROR turns
# every warning of the product code into an error (CI sets it); the tests get the warnings
# (mgbench_test_warnings) without the error.
option(MGBENCH_WERROR "Treat warnings in mgbench's product code as errors" OFF)
add_library(mgbench_test_warnings INTERFACE)
target_compile_options(mgbench_test_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wconversion -Wno-unused-parameter>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall --expt-relaxed-constexpr>)
add_library(mgbench_warnings INTERFACE)
target_link_libraries(mgbench_warnings INTERFACE mgbench_test_warnings)
if(MGBENCH_WERROR)
  target_compile_options(mgbench_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Werror --Werror=all-warnings>)
endif()
