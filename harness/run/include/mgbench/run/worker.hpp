#pragma once
// What a worker does, callable in-process too (--isolation none).
#include <string>
#include <vector>

#include "mgbench/model/group.hpp"
#include "mgbench/platform/telemetry.hpp"

namespace mgbench {

// Runs a group's points on its devices (telemetry observer included when enabled); with
// `processes`, this process's rank of the group only (one process per GPU), and a node leader
// samples its node's GPUs by `node_bus_ids` (local rank r's GPU; empty: by CUDA ordinal).
// Throws for errors that make the process unusable; what finished was already reported.
void execute_group(const GroupSpec& spec, PointSink& sink, ProcessGroup* processes = nullptr,
                   const std::vector<std::string>& node_bus_ids = {});

// The GPU of each device of a node's plan, `devices[r]` -> `bus_ids[r]` (local rank r's GPU as
// its rank reported it; "" for a device not in the plan): how a node leader finds its node's
// GPUs in NVML whatever its own CUDA sees.
BusIdResolver bus_ids_by_place(const std::vector<int>& devices,
                               const std::vector<std::string>& bus_ids);

// The PCI bus ids of the GPUs this process sees, in CUDA order: the fake GPUs under the test
// hook (under MGBENCH_TEST_FAKE_GPU_PER_TASK only the one of its launcher's local rank). Creates
// no CUDA context.
std::vector<std::string> visible_gpus();
// How many GPUs this node has by NVML, whatever this process may see (0: unknown); the fake
// count under the test hook.
int node_gpu_count();
// The parts of a fingerprint that the nodes of a launch are compared on (versions, GPU count and
// models, power limits, clocks): small enough to gather from every node.
Json node_environment(const Json& environment);

// Device inventory + environment fingerprint (+ cheap doctor checks when `doctor`).
// Throws EnvironmentError when there is no usable GPU.
Json execute_probe(bool doctor);

}  // namespace mgbench
