# TUSK_GIT_COMMIT: the commit the sources are at, for the binaries' --version line. A build from a
# tarball has no .git: pass -DTUSK_GIT_COMMIT=... or get "unknown". CMake reconfigures when HEAD
# moves, so the line never names a stale commit.
if(NOT DEFINED TUSK_GIT_COMMIT OR TUSK_GIT_COMMIT STREQUAL "" OR TUSK_GIT_COMMIT_FROM_GIT)
  set(TUSK_GIT_COMMIT "unknown")
  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD
                    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE commit
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE status)
    if(status EQUAL 0 AND NOT commit STREQUAL "")
      set(TUSK_GIT_COMMIT "${commit}")
      set(TUSK_GIT_COMMIT_FROM_GIT ON CACHE INTERNAL "TUSK_GIT_COMMIT comes from git")
      execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --git-path HEAD --symbolic-full-name HEAD
                      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE git_paths
                      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      string(REPLACE "\n" ";" git_paths "${git_paths}")
      list(GET git_paths 0 head_file)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/${head_file}")
      list(LENGTH git_paths count)
      if(count GREATER 1)
        list(GET git_paths 1 ref)
        execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --git-path "${ref}"
                        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE ref_file
                        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        if(EXISTS "${PROJECT_SOURCE_DIR}/${ref_file}")
          set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/${ref_file}")
        endif()
      endif()
    endif()
  endif()
endif()
