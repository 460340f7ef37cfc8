// What tusk-controller's commands share: the control plane's flags (run, inventory), a profile
// loaded or its errors printed, a duration flag read, and the descriptor limit raised.
#pragma once

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/endpoint.hpp"
#include "common/units.hpp"
#include "controller/profile/profile.hpp"
#include "controller/run/control_plane.hpp"

namespace tusk {

// Options every command that talks to agents shares.
struct ControlPlaneFlags {
  std::string listen = "0.0.0.0:7420";
  std::string lease = "3s";
  ControlPlaneOptions options;

  CLI::Option* listen_option = nullptr;

  void add_to(CLI::App& command) {
    listen_option =
        command
            .add_option("--listen", listen, "address to accept agents on, host:port (with --insecure: 127.0.0.1:7420)")
            ->capture_default_str();
    command.add_option("--ca", options.tls.ca_file, "CA certificate (PEM) that signs agent certificates");
    command.add_option("--cert", options.tls.cert_file, "controller certificate (PEM)");
    command.add_option("--key", options.tls.key_file, "controller private key (PEM)");
    command.add_flag("--insecure", options.insecure, "plaintext, unauthenticated control plane (labs only)");
    command.add_option("--lease", lease, "agents stop traffic after this long without hearing from us")
        ->capture_default_str();
  }

  // Throws std::invalid_argument with the flag's name.
  ControlPlaneOptions resolve() {
    ControlPlaneOptions resolved = options;
    if (!options.insecure) {
      std::vector<std::string> missing;
      if (options.tls.ca_file.empty()) missing.push_back("--ca");
      if (options.tls.cert_file.empty()) missing.push_back("--cert");
      if (options.tls.key_file.empty()) missing.push_back("--key");
      if (!missing.empty()) {
        throw std::invalid_argument(fmt::format(
            "no {} given: mutual TLS needs --ca (the CA that signs the agents' certificates), --cert and --key (the "
            "controller's own; scripts/make-certs.sh makes a lab set), or --insecure for a plaintext lab control plane",
            fmt::join(missing, ", ")));
      }
    }
    if (options.insecure &&
        !(options.tls.ca_file.empty() && options.tls.cert_file.empty() && options.tls.key_file.empty())) {
      spdlog::warn(
          "--insecure beside certificates: the control plane is plaintext and unauthenticated, and --ca, --cert and "
          "--key are not used for it; leave --insecure out for mutual TLS");
    }
    // Without TLS anyone who reaches the port can register as any agent: the default address is
    // then this host's loopback, and every address only when --listen says so, with a warning.
    const bool listen_given = listen_option != nullptr && listen_option->count() > 0;
    if (options.insecure && !listen_given) listen = "127.0.0.1:7420";
    resolved.listen = parse_host_port(listen);
    if (options.insecure && listen_given && (resolved.listen.host == "0.0.0.0" || resolved.listen.host == "::")) {
      spdlog::warn(
          "--insecure on {}: anyone who reaches this host on port {} can register as any agent and "
          "read its plan; use a lab network only",
          resolved.listen.host, resolved.listen.port);
    }
    try {
      resolved.lease = std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(lease));
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("--lease: {}", e.what()));
    }
    if (resolved.lease < std::chrono::milliseconds(300)) throw std::invalid_argument("--lease: must be at least 300ms");
    return resolved;
  }
};

std::optional<Profile> load_or_report(const std::string& path);
// A duration flag's value; its error names the flag.
std::chrono::milliseconds duration_flag(std::string_view flag, const std::string& text);
// One socket per agent: a fabric of thousands of hosts needs more descriptors than the usual
// soft limit of 1024, so take what the hard limit allows.
void raise_descriptor_limit();

}  // namespace tusk
