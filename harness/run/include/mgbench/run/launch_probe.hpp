#pragma once
// The device probe of a sweep whose ranks run through mpirun or srun: one rank on each node, so
// that the orchestrator (a login node, say) never loads CUDA, every node is reached before the
// first group, and the node structure comes from what the ranks report rather than from the
// names in the host list.
#include <string>
#include <vector>

#include "mgbench/platform/doctor.hpp"
#include "mgbench/run/launcher.hpp"
#include "mgbench/run/orchestrator.hpp"

namespace mgbench {

// Launches the probe (probe_placement) and returns rank 0's inventory, fingerprint and cheap
// doctor checks with every node's report. Throws EnvironmentError with one line when the launch
// does not start (launch_failure_line), or a node cannot describe itself.
ProbeResult probe_launched(const LaunchOptions& options, bool doctor, double timeout_s);

// `hosts` without the names that reach a machine already listed (the probe's rank i ran on
// host i): "localhost" and "LOCALHOST", a trailing dot, an address. One line per such name in
// `warnings`.
std::vector<HostSlots> distinct_hosts(const std::vector<HostSlots>& hosts,
                                      const std::vector<NodeReport>& nodes,
                                      std::vector<std::string>* warnings);

// The nodes compared as `doctor --hosts` compares hosts, on what each node's rank loaded (driver,
// CUDA runtime, NCCL, GPU models and count: fail; power limits and clocks: warn). Empty for one
// node.
std::vector<DoctorCheck> node_checks(const std::vector<NodeReport>& nodes);
// `doctor` (doctor_to_json's shape, or null) with `checks` added.
void add_checks(Json& doctor, const std::vector<DoctorCheck>& checks);

// mpirun without --hosts runs every rank on this host: more GPUs per node than it has is refused
// (UsageError), as the local launcher refuses more GPUs than it sees.
void check_local_node_size(const LaunchOptions& options, const std::vector<NodeReport>& nodes);

}  // namespace mgbench
