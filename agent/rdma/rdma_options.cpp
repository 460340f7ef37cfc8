#include "agent/rdma/rdma_options.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <filesystem>

#include "agent/rdma/rdma_engine.hpp"

namespace tusk::rdma {
namespace {

class RdmaOptions final : public EngineOptions {
 public:
  void add_to(CLI::App& app) override {
    app.add_option("--rdma-device", devices_,
                   "offer and use only this RDMA device, e.g. mlx5_0 (default: every device found); repeatable")
        ->group("RDMA");
  }

  std::vector<std::string> host_problems() const override {
    std::vector<std::string> problems;
    for (const auto& device : devices_) {
      std::error_code ignored;
      if (!std::filesystem::exists("/sys/class/infiniband/" + device, ignored)) {
        problems.push_back(fmt::format("--rdma-device {}: this host has no RDMA device '{}' (ibv_devices lists them)",
                                       device, device));
      }
    }
    return problems;
  }

  std::optional<std::string> unused() const override {
    if (!devices_.empty()) return std::nullopt;
    std::error_code error;
    if (std::filesystem::directory_iterator found("/sys/class/infiniband", error);
        !error && found != std::filesystem::directory_iterator()) {
      return std::nullopt;
    }
    return std::string("this host has no RDMA device (ibv_devices lists none)");
  }

  void add_engine(EngineCatalog& catalog, const EngineContext& context) override {
    add_rdma_engine(catalog, context.agent_name, context.idle_sleep_us, devices_);
  }

 private:
  std::vector<std::string> devices_;
};

}  // namespace

std::unique_ptr<EngineOptions> rdma_options() {
  return std::make_unique<RdmaOptions>();
}

}  // namespace tusk::rdma
