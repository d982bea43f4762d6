# Self-contained headers: every public header must compile on its own.
#
# mgbench_check_headers(<layer library> <include directory>) generates, for every *.hpp under
# the directory, a one-line .cpp that includes only that header, and compiles it into the
# OBJECT library `mgbench_header_check` with the layer library's usage requirements (include
# directories, definitions, dependencies) and the project's warnings. The target is part of
# `all`, so the normal build fails when a header misses an include of its own.
function(mgbench_check_headers target_layer_lib header_glob_dir)
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE "${header_glob_dir}"
       "${header_glob_dir}/*.hpp")
  if(NOT headers)
    message(FATAL_ERROR "mgbench_check_headers: no header under ${header_glob_dir}")
  endif()
  if(NOT TARGET mgbench_header_check)
    add_library(mgbench_header_check OBJECT)
    target_link_libraries(mgbench_header_check PRIVATE mgbench_warnings)
  endif()
  set(out_dir "${PROJECT_BINARY_DIR}/header_check/${target_layer_lib}")
  foreach(header IN LISTS headers)
    string(MAKE_C_IDENTIFIER "${header}" name)
    set(source "${out_dir}/${name}.cpp")
    # Rewritten only when the content changes: no rebuild on every configure.
    file(CONFIGURE OUTPUT "${source}" CONTENT "#include \"${header}\"  // and nothing else\n")
    target_sources(mgbench_header_check PRIVATE "${source}")
  endforeach()
  target_link_libraries(mgbench_header_check PRIVATE ${target_layer_lib})
endfunction()
