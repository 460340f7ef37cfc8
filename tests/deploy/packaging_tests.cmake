# Deployment: the systemd unit and the Debian packages (cmake/packaging.cmake). Included from
# tests/CMakeLists.txt; CMAKE_CURRENT_SOURCE_DIR is tests/.

# `systemd-analyze verify` on the shipped unit, and the directives the packages rely on. Skips
# (77) without systemd-analyze.
add_test(NAME deploy_systemd_unit
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/systemd_unit_test.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(deploy_systemd_unit PROPERTIES
  LABELS "deploy" RUN_SERIAL ON TIMEOUT 60 SKIP_RETURN_CODE 77)

# cpack -G DEB, then apt-get install of both packages in a fresh Debian root made by mmdebstrap.
# Root only, and it needs the Debian archive; skips (77) otherwise. The script builds the targets
# named after the version first (cpack installs them without building): add any target whose
# output an install() rule ships. tusk-docs (man pages, completions) is defined after tests/, so
# it is named through $<TARGET_EXISTS>. A few minutes, most of it downloading the root.
add_test(NAME deploy_package_install
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/package_install_test.sh
                 ${CMAKE_BINARY_DIR} ${PROJECT_VERSION} tusk-agent tusk-controller
                 $<$<TARGET_EXISTS:tusk-docs>:tusk-docs>)
set_tests_properties(deploy_package_install PROPERTIES
  LABELS "deploy" TIMEOUT 1200 SKIP_RETURN_CODE 77)
