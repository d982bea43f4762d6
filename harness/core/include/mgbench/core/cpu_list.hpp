#pragma once
// Linux CPU lists ("0-3,8,10-11", as sysfs `local_cpulist` and taskset write them) and the CPUs
// the calling thread may run on. Host-only (no CUDA).
#include <string>
#include <vector>

namespace mgbench {

// Parses a CPU list into sorted CPU numbers; empty on malformed text.
std::vector<int> parse_cpu_list(const std::string& text);
// Formats CPU numbers as a CPU list ("0-3,8").
std::string format_cpu_list(const std::vector<int>& cpus);
// The calling thread's allowed CPUs.
std::vector<int> current_thread_cpus();

}  // namespace mgbench
