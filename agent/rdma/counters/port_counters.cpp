#include "agent/rdma/counters/port_counters.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <set>
#include <system_error>
#include <utility>

#include "agent/engine.hpp"
#include "agent/rdma/counters/rdma_counter_names.hpp"
#include "common/sysfs_name.hpp"

namespace tusk::rdma {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kTwoTo31 = std::uint64_t{1} << 31;
constexpr std::uint64_t kTwoTo32 = std::uint64_t{1} << 32;

// Sorted names of the entries of `directory` (empty when it cannot be listed), for error messages
// and for a stable file order.
std::vector<std::string> entry_names(const fs::path& directory, bool directories_only) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    const bool is_directory = it->is_directory(type_ec);
    if (directories_only && !is_directory) continue;
    if (!directories_only && is_directory) continue;
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string listed(const std::vector<std::string>& names) {
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

enum class ReadStatus { kOk, kSystemError, kNotANumber };

struct ReadResult {
  ReadStatus status = ReadStatus::kOk;
  std::uint64_t value = 0;
  int error = 0;        // errno for kSystemError
  std::string content;  // what the file held, for kNotANumber
};

// One sysfs attribute: a decimal number and a newline. Plain POSIX: no stream state, no allocation
// on the good path.
ReadResult read_counter_file(const std::string& path) {
  ReadResult result;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    result.status = ReadStatus::kSystemError;
    result.error = errno;
    return result;
  }
  char buffer[64];
  ssize_t length;
  do {
    length = ::read(fd, buffer, sizeof(buffer));
  } while (length < 0 && errno == EINTR);
  const int read_error = errno;
  ::close(fd);
  if (length < 0) {
    result.status = ReadStatus::kSystemError;
    result.error = read_error;
    return result;
  }
  const char* begin = buffer;
  const char* end = buffer + length;
  while (end > begin && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) --end;
  const auto [stop, ec] = std::from_chars(begin, end, result.value);
  if (begin == end || ec != std::errc() || stop != end) {
    result.status = ReadStatus::kNotANumber;
    result.content.assign(begin, end);
  }
  return result;
}

std::uint64_t scaled(std::uint64_t raw, std::uint64_t scale) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(raw, scale, &out)) return std::numeric_limits<std::uint64_t>::max();
  return out;
}

}  // namespace

PortCounterDelta counter_delta(const PortCounterSnapshot& earlier, const PortCounterSnapshot& later) {
  PortCounterDelta delta;
  for (const auto& [name, now] : later.values) {
    const auto before_it = earlier.values.find(name);
    if (before_it == earlier.values.end()) {
      delta.unpaired.push_back(name);
      continue;
    }
    const std::uint64_t before = before_it->second;
    if (now >= before) {
      delta.values.emplace(name, now - before);
    } else if (before < kTwoTo32 && now < kTwoTo32 && (kTwoTo32 - before) + now < kTwoTo31) {
      delta.values.emplace(name, (kTwoTo32 - before) + now);
      delta.wrapped.push_back(name);
    } else {
      delta.values.emplace(name, now);
      delta.reset.push_back(name);
    }
  }
  for (const auto& [name, value] : earlier.values) {
    if (!later.values.contains(name)) delta.unpaired.push_back(name);
  }
  std::sort(delta.unpaired.begin(), delta.unpaired.end());
  for (const auto& name : later.saturated) {
    if (delta.values.contains(name)) delta.saturated.push_back(name);
  }
  return delta;
}

PortCounterReader::PortCounterReader(std::string device, std::uint32_t port, fs::path sysfs_root)
    : device_(std::move(device)), port_(port) {
  const fs::path class_dir = sysfs_root / "class" / "infiniband";
  const fs::path device_dir = class_dir / device_;
  const fs::path port_dir = device_dir / "ports" / std::to_string(port_);
  std::error_code ec;
  if (!is_one_path_component(device_) || !fs::is_directory(device_dir, ec)) {
    throw EngineError(fmt::format("RDMA device '{}' port {}: {} does not exist (RDMA devices under {}: {})", device_,
                                  port_, device_dir.string(), class_dir.string(),
                                  listed(entry_names(class_dir, true))));
  }
  if (!fs::is_directory(port_dir, ec)) {
    throw EngineError(fmt::format("RDMA device '{}' has no port {}: {} does not exist (its ports: {})", device_, port_,
                                  port_dir.string(), listed(entry_names(device_dir / "ports", true))));
  }
  const std::string port_label = fmt::format("ports/{}/", port_);
  // Order sets precedence when two files give the same name: the IB port counters, then the port's
  // driver counters, then the device-wide ones (which, on a multi-port device, cover every port).
  add_directory(port_dir / "counters", port_label + "counters/", true, false);
  add_directory(port_dir / "hw_counters", port_label + "hw_counters/", false, false);
  add_directory(device_dir / "hw_counters", "hw_counters/", false, true);
  if (files_.empty()) {
    notes_.push_back(fmt::format("{} port {}: no counters under {} (no counters/ or hw_counters/)", device_, port_,
                                 port_dir.string()));
  }
}

void PortCounterReader::add_directory(const fs::path& directory, const std::string& label_prefix, bool ib_port_counters,
                                      bool device_wide) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return;  // drivers without hw stats, or without a PMA (rxe): normal
  std::set<std::string, std::less<>> taken;
  for (const auto& file : files_) taken.insert(file.name);
  for (const auto& file_name : entry_names(directory, false)) {
    // hw_counters/lifespan is the kernel's cache time for the group in ms, not a counter.
    if (!ib_port_counters && file_name == "lifespan") continue;
    CounterFile file;
    file.path = (directory / file_name).string();
    file.label = label_prefix + file_name;
    file.name = file_name;
    if (const auto* entry = counters::rdma::find_driver_counter(file_name)) {
      file.name = std::string(entry->canonical);
      file.scale = entry->scale;
      // The PMA widths apply only to the IB port counters; rxe's hw_counters/link_downed is 64-bit.
      if (ib_port_counters && entry->pma_width_bits > 0 && entry->pma_width_bits < 64) {
        file.saturated_value = (std::uint64_t{1} << entry->pma_width_bits) - 1;
      }
    }
    if (taken.contains(file.name)) {
      // The device-wide group repeats the port's names on single-port devices: expected, not noted.
      if (!device_wide) {
        notes_.push_back(fmt::format("{} port {}: {} also gives '{}'; the first source is kept", device_, port_,
                                     file.label, file.name));
      }
      continue;
    }
    taken.insert(file.name);
    files_.push_back(std::move(file));
  }
}

void PortCounterReader::note_once(CounterFile& file, const std::string& why) {
  if (file.noted) return;
  file.noted = true;
  notes_.push_back(fmt::format("{} port {}: {} left out: {}", device_, port_, file.label, why));
}

PortCounterSnapshot PortCounterReader::read() {
  PortCounterSnapshot snapshot;
  for (auto& file : files_) {
    const ReadResult result = read_counter_file(file.path);
    switch (result.status) {
      case ReadStatus::kSystemError:
        // EINVAL / EOPNOTSUPP are how a kernel says "this counter is not supported here".
        note_once(file, fmt::format("cannot read {}: {}", file.path, std::strerror(result.error)));
        continue;
      case ReadStatus::kNotANumber:
        note_once(file, fmt::format("{} holds '{}', not a number", file.path, result.content));
        continue;
      case ReadStatus::kOk:
        break;
    }
    if (file.saturated_value != 0 && result.value >= file.saturated_value) snapshot.saturated.push_back(file.name);
    snapshot.values.emplace(file.name, scaled(result.value, file.scale));
  }
  std::sort(snapshot.saturated.begin(), snapshot.saturated.end());
  return snapshot;
}

}  // namespace tusk::rdma
