#include "agent/rdma/port_watch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <tuple>
#include <vector>

#include "agent/rdma/port_state.hpp"
#include "common/clock.hpp"

namespace tusk::rdma {

namespace {

constexpr int kBackstopMs = 1000;  // ports whose device sends events
constexpr int kPollMs = 10;        // ports whose device's events could not be had

std::string port_key(const std::string& device, std::uint8_t port) {
  return fmt::format("{}/{}", device, port);
}

}  // namespace

PortWatch::PortWatch(OnChange on_change, std::filesystem::path sysfs_root, bool open_events)
    : on_change_(std::move(on_change)), sysfs_root_(std::move(sysfs_root)), open_events_(open_events) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw EngineError(fmt::format("port watch: eventfd: {}", std::strerror(errno)));
  thread_ = std::thread([this] { run(); });
}

void PortWatch::watch(const std::string& device, std::uint8_t port, LinkWatch& link) {
  const std::string key = port_key(device, port);
  bool known_device = false;
  {
    std::lock_guard lock(mutex_);
    if (ports_.contains(key)) return;
    known_device = devices_.contains(device);
  }
  Device opened;
  if (!known_device && open_events_) {
    try {
      opened.context = open_device(device);
      const int flags = fcntl(opened.context->async_fd, F_GETFL);
      if (flags < 0 || fcntl(opened.context->async_fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        throw EngineError(fmt::format("RDMA device '{}': cannot make its async event queue non-blocking: {}", device,
                                      std::strerror(errno)));
      }
    } catch (const std::exception& e) {
      opened.context.reset();
      spdlog::warn("port watch: {}; its ports' state is read every {} ms instead of its events", e.what(), kPollMs);
    }
  }
  {
    std::lock_guard lock(mutex_);
    if (!known_device) devices_.try_emplace(device, std::move(opened));
    ports_.try_emplace(key, Port{device, port, &link});
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(wake_fd_, &one, sizeof one);
}

bool PortWatch::up(const std::string& device, std::uint8_t port) const {
  std::lock_guard lock(mutex_);
  const auto it = ports_.find(port_key(device, port));
  return it == ports_.end() || it->second.up;
}

std::int64_t PortWatch::last_up_ns(const std::string& device, std::uint8_t port) const {
  std::lock_guard lock(mutex_);
  const auto it = ports_.find(port_key(device, port));
  return it == ports_.end() ? 0 : it->second.last_up_ns;
}

void PortWatch::stop() noexcept {
  if (running_.exchange(false)) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_fd_, &one, sizeof one);
    if (thread_.joinable()) thread_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
}

void PortWatch::run() {
  std::chrono::steady_clock::time_point last_backstop{};
  while (running_) {
    // The devices' contexts stay until the watch goes: their descriptors may be polled unlocked.
    std::vector<pollfd> descriptors{{wake_fd_, POLLIN, 0}};
    std::vector<std::pair<std::string, ibv_context*>> sources;
    bool polled = false;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [name, device] : devices_) {
        if (!device.context) {
          polled = true;
          continue;
        }
        descriptors.push_back({device.context->async_fd, POLLIN, 0});
        sources.emplace_back(name, device.context.get());
      }
    }
    if (poll(descriptors.data(), descriptors.size(), polled ? kPollMs : kBackstopMs) < 0 && errno != EINTR) {
      spdlog::warn("port watch: poll: {}", std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
    }
    if (!running_) return;
    if (descriptors[0].revents != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const auto drained = ::read(wake_fd_, &count, sizeof count);
    }
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (descriptors[i + 1].revents != 0) take_events(sources[i].first, sources[i].second);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_backstop >= std::chrono::milliseconds(kBackstopMs)) {
      last_backstop = now;
      read_states(Reads::All);
    } else {
      read_states(Reads::NewAndPolled);
    }
  }
}

void PortWatch::read_states(Reads which) {
  std::vector<std::tuple<std::string, std::string, std::uint8_t>> due;  // key, device, port
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, port] : ports_) {
      const auto device = devices_.find(port.device);
      const bool polled = device == devices_.end() || !device->second.context;
      if (which == Reads::All || !port.read || polled) due.emplace_back(key, port.device, port.port);
    }
  }
  for (const auto& [key, device, port] : due) {
    // A port whose state cannot be read keeps the last one: never taken as down for that.
    if (const auto active = read_port_active(device, port, sysfs_root_)) note(key, *active, realtime_ns());
  }
}

void PortWatch::take_events(const std::string& device, ibv_context* context) {
  ibv_async_event event{};
  while (ibv_get_async_event(context, &event) == 0) {
    const auto type = event.event_type;
    const std::uint8_t port = type == IBV_EVENT_PORT_ERR || type == IBV_EVENT_PORT_ACTIVE
                                  ? static_cast<std::uint8_t>(event.element.port_num)
                                  : 0;
    ibv_ack_async_event(&event);
    const std::int64_t now = realtime_ns();
    if (port != 0) {
      note(port_key(device, port), type == IBV_EVENT_PORT_ACTIVE, now);
    } else if (type == IBV_EVENT_DEVICE_FATAL) {
      // The device is gone or dead: every port of it is down, and stays so (no event will say up).
      std::vector<std::string> keys;
      {
        std::lock_guard lock(mutex_);
        for (const auto& [key, watched] : ports_) {
          if (watched.device == device) keys.push_back(key);
        }
      }
      for (const auto& key : keys) note(key, false, now);
    }
  }
}

void PortWatch::note(const std::string& key, bool up, std::int64_t now_ns) {
  std::optional<LinkChange> change;
  {
    std::lock_guard lock(mutex_);
    const auto it = ports_.find(key);
    if (it == ports_.end()) return;  // an event for a port no test uses
    Port& port = it->second;
    port.read = true;
    change = port.link->on_poll(up, now_ns);
    port.up = up;
    if (change && change->up) port.last_up_ns = now_ns;
  }
  if (change) on_change_(key, *change);
}

}  // namespace tusk::rdma
