#pragma once
// CPU affinity of the rank threads: each rank thread runs on the CPUs local to its GPU (the
// GPU's NUMA node: the platform's gpu_local_cpulist), so that its pinned host buffers and the
// start-gate flag are first touched on that node and host-side copies do not cross sockets.
// Host-only (no CUDA).
#include <string>
#include <vector>

#include "mgbench/core/cpu_list.hpp"

namespace mgbench::bench {

// CPU lists and the thread's CPUs: the platform's (cpu_list.hpp).
using mgbench::current_thread_cpus;
using mgbench::format_cpu_list;
using mgbench::parse_cpu_list;
// Restricts the calling thread to `cpus` intersected with what it may use now (the
// process's cpuset). Returns the CPUs it now runs on; leaves the affinity alone and returns
// the current set when the intersection is empty or `cpus` is.
std::vector<int> pin_current_thread(const std::vector<int>& cpus);

}  // namespace mgbench::bench
