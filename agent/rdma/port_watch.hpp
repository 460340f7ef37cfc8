// The state of every RDMA port a test uses, watched on a thread of its own, so that a down and an
// up are timed when they happen, whatever the CM thread is busy with (a reconnect's buffers and
// QPs take it hundreds of milliseconds on a slow host).
//
// The driver's port events (IBV_EVENT_PORT_ERR and IBV_EVENT_PORT_ACTIVE on the device's async
// event queue, through a device context of the watch's own) say it; the port's state is read
// once when a port is first watched and then only every second, as a backstop. Reading it in a
// loop is what not to do: on rxe each read takes the kernel's RTNL lock and logs a warning, on a
// NIC it is a firmware command. A device whose events cannot be had (it cannot be opened) has its
// ports' state read every 10 ms instead.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "agent/link_watch.hpp"
#include "agent/rdma/verbs_owners.hpp"

namespace tusk::rdma {

class PortWatch {
 public:
  // Called on the watch's thread, once per change, with the port's "device/port" key.
  using OnChange = std::function<void(const std::string& key, const LinkChange& change)>;

  // sysfs_root: where the ports' state is read (tests point it elsewhere). open_events: whether
  // to open the devices for their events (false: the ports' state is polled).
  explicit PortWatch(OnChange on_change, std::filesystem::path sysfs_root = "/sys", bool open_events = true);
  ~PortWatch() { stop(); }
  PortWatch(const PortWatch&) = delete;
  PortWatch& operator=(const PortWatch&) = delete;

  // Watches `device` port `port` from now on (a port watched already: nothing), its changes kept
  // in `link`, which must outlive the watch; the watch's thread reads its state at once. Any thread.
  void watch(const std::string& device, std::uint8_t port, LinkWatch& link);
  // The port's state as last seen: up when it is not watched or its state was never read.
  bool up(const std::string& device, std::uint8_t port) const;
  // When the port last came up after being down; 0 when it never went down. Any thread.
  std::int64_t last_up_ns(const std::string& device, std::uint8_t port) const;
  // Joins the thread; no change is reported after it returns.
  void stop() noexcept;

 private:
  struct Port {
    std::string device;
    std::uint8_t port = 0;
    LinkWatch* link = nullptr;
    bool read = false;  // its state was read once (the first read is its state at the start)
    bool up = true;
    std::int64_t last_up_ns = 0;
  };
  struct Device {
    DeviceContext context;  // null: its events could not be had, its ports are polled
  };

  void run();
  // On the watch's thread: read the ports' state (every port, or those never read and those of
  // the devices without events), and take the events a device has queued.
  enum class Reads { All, NewAndPolled };
  void read_states(Reads which);
  void take_events(const std::string& device, ibv_context* context);
  void note(const std::string& key, bool up, std::int64_t now_ns);

  OnChange on_change_;
  std::filesystem::path sysfs_root_;
  bool open_events_;
  mutable std::mutex mutex_;           // guards ports_ and devices_ (the maps; a port's LinkWatch is the thread's)
  std::map<std::string, Port> ports_;  // "device/port"
  std::map<std::string, Device> devices_;
  int wake_fd_ = -1;  // an eventfd: a new device to poll, or stop
  std::atomic<bool> running_{true};
  std::thread thread_;
};

}  // namespace tusk::rdma
