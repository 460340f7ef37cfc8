#include "controller/run/control_plane.hpp"

#include <spdlog/spdlog.h>

namespace tusk {

ControlPlane::ControlPlane(const ControlPlaneOptions& options, AgentRegistry::Listener listener) {
  AgentRegistry::Options registry_options;
  registry_options.listen = options.listen;
  registry_options.lease = options.lease;
  registry_options.agent_nodes = options.agent_nodes;
  if (options.insecure) {
    spdlog::warn("--insecure: agents are not authenticated and the control plane is plaintext");
  } else {
    tls_.emplace(make_tls_context(options.tls, TlsRole::Controller));
    registry_options.tls = &*tls_;
  }
  registry_ = std::make_unique<AgentRegistry>(io_, registry_options, std::move(listener));
  registry_->start();
  io_thread_ = std::thread([this] { io_.run(); });
}

ControlPlane::~ControlPlane() {
  registry_->stop();
  // Let the last Stop messages and the goodbyes leave before the loop ends.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  io_.stop();
  io_thread_.join();
}

}  // namespace tusk
