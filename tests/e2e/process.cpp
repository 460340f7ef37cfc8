#include "tests/e2e/process.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>
#include "tests/support/build_paths.hpp"

extern char** environ;

namespace tusk::testing {

Process::Process(const std::vector<std::string>& argv, const std::string& log_path,
                 const std::map<std::string, std::string>& extra_env)
    : log_path_(log_path) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const auto& [key, value] : extra_env) env_strings.push_back(key + "=" + value);
  std::vector<char*> env;
  for (auto& entry : env_strings) env.push_back(entry.data());
  env.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawn ") + argv[0] + ": " + std::strerror(rc));
}

Process::~Process() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(5));
  }
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!status_) {
    int status = 0;
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status_;
}

void Process::signal(int signal_number) {
  if (running()) ::kill(pid_, signal_number);
}

bool Process::running() {
  return !status_ && !wait(std::chrono::milliseconds(0));
}

std::string Process::log() const {
  return read_file(log_path_);
}

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool wait_for_text(const std::string& path, const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_file(path).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string make_scratch_dir(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  return pattern;
}

bool make_certs(const std::string& dir, const std::vector<std::string>& agents,
                const std::vector<std::string>& controller_names) {
  std::string command = "bash " + tusk::build_paths::source_dir() + "/scripts/make-certs.sh " + dir;
  for (const auto& name : controller_names) command += " --controller-name " + name;
  for (const auto& agent : agents) command += " " + agent;
  return std::system((command + " >/dev/null").c_str()) == 0;
}

namespace {

// The sets copy_of_certs made, by their names; removed as the process ends.
class CertificateSets {
 public:
  ~CertificateSets() {
    std::error_code ignored;
    if (!root_.empty()) std::filesystem::remove_all(root_, ignored);
  }
  // The directory of the set for `key`, made by `make` on first use; empty when it could not be.
  std::string get(const std::string& key, const std::function<bool(const std::string&)>& make) {
    const std::lock_guard lock(mutex_);
    if (const auto found = sets_.find(key); found != sets_.end()) return found->second;
    if (root_.empty()) root_ = make_scratch_dir("tusk-cert-sets");
    const std::string dir = root_ + "/" + std::to_string(sets_.size());
    if (!make(dir)) return {};
    return sets_[key] = dir;
  }

 private:
  std::mutex mutex_;
  std::string root_;
  std::map<std::string, std::string> sets_;
};

}  // namespace

bool copy_of_certs(const std::string& dir, const std::vector<std::string>& agents,
                   const std::vector<std::string>& controller_names) {
  static CertificateSets sets;
  std::string key;
  for (const auto& name : controller_names) key += "controller " + name + "\n";
  for (const auto& agent : agents) key += "agent " + agent + "\n";
  const std::string set =
      sets.get(key, [&](const std::string& made) { return make_certs(made, agents, controller_names); });
  if (set.empty()) return false;
  std::error_code error;
  std::filesystem::copy(set, dir, std::filesystem::copy_options::recursive, error);
  return !error;
}

namespace {

// Ports from the kernel's ephemeral range (bind to port 0 gives one) are also what any outgoing
// connection takes as its source port: a test that closed one to hand it to its controller could
// see another test's agent connect from it first, and its controller then never listened (seen
// with e2e tests run six at a time). So test ports come from below that range.
std::pair<int, int> test_port_range() {
  int low = 32768, high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  if (low > 11024) return {10000, low - 1};
  return {high + 1, 65535};
}

bool can_listen_on(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int on = 1;
  // As the controller binds: a port whose last connections linger in TIME_WAIT is free.
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return free;
}

}  // namespace

int free_port() {
  static const auto [low, high] = test_port_range();
  const auto span = static_cast<unsigned>(high - low + 1);
  // Tests run as separate processes at once: each starts at its own random place in the range.
  static std::atomic<unsigned> next{std::random_device{}() % span};
  for (unsigned tried = 0; tried < span; ++tried) {
    const int port = low + static_cast<int>(next.fetch_add(1) % span);
    if (can_listen_on(port)) return port;
  }
  throw std::runtime_error("free_port: no free port in " + std::to_string(low) + "-" + std::to_string(high));
}

}  // namespace tusk::testing
