#include "agent/dpdk/cpu_list.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <stdexcept>

namespace tusk::dpdk {

namespace {

int parse_cpu(std::string_view text, const std::string& whole) {
  int cpu = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), cpu);
  if (error != std::errc{} || end != text.data() + text.size() || cpu < 0 || cpu >= CPU_SETSIZE) {
    throw std::invalid_argument("lcore list '" + whole + "': '" + std::string(text) + "' is not a CPU number");
  }
  return cpu;
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const std::size_t dash = part.find('-');
    const int first = parse_cpu(part.substr(0, dash), text);
    const int last = dash == std::string_view::npos ? first : parse_cpu(part.substr(dash + 1), text);
    if (last < first)
      throw std::invalid_argument("lcore list '" + text + "': range '" + std::string(part) + "' runs backwards");
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  if (cpus.empty()) throw std::invalid_argument("lcore list is empty");
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

bool pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int error = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  errno = error;
  return error == 0;
}

}  // namespace tusk::dpdk
