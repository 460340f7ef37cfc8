// Where tests and benchmarks find the source tree and the programs of this build. Defined in one
// file that cmake generates in each build directory (cmake/build_paths.cmake; link
// tusk_build_paths), so these absolute paths reach that one object only, and every other object
// compiles alike in any checkout: the compiler cache then serves a fresh clone from another's.
#pragma once

#include <string>

namespace tusk::build_paths {

std::string source_dir();      // the repository root
std::string controller_bin();  // tusk-controller
std::string agent_bin();       // tusk-agent
// Test-only programs (tests/CMakeLists.txt), defined only where the tests are built.
std::string agent_double_bin();      // tusk-agent-double
std::string lab_relay_bin();         // tusk-lab-relay
std::string lab_flap_bin();          // tusk-lab-flap
std::string lab_tcx_bin();           // tusk-lab-tcx
std::string lab_rdma_connect_bin();  // tusk-lab-rdma-connect
std::string fake_ethtool_bin();      // tusk-fake-ethtool

}  // namespace tusk::build_paths
