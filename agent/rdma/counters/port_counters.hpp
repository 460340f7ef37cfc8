// The NIC's own counters for one RDMA port, read from sysfs: everything under
// <root>/class/infiniband/<dev>/ports/<port>/counters/ (the IB port counters) and .../hw_counters/
// (the driver's), plus the device-wide <root>/class/infiniband/<dev>/hw_counters/ where the driver has
// one. Names are canonical where agent/rdma/counters/rdma_counter_names.hpp maps them and raw otherwise; values
// are scaled to the canonical unit (bytes, not 4-byte words).
//
// The engine samples once a second; a read opens, reads and closes each file and nothing else.
// A PortCounterReader is used by one thread at a time (the engine's sampling thread); the snapshot and
// delta functions are plain functions of their arguments.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tusk::rdma {

using CounterValues = std::map<std::string, std::uint64_t, std::less<>>;

struct PortCounterSnapshot {
  CounterValues values;  // canonical name where mapped, raw driver name otherwise → value in canonical units
  // IB port counters (counters/) standing at their field's maximum. The IBA makes these saturate
  // rather than wrap, so from here on their deltas read 0 however many errors happen: a saturated
  // error counter must be reported as "unknown", never as clean. Sorted.
  std::vector<std::string> saturated;
};

struct PortCounterDelta {
  CounterValues values;  // later - earlier, per name present in both snapshots
  // Names whose value went down between the two snapshots, and how the delta was read (see counter_delta):
  std::vector<std::string> wrapped;    // read as one wrap of a 32-bit counter
  std::vector<std::string> reset;      // read as a reset to zero: the delta is the later value
  std::vector<std::string> saturated;  // saturated in `later`: the delta undercounts (see PortCounterSnapshot)
  std::vector<std::string> unpaired;   // in only one of the snapshots (a file that could not be read once): no delta
};

// Per-name difference of two snapshots of the same port, `earlier` taken before `later`.
//
// Counters that go backwards are handled explicitly rather than trusted or dropped:
// - mlx5's q counters (out_of_sequence, packet_seq_err, rx_write_requests, ...) are 32 bits wide in
//   the hardware and wrap. When both values fit in 32 bits and the step across 2^32 is under 2^31
//   (less than half the range: no counter moves 2^31 in one sampling period), the delta is that step
//   and the name is listed in `wrapped`.
// - Otherwise the counter was reset (driver reload, perfquery -R, ...): whatever counted between
//   `earlier` and the reset is lost, so the delta is the later value (what counted since the reset)
//   and the name is listed in `reset`. That never invents a huge count from a reset.
// IB port counters never wrap (they saturate); `saturated` says where a delta cannot be trusted.
PortCounterDelta counter_delta(const PortCounterSnapshot& earlier, const PortCounterSnapshot& later);

class PortCounterReader {
 public:
  // Lists the counter files once (sysfs does not add counters while a device exists). Throws
  // EngineError naming the device, the port and the path when the device or the port does not exist.
  // A port without any counter directory is not an error: it gives empty snapshots and a note.
  PortCounterReader(std::string device, std::uint32_t port, std::filesystem::path sysfs_root = "/sys");

  // Reads every counter file. Never throws for a file: one that cannot be opened or read, or that
  // does not hold a number (old kernels write "N/A (no PMA)"), is left out of this snapshot, noted
  // the first time it fails, and tried again next time.
  PortCounterSnapshot read();

  // What could not be read or was skipped, one line each, at most once per file.
  const std::vector<std::string>& notes() const { return notes_; }
  const std::string& device() const { return device_; }
  std::uint32_t port() const { return port_; }
  // How many counter files each read() opens.
  std::size_t file_count() const { return files_.size(); }

 private:
  struct CounterFile {
    std::string path;   // full path, built once
    std::string label;  // e.g. "ports/1/counters/port_xmit_data", for notes
    std::string name;   // canonical or raw
    std::uint64_t scale = 1;
    std::uint64_t saturated_value = 0;  // 2^width - 1 for IB port counters of fixed width; 0: never saturates
    bool noted = false;                 // a failure was noted already
  };

  void add_directory(const std::filesystem::path& directory, const std::string& label_prefix, bool ib_port_counters,
                     bool device_wide);
  void note_once(CounterFile& file, const std::string& why);

  std::string device_;
  std::uint32_t port_ = 0;
  std::vector<CounterFile> files_;
  std::vector<std::string> notes_;
};

}  // namespace tusk::rdma
