#include "agent/engine_reaper.hpp"

#include <spdlog/spdlog.h>

namespace tusk {

EngineReaper::EngineReaper(std::chrono::milliseconds slow, SlowRelease on_slow)
    : slow_(slow), on_slow_(std::move(on_slow)), thread_([this] { run(); }) {}

EngineReaper::~EngineReaper() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void EngineReaper::retire(std::unique_ptr<Engine> engine, RetiredTest test) {
  if (!engine) return;
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(std::move(engine), std::move(test));
  }
  wake_.notify_one();
}

std::size_t EngineReaper::unreleased() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + releasing_;
}

void EngineReaper::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) return;  // closing, and every engine given back
    auto [engine, test] = std::move(queue_.front());
    queue_.pop_front();
    releasing_ = 1;
    lock.unlock();
    const auto began = std::chrono::steady_clock::now();
    engine->release();
    engine.reset();
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began);
    if (took >= slow_) {
      spdlog::warn("test {}'s {} engine took {} ms to give its resources back to the kernel", test.test_index,
                   test.engine, took.count());
      if (on_slow_) on_slow_(test, took);
    }
    lock.lock();
    releasing_ = 0;
  }
}

}  // namespace tusk
