// The optics and FEC counters of the ports a test uses, read with ethtool as the test starts and as
// it ends, for TestResult.optics: the FEC counters and received bytes at both ends (a BER needs the
// errors and the bits between two readings), the module's diagnostics once, at the end, when it has
// carried the test's traffic. A long test is also read every interval (Plan.optics_interval_ms),
// each reading over the interval since the last, for OpticsSample: when a port went bad. ethtool reads a module over a
// slow I2C bus (tens of milliseconds a page) and may hang on a wedged driver: each call has a deadline, and the agent
// runs these off its io thread. One object per test; not shared between threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/optics/kernel_port.hpp"
#include "tusk.pb.h"

namespace tusk::optics {

struct EthtoolSource {
  std::string program = "ethtool";
  std::chrono::milliseconds timeout{3000};  // each call; a module dump takes well under a second
  std::filesystem::path sysfs_root = "/sys";
};

class PortOpticsReading {
 public:
  // Reads each port's FEC counters and received bytes now. Never throws for what ethtool or sysfs
  // say: what could not be read is a note of the port.
  PortOpticsReading(EthtoolSource source, std::vector<KernelPort> ports);

  // Reads each port's module diagnostics and FEC counters now: the interval since the last one
  // (or the start).
  std::vector<proto::PortOptics> interval();

  struct Finished {
    std::vector<proto::PortOptics> whole;          // from the start to now
    std::vector<proto::PortOptics> last_interval;  // since the last interval(); none if there was none
  };
  // Reads each port's module diagnostics and FEC counters again, and what it received since.
  Finished finish();

 private:
  // One port's counters at one moment; the note says what could not be read.
  struct Counters {
    std::optional<proto::FecStats> fec;
    std::optional<std::uint64_t> rx_bytes;
    std::chrono::steady_clock::time_point at;
    std::string note;
  };
  struct Port {
    KernelPort kernel;
    Counters start;
    std::optional<Counters> last;  // the last interval's end
  };
  Counters read_counters(const KernelPort& port) const;
  // The port over [from, to], with the module and speed read now.
  proto::PortOptics between(const KernelPort& port, const Counters& from, const Counters& to,
                            const std::optional<proto::ModuleDiagnostics>& module) const;
  // The module and the counters now, ethtool -m once.
  std::pair<Counters, std::optional<proto::ModuleDiagnostics>> read_now(const KernelPort& port) const;

  EthtoolSource source_;
  std::vector<Port> ports_;
};

}  // namespace tusk::optics
