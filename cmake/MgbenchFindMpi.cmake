# mgbench_find_mpi(<lang>): find_package(MPI COMPONENTS <lang>) only where the MPI compiler
# wrapper can really include mpi.h. A wrapper without its headers (OpenMPI's binaries without
# the -dev package) makes FindMPI's try_compile stop the whole configure with an error; here
# it counts as "MPI not found" instead. Sets MPI_<lang>_FOUND in the caller's scope.
function(mgbench_find_mpi lang)
  set(wrapper_name mpicc)
  set(source_ext c)
  if(lang STREQUAL "CXX")
    set(wrapper_name mpicxx)
    set(source_ext cpp)
  endif()
  find_program(MGBENCH_MPI_WRAPPER_${lang} NAMES ${wrapper_name})
  if(MGBENCH_MPI_WRAPPER_${lang})
    set(source "${CMAKE_BINARY_DIR}/mgbench_mpi_header.${source_ext}")
    file(WRITE "${source}" "#include <mpi.h>\nint main(void) { return MPI_VERSION > 0 ? 0 : 1; }\n")
    execute_process(COMMAND "${MGBENCH_MPI_WRAPPER_${lang}}" -E "${source}"
                    RESULT_VARIABLE preprocessed OUTPUT_QUIET ERROR_QUIET)
    if(NOT preprocessed EQUAL 0)
      message(STATUS "MPI: ${MGBENCH_MPI_WRAPPER_${lang}} cannot include mpi.h "
                     "(the MPI development package is missing)")
      set(MPI_${lang}_FOUND FALSE PARENT_SCOPE)
      return()
    endif()
  endif()
  find_package(MPI COMPONENTS ${lang} QUIET)
  set(MPI_${lang}_FOUND "${MPI_${lang}_FOUND}" PARENT_SCOPE)
  set(MPI_${lang}_VERSION "${MPI_${lang}_VERSION}" PARENT_SCOPE)
endfunction()
