#include "tests/support/scripted_controller.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "common/connection.hpp"
#include "common/version.hpp"

namespace tusk::testing {
namespace asio = boost::asio;

struct ScriptedController::State {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  asio::ssl::context tls;
  asio::ip::tcp::acceptor acceptor{io};
  asio::steady_timer heartbeat{io};
  std::thread thread;

  mutable std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, std::shared_ptr<Connection>> agents;  // by the name their Hello gave
  std::map<std::string, std::string> closed;                  // agent name: why
  std::map<std::string, proto::Inventory> inventories;
  std::map<std::tuple<std::string, std::string, int>, proto::PlanAck> answers;

  explicit State(const TlsFiles& files) : tls(make_tls_context(files, TlsRole::Controller)) {}

  void accept() {
    acceptor.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
      if (ec) return;  // the acceptor closed
      auto connection = Connection::create(std::move(socket), &tls, Connection::Limits{});
      auto name = std::make_shared<std::string>();
      std::weak_ptr<Connection> weak = connection;
      connection->start_as_server(
          [this, weak, name](proto::Envelope& message) {
            if (auto strong = weak.lock()) on_message(strong, *name, message);
          },
          [this, name, raw = connection.get()](const std::string& reason) {
            std::lock_guard lock(mutex);
            const auto found = agents.find(*name);
            if (found == agents.end() || found->second.get() != raw) return;  // a later connection took the name
            agents.erase(found);
            closed[*name] = reason;
            changed.notify_all();
          });
      accept();
    });
  }

  void on_message(const std::shared_ptr<Connection>& connection, std::string& name, proto::Envelope& message) {
    switch (message.body_case()) {
      case proto::Envelope::kHello: {
        proto::Envelope reply;
        auto* ack = reply.mutable_hello_ack();
        ack->set_protocol_version(kProtocolVersion);
        ack->set_controller_name("scripted");
        ack->set_lease_ms(10'000);
        ack->set_heartbeat_interval_ms(500);
        connection->send(reply);
        std::lock_guard lock(mutex);
        name = message.hello().agent_name();
        agents[name] = connection;
        inventories[name] = message.hello().inventory();
        closed.erase(name);
        changed.notify_all();
        break;
      }
      case proto::Envelope::kRecords: {
        std::uint64_t last = 0;
        for (const auto& record : message.records().records()) last = std::max(last, record.seq());
        proto::Envelope reply;
        reply.mutable_record_ack()->set_acked_through(last);
        connection->send(reply);
        break;
      }
      case proto::Envelope::kPlanAck: {
        std::lock_guard lock(mutex);
        const auto& ack = message.plan_ack();
        answers[{name, ack.run_id(), ack.test_index()}] = ack;
        changed.notify_all();
        break;
      }
      default:
        break;
    }
  }

  void beat() {
    heartbeat.expires_after(std::chrono::milliseconds(250));
    heartbeat.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      proto::Envelope message;
      message.mutable_heartbeat()->set_sender_time_ns(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count());
      std::vector<std::shared_ptr<Connection>> open;
      {
        std::lock_guard lock(mutex);
        for (const auto& [name, connection] : agents) open.push_back(connection);
      }
      for (const auto& connection : open) connection->send(message);
      beat();
    });
  }

  // Runs `send` on the io thread with the agent's connection, if it is connected.
  void to_agent(const std::string& name, const proto::Envelope& message) {
    asio::post(io, [this, name, message] {
      std::shared_ptr<Connection> connection;
      {
        std::lock_guard lock(mutex);
        const auto found = agents.find(name);
        if (found != agents.end()) connection = found->second;
      }
      if (connection) connection->send(message);
    });
  }
};

ScriptedController::ScriptedController(std::uint16_t port, const TlsFiles& tls) : state_(std::make_unique<State>(tls)) {
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  state_->acceptor.open(endpoint.protocol());
  state_->acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  state_->acceptor.bind(endpoint);
  state_->acceptor.listen();
  state_->accept();
  state_->beat();
  state_->thread = std::thread([state = state_.get()] { state->io.run(); });
}

ScriptedController::~ScriptedController() {
  asio::post(state_->io, [state = state_.get()] {
    boost::system::error_code ignored;
    state->acceptor.close(ignored);
    state->heartbeat.cancel();
    std::lock_guard lock(state->mutex);
    for (const auto& [name, connection] : state->agents) connection->close("scripted controller done");
  });
  state_->work.reset();
  // Closing connections finish on the io thread; stop it once they had their turn.
  asio::post(state_->io, [state = state_.get()] { state->io.stop(); });
  state_->thread.join();
}

bool ScriptedController::wait_for_agents(const std::vector<std::string>& names, std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  return state_->changed.wait_for(lock, timeout, [&] {
    for (const auto& name : names) {
      if (!state_->agents.count(name)) return false;
    }
    return true;
  });
}

void ScriptedController::send_plan(const std::string& name, const proto::Plan& plan) {
  proto::Envelope message;
  *message.mutable_plan() = plan;
  state_->to_agent(name, message);
}

std::optional<proto::PlanAck> ScriptedController::answer(const std::string& name, const std::string& run_id,
                                                         int test_index, std::chrono::milliseconds timeout) {
  const auto key = std::make_tuple(name, run_id, test_index);
  std::unique_lock lock(state_->mutex);
  if (!state_->changed.wait_for(lock, timeout, [&] { return state_->answers.count(key) > 0; })) return std::nullopt;
  return state_->answers.at(key);
}

void ScriptedController::send_stop(const std::string& name, const std::string& run_id, int test_index) {
  proto::Envelope message;
  auto* stop = message.mutable_stop();
  stop->set_run_id(run_id);
  stop->set_test_index(test_index);
  stop->set_reason("the scripted controller's test is over");
  state_->to_agent(name, message);
}

bool ScriptedController::connected(const std::string& name) const {
  std::lock_guard lock(state_->mutex);
  return state_->agents.count(name) > 0;
}

proto::Inventory ScriptedController::inventory(const std::string& name) const {
  std::lock_guard lock(state_->mutex);
  const auto found = state_->inventories.find(name);
  return found == state_->inventories.end() ? proto::Inventory() : found->second;
}

std::string ScriptedController::closed_reason(const std::string& name) const {
  std::lock_guard lock(state_->mutex);
  const auto found = state_->closed.find(name);
  return found == state_->closed.end() ? "" : found->second;
}

}  // namespace tusk::testing
