// The controller's network side as one owned thing: TLS context, agent registry and the io
// thread that runs it. Built listening; destroyed after telling agents goodbye.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "common/endpoint.hpp"
#include "common/tls.hpp"
#include "controller/run/agent_registry.hpp"

namespace tusk {

struct ControlPlaneOptions {
  HostPort listen{"0.0.0.0", 7420};
  bool insecure = false;
  TlsFiles tls;
  std::chrono::milliseconds lease{3000};
  std::map<std::string, std::string> agent_nodes;  // --agent-nodes: agent -> node
};

class ControlPlane {
 public:
  // Throws TlsError or std::runtime_error (address in use) before anything listens.
  ControlPlane(const ControlPlaneOptions& options, AgentRegistry::Listener listener);
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  AgentRegistry& registry() { return *registry_; }

 private:
  boost::asio::io_context io_;
  std::optional<boost::asio::ssl::context> tls_;
  std::unique_ptr<AgentRegistry> registry_;
  std::thread io_thread_;
};

}  // namespace tusk
