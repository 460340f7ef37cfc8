# One page of docs/ as a man page (cmake/markdown_to_man.awk), and its gzip -9n copy to install.
#   cmake -DAWK=... -DSCRIPT=markdown_to_man.awk -DINPUT=docs/x.md -DOUTPUT=man5/x.5 -DNAME=x
#         -DSECTION=5 -DSUMMARY="..." -DVERSION=0.1.0 -P markdown_to_man.cmake
get_filename_component(output_dir ${OUTPUT} DIRECTORY)
file(MAKE_DIRECTORY ${output_dir})
execute_process(COMMAND ${AWK} -v name=${NAME} -v section=${SECTION} -v "title=${SUMMARY}" -v version=${VERSION}
                        -f ${SCRIPT} ${INPUT}
                OUTPUT_FILE ${OUTPUT} RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${SCRIPT} ${INPUT}: ${errors}")
endif()
execute_process(COMMAND gzip -9n -c ${OUTPUT} OUTPUT_FILE ${OUTPUT}.gz RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gzip ${OUTPUT} failed (${status})")
endif()
