// TEST ONLY: stands in for ethtool on a host with a QSFP28 100GBASE-SR4 module and an RS-FEC port
// whose driver counts per lane, printing what ethtool 6.1 prints for them
// (tests/agent/optics/ethtool_optics_samples.hpp): `-m DEV` the module (lane 3 receives little
// light, and the module latched its low warning); `--include-statistics --show-fec DEV` the FEC
// counters, which grow by TUSK_FAKE_ETHTOOL_CORRECTED (default 400) corrected codewords each call,
// counted in a file per device under TUSK_FAKE_ETHTOOL_STATE, the first TUSK_FAKE_ETHTOOL_CLEAN_CALLS
// (default 0) calls counting none (an optic that goes bad during a test). Anything else: as ethtool on a port
// that cannot do it. The optics end-to-end test points an agent's --ethtool at it. Never installed.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "tests/agent/optics/ethtool_optics_samples.hpp"

namespace {

// How many times the FEC counters of `device` were read before, this one counted.
unsigned long long next_call(const std::string& device) {
  const char* state = std::getenv("TUSK_FAKE_ETHTOOL_STATE");
  if (!state) return 1;
  const std::string file = std::string(state) + "/fec-calls-" + device;
  unsigned long long calls = 0;
  std::ifstream(file) >> calls;
  std::ofstream(file) << ++calls;
  return calls;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view first = argc > 1 ? argv[1] : "";
  if (argc == 3 && first == "-m") {
    std::fwrite(tusk::testing::kQsfp28Text.data(), 1, tusk::testing::kQsfp28Text.size(), stdout);
    return 0;
  }
  if (argc == 4 && first == "--include-statistics" && std::string_view(argv[2]) == "--show-fec") {
    const char* step = std::getenv("TUSK_FAKE_ETHTOOL_CORRECTED");
    const unsigned long long per_call = step ? std::strtoull(step, nullptr, 10) : 400;
    const char* clean = std::getenv("TUSK_FAKE_ETHTOOL_CLEAN_CALLS");
    const unsigned long long clean_calls = clean ? std::strtoull(clean, nullptr, 10) : 0;
    const unsigned long long call = next_call(argv[3]);
    const unsigned long long corrected = call > clean_calls ? per_call * (call - clean_calls) : 0;
    std::printf("FEC parameters for %s:\nSupported/Configured FEC encodings: Auto RS\nActive FEC encoding: RS\n",
                argv[3]);
    std::printf("Statistics:\n  corrected_blocks: %llu\n", corrected);
    for (int lane = 0; lane < 4; ++lane) std::printf("    Lane %d: %llu\n", lane, corrected / 4);
    std::printf("  uncorrectable_blocks: 0\n");
    for (int lane = 0; lane < 4; ++lane) std::printf("    Lane %d: 0\n", lane);
    return 0;
  }
  std::fputs("netlink error: Operation not supported\n", stderr);
  return 1;
}
