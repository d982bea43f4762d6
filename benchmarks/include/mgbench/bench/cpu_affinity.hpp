#pragma once
// CPU affinity of the rank threads: each rank thread runs on the CPUs local to its GPU (the
// GPU's NUMA node: the platform's gpu_local_cpulist), so that its pinned host buffers and the
// start-gate flag are first touched on that node and host-side copies do not cross sockets.
// Host-only (no CUDA).
#include <string>
#include <vector>

namespace mgbench::bench {

// Parses a Linux CPU list ("0-3,8,10-11") into sorted CPU numbers; empty on malformed text.
std::vector<int> parse_cpu_list(const std::string& text);
// Formats CPU numbers as a CPU list ("0-3,8").
std::string format_cpu_list(const std::vector<int>& cpus);
// The calling thread's allowed CPUs.
std::vector<int> current_thread_cpus();
// Restricts the calling thread to `cpus` intersected with what it may use now (the
// process's cpuset). Returns the CPUs it now runs on; leaves the affinity alone and returns
// the current set when the intersection is empty or `cpus` is.
std::vector<int> pin_current_thread(const std::vector<int>& cpus);

}  // namespace mgbench::bench
