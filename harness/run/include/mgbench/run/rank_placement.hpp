#pragma once
// Where the ranks of a launch really are, from what each rank sees rather than from the host
// list: its machine (host name and boot id), the GPUs visible to it (PCI bus ids, in its own
// CUDA order) and its CPUs. Every rank of a group hands these in at start-up; each rank then
// takes its GPU by identity, so that per-task GPU binding (srun --gpus-per-task, --gpu-bind,
// containers that show one GPU per task) neither points a rank at a GPU it cannot see nor puts
// two ranks on one GPU, and rank 0 tells the orchestrator what looks wrong (a rank on one CPU,
// or on CPUs far from its GPU). The device probe of a launched sweep reports every node the
// same way. Pure functions except where said.
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

// This machine as NCCL tells hosts apart: its host name and the kernel's boot id. Two names of
// one machine in --hosts give one identity; two containers on one machine, two. `test_node`
// (the test hook MGBENCH_TEST_RANKS_PER_NODE) makes one machine several nodes. Reads the system.
std::string node_identity(std::optional<int> test_node = std::nullopt);

// What one rank of a group reports at start-up (gathered to every rank).
struct RankFacts {
  int rank = 0;
  int local_rank = 0;
  std::string host;                   // its node's name, as MPI gives it
  std::string node;                   // node_identity()
  std::vector<std::string> gpus;      // PCI bus ids of the GPUs it sees, in its CUDA order
  std::vector<std::string> gpu_cpus;  // each of those GPUs' local CPU list ("" unknown)
  int device_before_mpi = -1;         // the GPU it selected before MPI started (-1: none)
  std::string cpus;                   // the CPUs it may run on (CPU list)
};
void to_json(Json& j, const RankFacts& f);
void from_json(const Json& j, RankFacts& f);

// The ranks of `all` on `node`, in local-rank order.
std::vector<RankFacts> ranks_on_node(const std::vector<RankFacts>& all, const std::string& node);

// The GPU of each rank of one node, in local-rank order.
struct NodeDevices {
  std::vector<int> ordinals;         // in that rank's own CUDA order
  std::vector<std::string> bus_ids;  // "" when unknown
  bool per_task = false;             // the ranks see different GPUs (per-task binding)
};
// When every rank of the node sees the same GPUs, local rank r takes `planned[r]` (the plan's
// device of its place); when they see different ones, the ranks that see the same set take its
// GPUs in turn. Throws EnvironmentError naming the rank and host when a rank sees no GPU or too
// few, or when tasks bound to their own GPUs would share one.
NodeDevices map_node_devices(const std::vector<RankFacts>& node, const std::vector<int>& planned);

// The GPU a rank selects before MPI starts (a CUDA-aware MPI initialises CUDA on the current
// device): its only GPU when it sees one, else the plan's device of its local rank; -1 when
// neither is known.
int device_before_mpi(std::optional<int> local_rank, const std::vector<int>& planned,
                      int visible);
// This process's local rank as its launcher tells it before MPI starts
// (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, MPI_LOCALRANKID, PMI_LOCAL_RANK); under
// MGBENCH_TEST_RANKS_PER_NODE=N, its world rank modulo N. Reads the environment.
std::optional<int> launcher_local_rank();

// What rank 0 tells the orchestrator about a launch, one note per kind ("one_cpu",
// "remote_cpus", "devices_ignored", "machines"); the orchestrator says each kind once.
struct LaunchNote {
  std::string kind;
  std::string text;
};
// `devices[i]` is rank i's GPU (bus id) as mapped; `planned_nodes` the nodes the plan expected.
std::vector<LaunchNote> launch_notes(const std::vector<RankFacts>& all,
                                     const std::vector<std::string>& devices, int planned_nodes,
                                     bool devices_ignored);

// What each node of a device probe reports: its name and identity, how many GPUs its rank sees
// and how many the node has (NVML), and its fingerprint (as `doctor --fingerprint` gives it),
// or why there is none.
struct NodeReport {
  std::string host;
  std::string node;
  int gpus_seen = 0;
  int node_gpus = 0;
  Json environment = Json::object();
  std::string error;
};
void to_json(Json& j, const NodeReport& r);
void from_json(const Json& j, NodeReport& r);

}  // namespace mgbench
