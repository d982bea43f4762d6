#pragma once
// One rank of a launch (mpirun or srun), around MPI's start: the GPU it selects before MPI
// initialises (a CUDA-aware MPI uses the current device), its place among the ranks once MPI is
// up (its GPU taken by identity, rank 0's notes), and its part of a device probe.
#include <string>
#include <vector>

#include "mgbench/model/group.hpp"
#include "mgbench/run/mpi_group.hpp"
#include "mgbench/run/rank_placement.hpp"

namespace mgbench {

// Before MPI starts: the GPUs this process sees and the one it made current (-1: none, e.g. fake
// GPUs, or no local rank from the launcher). `planned`: its node's devices from the plan.
struct RankStart {
  std::vector<std::string> gpus;
  int device = -1;
};
RankStart start_rank(const std::vector<int>& planned);

// After MPI: every rank's facts gathered, this rank's GPU taken by identity and made current
// (set on `group`). Throws EnvironmentError when the ranks cannot be placed (the caller ends the
// launch with abort_launch).
struct RankPlace {
  std::vector<std::string> node_bus_ids;  // the GPU of each local rank of this node
  std::vector<LaunchNote> notes;          // rank 0 only
};
RankPlace place_rank(LaunchedGroup& group, const GroupSpec& spec, const RankStart& start);

// The device probe's part of every rank (one per node): rank 0's message (inventory, fingerprint,
// doctor checks, every node's report), or a `fatal` message when rank 0 cannot describe its
// node; null on the other ranks.
Json probe_rank(ProcessGroup& group, bool doctor);

}  // namespace mgbench
