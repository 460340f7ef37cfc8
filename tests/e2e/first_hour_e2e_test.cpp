// A first hour with Tusk, as a new user spends it: the answers the controller gives when a run is
// interrupted or its report directory is used again. Real tusk-controller and agent processes
// (the engine double) over TLS on 127.0.0.1.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "tests/e2e/control_plane_fixture.hpp"

namespace tusk::testing {
namespace {

using namespace std::chrono_literals;

class FirstHourE2E : public ControlPlaneE2E {};

// Before: Ctrl-C 1.5 s into `--wait 20s` said "agents missing after 20 s (exit 3)", and the
// history kept it so; the interrupt was not mentioned.
TEST_F(FirstHourE2E, CtrlCWhileWaitingForAgentsSaysInterruptedWhenAndWhoWasMissing) {
  auto controller = start_controller(write_profile("5s"), "report", {"--wait", "20s"});
  auto agent = start_agent("lab-a", port_);
  ASSERT_TRUE(wait_for_text(controller->log_path(), "agent 'lab-a' registered", 15s)) << controller->log();
  controller->signal(SIGINT);
  const auto exit_code = controller->wait(15s);
  ASSERT_TRUE(exit_code.has_value()) << controller->log();
  EXPECT_EQ(*exit_code, 128 + SIGINT) << controller->log();
  const json report = read_report("report");
  const std::string conclusion = report["conclusion"];
  EXPECT_EQ(conclusion.rfind("interrupted by SIGINT ", 0), 0u) << conclusion;
  EXPECT_NE(conclusion.find("into the run, while waiting for agents (1 connected;"), std::string::npos) << conclusion;
  EXPECT_NE(conclusion.find("lab-b"), std::string::npos) << "the missing agent is named: " << conclusion;
  EXPECT_EQ(conclusion.find("after 20 s"), std::string::npos) << conclusion;
  ASSERT_TRUE(report.contains("interrupted")) << report.dump(2);
  EXPECT_LE(report["started"].get<std::string>(), report["interrupted"].get<std::string>());
  EXPECT_LE(report["interrupted"].get<std::string>(), report["finished"].get<std::string>());
  EXPECT_NE(controller->log().find("result: " + conclusion + " (exit 130)"), std::string::npos) << controller->log();
}

TEST_F(FirstHourE2E, SigtermDuringATestSaysWhichTestItInterruptedAndNeverReadsAsAPass) {
  auto controller = start_controller(write_profile("60s"), "report");
  auto a = start_agent("lab-a", port_);
  auto b = start_agent("lab-b", port_);
  ASSERT_TRUE(wait_for_text(controller->log_path(), "test 0 'double-pairs'", 20s)) << controller->log();
  std::this_thread::sleep_for(2s);
  controller->signal(SIGTERM);
  const auto exit_code = controller->wait(30s);
  ASSERT_TRUE(exit_code.has_value()) << controller->log();
  EXPECT_EQ(*exit_code, 128 + SIGTERM) << controller->log();
  const json report = read_report("report");
  const std::string conclusion = report["conclusion"];
  EXPECT_EQ(conclusion.rfind("interrupted by SIGTERM ", 0), 0u) << conclusion;
  EXPECT_NE(conclusion.find("during test 0 'double-pairs'"), std::string::npos) << conclusion;
}

// Before: the second run replaced the first run's report.json, junit.xml and report.html.
TEST_F(FirstHourE2E, ASecondRunIntoTheSameDirectoryIsRefusedAndTheFirstReportStays) {
  const std::string profile = write_profile("1s");
  {
    auto controller = start_controller(profile, "report");
    auto a = start_agent("lab-a", port_);
    auto b = start_agent("lab-b", port_);
    ASSERT_EQ(controller->wait(60s).value_or(-1), 0) << controller->log();
  }
  const std::string first = read_file(dir_ + "/report/report.json");
  const json report = json::parse(first);
  auto again = start_controller(profile, "report");
  const auto exit_code = again->wait(15s);
  ASSERT_TRUE(exit_code.has_value()) << again->log();
  EXPECT_EQ(*exit_code, 2) << again->log();
  EXPECT_NE(again->log().find("already holds run " + report["run_id"].get<std::string>() + "'s report"),
            std::string::npos)
      << again->log();
  EXPECT_NE(again->log().find("nothing was started"), std::string::npos) << again->log();
  EXPECT_EQ(read_file(dir_ + "/report/report.json"), first);
}

// The page's shell block that holds `containing`, as written (between its ```sh and ```).
std::string page_block(const std::string& page, const std::string& containing) {
  const auto at = page.find(containing);
  if (at == std::string::npos) return "";
  const auto start = page.rfind("```sh\n", at);
  const auto end = page.find("```", at);
  if (start == std::string::npos || end == std::string::npos) return "";
  std::string block = page.substr(start + 6, end - start - 6);
  while (!block.empty() && block.back() == '\n') block.pop_back();
  return block;
}

// `text` with every `from` replaced by `to`; fails the test when `from` is not there (the page changed).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' is not in:\n" << text;
  for (auto found = at; found != std::string::npos; found = text.find(from, found + to.size())) {
    text.replace(found, from.size(), to);
  }
  return text;
}

// Issue 57, before: the page failed at its last step as written (the template's 100 Gbit/s cap under
// the 400G profile: every agent refused it, exit 2), its `grep | paste` made agents named `#` and
// `PSU` of a hosts file with a comment after a name, and this test wrote its own configurations.
// Now it runs the page's own blocks, read from docs/real-cluster.md, in its order, with the shipped
// template and starter profile, and changes only what one machine must: the four hosts share it (so
// each agent is started with --name, and /etc/tusk is a folder per host under the scratch
// directory, as `install` and the copy of the certificates would fill it), the controller's address
// is 127.0.0.1 and the starter profile's minutes are seconds.
TEST_F(FirstHourE2E, TheRealClusterPageWalksFromAHostListToAReadReport) {
  const std::string source = tusk::build_paths::source_dir();
  const std::string page = read_file(source + "/docs/real-cluster.md");
  const auto shell = [&](const std::string& script, const std::string& log) {
    Process bash({"/bin/bash", "-c", "set -euo pipefail; cd '" + dir_ + "'\n" + script}, dir_ + "/" + log);
    const auto status = bash.wait(120s);
    return std::pair{status.value_or(-1), bash.log()};
  };
  // 1. The host list, as the page writes it (a comment after a name included).
  const std::string hosts_block = page_block(page, "cat > hosts.txt");
  ASSERT_NE(hosts_block.find("  # spare PSU"), std::string::npos) << hosts_block;
  ASSERT_EQ(shell(hosts_block, "hosts.log").first, 0);
  const std::vector<std::string> hosts{"rack1-gpu01", "rack1-gpu02", "rack1-gpu03", "rack1-gpu04"};
  // 2. Certificates.
  const std::string certs_block = page_block(page, "make-certs.sh certs --hosts hosts.txt");
  {
    const auto [status, log] = shell(replaced(certs_block, "scripts/", source + "/scripts/"), "make-certs.log");
    ASSERT_EQ(status, 0) << log;
  }
  // 3. Each host's /etc/tusk: the certificates where the page copies them, the shipped template
  // with the page's two edits, then --check-config as the page runs it.
  ASSERT_NE(page.find("Copy `ca.pem`, `<host>.pem` and `<host>.key` to each host as `/etc/tusk/tls/ca.pem`,\n"
                      "`/etc/tusk/tls/agent.pem` and `/etc/tusk/tls/agent.key`."),
            std::string::npos);
  ASSERT_NE(page.find("- `controller:` the controller's address"), std::string::npos);
  ASSERT_NE(page.find("- `max_rate:` under `limits:`, the NIC's line rate"), std::string::npos);
  const std::string config_block = page_block(page, "--check-config");
  std::string template_text = read_file(source + "/deploy/config/agent.yaml");
  template_text = replaced(template_text, "controller: tusk-controller.example.net:7420",
                           "controller: 127.0.0.1:" + std::to_string(port_));
  template_text = replaced(template_text, "  max_rate: 400Gbps", "  max_rate: 400Gbps");  // a ConnectX-7's
  for (const auto& host : hosts) {
    const std::string root = dir_ + "/" + host;  // this host's /
    fs::create_directories(root + "/etc/tusk/tls");
    for (const auto& [from, to] :
         {std::pair{std::string("ca.pem"), std::string("ca.pem")}, std::pair{host + ".pem", std::string("agent.pem")},
          std::pair{host + ".key", std::string("agent.key")}}) {
      fs::copy_file(dir_ + "/certs/" + from, root + "/etc/tusk/tls/" + to);
    }
    std::ofstream(dir_ + "/agent.yaml") << replaced(template_text, "/etc/tusk/", root + "/etc/tusk/");
    std::string script = replaced(config_block, "sudo ", "");
    script = replaced(script, "/etc/tusk/", root + "/etc/tusk/");
    script = replaced(script, "tusk-agent --config", tusk::build_paths::agent_bin() + " --config");
    const auto [status, log] = shell(script + " --name " + host, "check-" + host + ".log");
    // The template names no DPDK port, so an agent here tests the host's RDMA devices; this lab
    // machine has none, which --check-config says (exit 1). The agent doubles below run anyway.
    std::error_code no_rdma;
    const bool has_rdma =
        fs::directory_iterator("/sys/class/infiniband", no_rdma) != fs::directory_iterator() && !no_rdma;
    if (has_rdma) {
      ASSERT_EQ(status, 0) << script << "\n" << log;
    } else {
      ASSERT_EQ(status, 1) << script << "\n" << log;
      EXPECT_NE(log.find("agent.yaml: valid, but this host can run no test"), std::string::npos) << log;
    }
  }
  // 4. Agents (the page's systemctl starts the packaged agent; here the double, on its config).
  std::vector<std::unique_ptr<Process>> agents;
  for (const auto& host : hosts) {
    agents.push_back(
        std::make_unique<Process>(std::vector<std::string>{tusk::build_paths::agent_double_bin(), "--config",
                                                           dir_ + "/" + host + "/etc/tusk/agent.yaml", "--name", host},
                                  dir_ + "/agent-" + host + ".log"));
  }
  const auto controller_script = [&](const std::string& block) {
    std::string script = replaced(block, "tusk-controller ", tusk::build_paths::controller_bin() + " ");
    return script;
  };
  const std::string listen = " --listen 127.0.0.1:" + std::to_string(port_);
  // 5. Who is there: four hosts here, not 32; each agent's limits shown.
  {
    std::string script = controller_script(page_block(page, "tusk-controller inventory --expect 32"));
    script = replaced(script, "--expect 32", "--expect 4 --wait 30s" + listen);
    const auto [status, log] = shell(script, "inventory.log");
    ASSERT_EQ(status, 0) << log;
    for (const auto& host : hosts) EXPECT_NE(log.find(host), std::string::npos) << log;
    EXPECT_NE(log.find("limits: rate 400 Gbit/s, duration 24 h"), std::string::npos) << log;
  }
  // 6. The burn-in: the starter profile as shipped, its minutes cut to seconds.
  std::string profile = read_file(source + "/profiles/rack-starter-400g.yaml");
  for (const auto& [from, to] : {std::pair{"duration: 2m", "duration: 3s"}, std::pair{"duration: 10m", "duration: 3s"},
                                 std::pair{"sample_interval: 5s", "sample_interval: 1s"}}) {
    profile = replaced(profile, from, to);
  }
  const std::string profile_path = write_profile_text(profile);
  const std::string burn_in = page_block(page, "tusk-controller plan profiles/rack-starter-400g.yaml");
  const auto plan_line = burn_in.substr(0, burn_in.find('\n'));
  {
    std::string script = replaced(controller_script(plan_line), "profiles/rack-starter-400g.yaml", profile_path);
    const auto [status, log] = shell(script, "plan.log");
    ASSERT_EQ(status, 0) << script << "\n" << log;
    EXPECT_NE(log.find("per agent, shared by its"), std::string::npos) << log;
    EXPECT_NE(log.find("4 agent(s): rack1-gpu01, rack1-gpu02, rack1-gpu03, rack1-gpu04\n"), std::string::npos)
        << "the hosts file's names, its comments left out: " << log;
  }
  {
    std::string script = replaced(controller_script(burn_in.substr(plan_line.size() + 1)),
                                  "profiles/rack-starter-400g.yaml", profile_path);
    script = replaced(script, "--out reports/rack1-burn-in-1",
                      "--out reports/rack1-burn-in-1 --no-progress --no-history" + listen);
    const auto [status, log] = shell(script, "run.log");
    // The doubles move no real traffic: the 375 Gb/s floor may fail them; no agent refuses a plan.
    EXPECT_TRUE(status == 0 || status == 1) << script << "\n" << log;
    EXPECT_EQ(log.find("plan refused"), std::string::npos) << log;
    EXPECT_EQ(log.find("--max-rate"), std::string::npos) << log;
  }
  // 7. Reading the report.
  const std::string out = dir_ + "/reports/rack1-burn-in-1";
  const std::string read_block = page_block(page, "tusk-controller report reports/rack1-burn-in-1 --text");
  const auto [status, summary] =
      shell(controller_script(read_block.substr(0, read_block.find('\n'))), "report-text.log");
  ASSERT_EQ(status, 0) << summary;
  const json report = json::parse(read_file(out + "/report.json"));
  EXPECT_EQ(summary.rfind("Tusk run " + report["run_id"].get<std::string>() + " — profile 'rack-starter-400g'", 0), 0u)
      << summary;
  EXPECT_NE(summary.find("test 0 'nic-bandwidth' (rdma engine, 3 s)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("test 1 'mesh-checked' (rdma engine, 3 s)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("rack1-gpu04"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\nresult: " + report["conclusion"].get<std::string>() + " (exit " +
                         std::to_string(report["exit_code"].get<int>()) + ")\n"),
            std::string::npos)
      << summary;
}

}  // namespace
}  // namespace tusk::testing
