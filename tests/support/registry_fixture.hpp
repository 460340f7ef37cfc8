// TEST ONLY. A live AgentRegistry on 127.0.0.1 (plaintext, port chosen by the kernel) with a
// listener that keeps whatever it is told, for tests that talk to it through RawAgent.
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "controller/run/agent_registry.hpp"

namespace tusk::testing {

class RegistryFixture {
 public:
  // `adjust` changes the options a test is about.
  explicit RegistryFixture(const std::function<void(AgentRegistry::Options&)>& adjust = {}) {
    AgentRegistry::Options options;
    options.listen = {"127.0.0.1", 0};
    options.hello_timeout = std::chrono::milliseconds(500);
    if (adjust) adjust(options);
    AgentRegistry::Listener listener;
    listener.on_record = [this](const std::string& agent, proto::Record& record) {
      std::lock_guard lock(mutex_);
      records_.emplace_back(agent, record);
    };
    listener.on_fault = [this](const std::string& agent, const std::string& what) {
      std::lock_guard lock(mutex_);
      faults_.push_back(agent + ": " + what);
    };
    registry_ = std::make_unique<AgentRegistry>(io_, options, listener);
    registry_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~RegistryFixture() {
    registry_->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    io_.stop();
    thread_.join();
  }

  AgentRegistry& registry() { return *registry_; }
  std::uint16_t port() const { return registry_->port(); }

  std::vector<std::uint64_t> record_seqs() {
    std::lock_guard lock(mutex_);
    std::vector<std::uint64_t> seqs;
    for (const auto& [agent, record] : records_) seqs.push_back(record.seq());
    return seqs;
  }
  std::vector<std::string> faults() {
    std::lock_guard lock(mutex_);
    return faults_;
  }
  // Polls until `predicate` holds or two seconds pass.
  template <typename Predicate>
  bool eventually(Predicate predicate) {
    for (int i = 0; i < 200; ++i) {
      if (predicate()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return predicate();
  }

 private:
  boost::asio::io_context io_;
  std::unique_ptr<AgentRegistry> registry_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::pair<std::string, proto::Record>> records_;
  std::vector<std::string> faults_;
};

}  // namespace tusk::testing
