# Sanitizers on host code, and the libFuzzer build of the fuzz targets.
#
# MGBENCH_SANITIZE: a -fsanitize= list (the asan preset: address,undefined,float-cast-overflow,
# the last of which GCC leaves out of "undefined"). It applies to C and C++ only: CUDA files
# compiled by nvcc are not instrumented, which is fine for host-side findings. Every finding
# aborts (no recovery) so a test cannot pass over it.
# MGBENCH_BUILD_FUZZ: the libFuzzer targets (clang only, the fuzz preset). The regression
# runners that replay tests/fuzz/<target>/ need no fuzzer and are built with the tests.
set(MGBENCH_SANITIZE "" CACHE STRING "Host-code sanitizers, e.g. address,undefined (empty: none)")
option(MGBENCH_BUILD_FUZZ "Build the libFuzzer targets (clang)" OFF)

if(MGBENCH_SANITIZE)
  # The asan preset compiles with -O0 -g1 (line tables only): far quicker to build than -O1 -g,
  # which keeps it inside CI's time, and reports still name file and line. The fuzz build keeps
  # -O1 -g: there, executions per second matter more than build time.
  if(MGBENCH_BUILD_FUZZ)
    set(_mgbench_san_opt -g -O1)
  else()
    set(_mgbench_san_opt -g1 -O0)
  endif()
  set(_mgbench_san_flags -fsanitize=${MGBENCH_SANITIZE} -fno-sanitize-recover=undefined
      -fno-omit-frame-pointer ${_mgbench_san_opt})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND _mgbench_san_flags -fno-sanitize-recover=float-cast-overflow)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_mgbench_san_flags}>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=${MGBENCH_SANITIZE}>")
  # Executables without position independence: the sanitizers' metadata makes a PIE carry about
  # 190 MB of run-time relocations, and applying them cost each test process a second at start
  # (most of the asan test time: one process per test case). Fixed addresses resolve them when
  # linking; the libraries' objects stay PIC.
  if(NOT MGBENCH_BUILD_FUZZ)
    add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-no-pie>")
  endif()
endif()

if(MGBENCH_BUILD_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "MGBENCH_BUILD_FUZZ needs clang (libFuzzer): use the fuzz preset")
endif()
