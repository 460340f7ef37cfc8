// `tusk-controller run`: its options, and a profile run on its agents to its reports, metrics,
// history and actions.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/command_flags.hpp"
#include "controller/history/history_commands.hpp"
#include "controller/metrics/metrics_endpoint.hpp"

namespace tusk {

struct RunFlags {
  std::string out;
  std::string checkpoint = "1m";
  std::string wait;
  std::string topology;
  std::string agent_nodes;
  std::string snmp_credentials;
  std::string snmp_settle = "5s";
  std::string snmp_interval = "60s";
  std::string snmp_timeout;  // empty, or no retries: SnmpTarget's defaults
  std::optional<int> snmp_retries;
  std::string only_through;
  std::string from_report;
  std::string only_failing;
  std::string resume;  // RUN_DIR: go on with the schedule of the run there (run_resume.hpp)
  RunHistoryFlags history;
  bool no_progress = false;
  std::string metrics_listen;
  std::string metrics_linger = "0s";
  MetricsSecurity metrics_security;
  bool metrics_tls = false;
};

int command_run(const std::string& file, ControlPlaneFlags& control, const RunFlags& flags);
// `run`'s options, the longest list of any command.
CLI::App* add_run_command(CLI::App& app, std::string& file, RunFlags& flags, ControlPlaneFlags& control);

}  // namespace tusk
