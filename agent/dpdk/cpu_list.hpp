// The CPUs an EAL lcore list names, and pinning a datapath thread to one of them.
#pragma once

#include <string>
#include <vector>

namespace tusk::dpdk {

// "0-3,6,8-9" → {0, 1, 2, 3, 6, 8, 9}, sorted, without duplicates. Throws std::invalid_argument
// naming the bad part.
std::vector<int> parse_cpu_list(const std::string& text);

// Pins the calling thread to `cpu`; false (and errno set) when the kernel refuses.
bool pin_current_thread(int cpu);

}  // namespace tusk::dpdk
