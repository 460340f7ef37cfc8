# Cluster deployment (included from tests/CMakeLists.txt, after its helpers).

# deploy/kubernetes/ read as a reviewer would (no cluster needed), and the profile and agent
# config it embeds through the real `tusk-controller validate` and `tusk-agent --check-config`.
tusk_add_test(kubernetes_manifests_test
  SOURCES deploy/kubernetes_manifests_test.cpp e2e/process.cpp
  LIBS tusk_common yaml-cpp
  LABELS deploy)
target_link_libraries(kubernetes_manifests_test PRIVATE tusk_build_paths)
add_dependencies(kubernetes_manifests_test tusk-controller tusk-agent)

# deploy/slurm/tusk-burn-in.sbatch through a real single-node Slurm (slurmctld, slurmd and munged
# started by the test, in a temporary directory): root and Debian's slurm-wlm and munge only,
# skips (77) otherwise. The binaries are the default target's; their directories go first in PATH.
add_test(NAME slurm_sbatch
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/slurm_test.sh
          $<TARGET_FILE_DIR:tusk-agent> $<TARGET_FILE_DIR:tusk-controller>)
set_tests_properties(slurm_sbatch PROPERTIES
  LABELS "deploy" TIMEOUT 600 SKIP_RETURN_CODE 77)
