#pragma once
// What the collective workloads share beyond one rank's point (collective_point.hpp): how their
// groups run (timing, cache, the second timing of small messages, the HBM limit check, NCCL
// communicators per NCCL environment), how reports show them (nccl-tests style tables, busbw and
// time against the message size, the busbw of every collective of the run on one chart, the
// plateau summary), and the whole declaration of an NCCL collective (allgather, reducescatter,
// alltoall, broadcast, reduce, sendrecv: one file each beside allreduce.cpp).
#include <string>
#include <vector>

#include "collectives/collective_math.hpp"
#include "mgbench/bench/executor.hpp"
#include "mgbench/model/presentation.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench {

// Messages below this are also timed with the other launch method (device and host side by
// side): there, launch cost is a large share of the time.
inline constexpr std::uint64_t kTimeBothBelowBytes = std::uint64_t{1} << 20;

// Host timing by default (nccl-tests' method), cold cache, small messages also timed
// device-side, algbw checked against HBM's copy limit.
RunnerOptions collective_runner_options();

// The presentation of a collective: `keys` are parameters that tell its points apart and are
// always shown (allreduce: impl) as columns of its tables and of its plateau summary; root, algo
// and proto are shown where they vary.
Presentation collective_presentation(const std::vector<std::string>& keys);

// The declaration of one NCCL collective workload.
struct CollectiveDecl {
  collective::Kind kind = collective::Kind::allgather;
  std::string summary;   // one line for `mgbench list`
  std::string formulas;  // what is measured and its formulas
  std::string single_rank;  // what one GPU means for it (measured or waived, and why)
  std::vector<std::string> algos;  // NCCL_ALGO values NCCL has for it (none: no algo axis)
  bool proto = true;               // whether NCCL_PROTO selects its protocol
};
Workload nccl_collective_workload(const CollectiveDecl& decl);

// The default sizes of the NCCL collectives per profile (collective_workload.cpp says why).
std::vector<std::uint64_t> collective_sizes(Profile profile);

}  // namespace mgbench::bench
