# cmake -DHELP2MAN=... -DPROGRAM=... -DNAME=... -DSUMMARY=... -DINCLUDE=... -DOUTPUT=... -P help_to_man.cmake
# help2man reads only the top-level --help; a program with subcommands (tusk-controller) gets a
# COMMANDS section with each one's own --help, appended to the hand-written INCLUDE sections.
execute_process(COMMAND ${PROGRAM} --help OUTPUT_VARIABLE top_help RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --help failed (${status})")
endif()
file(READ ${INCLUDE} sections)
string(REGEX MATCH "Subcommands:\n(.*)" subcommand_block "${top_help}")
if(subcommand_block)
  string(APPEND sections "\n[COMMANDS]\n")
  string(REPLACE "\n" ";" lines "${CMAKE_MATCH_1}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^  ([a-z][a-z-]*) ")
      set(command ${CMAKE_MATCH_1})
      execute_process(COMMAND ${PROGRAM} ${command} --help OUTPUT_VARIABLE command_help RESULT_VARIABLE status)
      if(NOT status EQUAL 0)
        message(FATAL_ERROR "${PROGRAM} ${command} --help failed (${status})")
      endif()
      # roff: a leading dot or quote would be a request; backslashes are escapes.
      string(REPLACE "\\" "\\e" command_help "${command_help}")
      string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" command_help "${command_help}")
      string(APPEND sections ".SS ${command}\n.nf\n${command_help}.fi\n")
    endif()
  endforeach()
endif()
get_filename_component(output_dir ${OUTPUT} DIRECTORY)
file(MAKE_DIRECTORY ${output_dir})
file(WRITE ${OUTPUT}.h2m "${sections}")
execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr "--name=${SUMMARY}" --include=${OUTPUT}.h2m
                        --output=${OUTPUT} ${PROGRAM}
                RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "help2man ${PROGRAM}: ${errors}")
endif()
# Debian policy: installed man pages are compressed with gzip -9n (no name or time stamp inside,
# so the package is reproducible).
execute_process(COMMAND gzip -9n -c ${OUTPUT} OUTPUT_FILE ${OUTPUT}.gz RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gzip ${OUTPUT} failed (${status})")
endif()
