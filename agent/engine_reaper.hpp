// Gives a finished test's engine back to the kernel on a thread of its own, one engine after
// another. Destroying a soft-RoCE QP waits in the kernel until every packet it sent has been freed
// (Debian 6.1.192's rdma_rxe waits up to 12,500 jiffies, 50 s, for each object): done on the io
// thread, an agent with a QP stuck that way sent no heartbeat for 20 s and its controller counted
// it lost. The io thread hands the engine over and goes on answering.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "agent/engine.hpp"

namespace tusk {

// Which test a retired engine ran, for the report of a slow release.
struct RetiredTest {
  std::string run_id;
  int test_index = -1;
  std::string engine;
};

class EngineReaper {
 public:
  // Told, on the reaper's thread, of each release that took `slow` or longer.
  using SlowRelease = std::function<void(const RetiredTest& test, std::chrono::milliseconds took)>;

  EngineReaper(std::chrono::milliseconds slow, SlowRelease on_slow);
  // Waits for every engine handed over: the agent does not exit holding a device's resources.
  ~EngineReaper();
  EngineReaper(const EngineReaper&) = delete;
  EngineReaper& operator=(const EngineReaper&) = delete;

  // Takes an engine whose traffic has stopped; its release() and destructor run on the reaper's thread.
  void retire(std::unique_ptr<Engine> engine, RetiredTest test);
  // Engines handed over and not yet given back (the one being released included).
  std::size_t unreleased() const;

 private:
  void run();

  const std::chrono::milliseconds slow_;
  const SlowRelease on_slow_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<std::unique_ptr<Engine>, RetiredTest>> queue_;
  std::size_t releasing_ = 0;
  bool closing_ = false;
  std::thread thread_;  // last: started once everything it reads exists
};

}  // namespace tusk
