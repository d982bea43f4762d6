# cmake -DMGBENCH=<binary> -DHELP2MAN=<help2man> -DOUT=<mgbench.1> -DWORK=<scratch dir>
#       -P MgbenchManPage.cmake
# The man page from the binary's own help: help2man reads `mgbench --help` and `--version`; the
# commands (from the "Commands:" list of --help) get one section each with their --help text.
execute_process(COMMAND "${MGBENCH}" --help OUTPUT_VARIABLE usage RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MGBENCH} --help failed")
endif()
string(REGEX MATCHALL "\n  [a-z]+ " names "${usage}")
set(include_text "[COMMANDS]\n")
foreach(name IN LISTS names)
  string(STRIP "${name}" name)
  execute_process(COMMAND "${MGBENCH}" help "${name}" OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mgbench help ${name} failed")
  endif()
  # roff: backslashes escaped, minus signs as \\- (options), no line starting with a control
  # character.
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  string(APPEND include_text ".SS \"mgbench ${name}\"\n.nf\n${text}.fi\n")
endforeach()
get_filename_component(dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${dir}")
set(include_file "${WORK}/mgbench.1.include")
file(WRITE "${include_file}" "${include_text}")
execute_process(
  COMMAND "${HELP2MAN}" --no-info --no-discard-stderr --section 1
          --name "multi-GPU scaling benchmarks" --include "${include_file}" --output "${OUT}"
          "${MGBENCH}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed for ${MGBENCH}")
endif()
