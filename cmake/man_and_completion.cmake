# Man pages (help2man, from each binary's --help and --version; tusk-profile(5) from
# docs/profile.md) and bash completions (from each binary's --bash-completion), generated at build
# time from the built programs and the docs so they always match them. A build without help2man
# still works; it warns and installs no man(1) pages.
include(GNUInstallDirs)

set(TUSK_GENERATED_DOCS ${CMAKE_BINARY_DIR}/docs)
find_program(TUSK_HELP2MAN help2man)
if(NOT TUSK_HELP2MAN)
  message(WARNING "help2man not found: no man pages (scripts/install-deps.sh installs it)")
endif()

set(_tusk_doc_outputs "")
foreach(program tusk-agent tusk-controller)
  if(program STREQUAL "tusk-agent")
    set(component agent)
    set(summary "run the RDMA and DPDK traffic engines of Tusk on a host for a tusk-controller")
  else()
    set(component controller)
    set(summary "plan, run and judge Tusk fabric tests on tusk-agents")
  endif()

  set(completion ${TUSK_GENERATED_DOCS}/completions/${program})
  add_custom_command(
    OUTPUT ${completion}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${TUSK_GENERATED_DOCS}/completions
    COMMAND $<TARGET_FILE:${program}> --bash-completion > ${completion}
    DEPENDS ${program}
    COMMENT "bash completion for ${program}")
  list(APPEND _tusk_doc_outputs ${completion})
  install(FILES ${completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT ${component})

  if(TUSK_HELP2MAN)
    set(page ${TUSK_GENERATED_DOCS}/man1/${program}.1)
    add_custom_command(
      OUTPUT ${page} ${page}.gz
      COMMAND ${CMAKE_COMMAND} -DHELP2MAN=${TUSK_HELP2MAN} -DPROGRAM=$<TARGET_FILE:${program}> -DNAME=${program}
              "-DSUMMARY=${summary}" -DINCLUDE=${PROJECT_SOURCE_DIR}/cmake/man/${program}.h2m -DOUTPUT=${page}
              -P ${PROJECT_SOURCE_DIR}/cmake/help_to_man.cmake
      DEPENDS ${program} ${PROJECT_SOURCE_DIR}/cmake/help_to_man.cmake ${PROJECT_SOURCE_DIR}/cmake/man/${program}.h2m
      COMMENT "man page for ${program}")
    list(APPEND _tusk_doc_outputs ${page})
    install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
  endif()
endforeach()
# tusk-profile(5): the profile reference, docs/profile.md, as a man page (no help2man needed).
# tests/controller/profile/profile_reference_test.cpp holds that page to the keys the loader reads.
find_program(TUSK_AWK NAMES awk mawk gawk REQUIRED)
set(profile_page ${TUSK_GENERATED_DOCS}/man5/tusk-profile.5)
add_custom_command(
  OUTPUT ${profile_page} ${profile_page}.gz
  COMMAND ${CMAKE_COMMAND} -DAWK=${TUSK_AWK} -DSCRIPT=${PROJECT_SOURCE_DIR}/cmake/markdown_to_man.awk
          -DINPUT=${PROJECT_SOURCE_DIR}/docs/profile.md -DOUTPUT=${profile_page} -DNAME=tusk-profile -DSECTION=5
          "-DSUMMARY=the profile file of tusk-controller: agents, safety caps, tests, methods and thresholds"
          -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/markdown_to_man.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/docs/profile.md ${PROJECT_SOURCE_DIR}/cmake/markdown_to_man.awk
          ${PROJECT_SOURCE_DIR}/cmake/markdown_to_man.cmake
  COMMENT "man page tusk-profile(5) from docs/profile.md")
list(APPEND _tusk_doc_outputs ${profile_page})
install(FILES ${profile_page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man5 COMPONENT controller)

add_custom_target(tusk-docs ALL DEPENDS ${_tusk_doc_outputs})
