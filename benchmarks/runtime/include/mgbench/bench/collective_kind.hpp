#pragma once
// The NCCL collectives mgbench runs, by name: what the runtime's NCCL calls (nccl_comms.hpp)
// and the collective workloads (workloads/collectives) both speak of. Host-only.
#include <string>

namespace mgbench::bench::collective {

enum class Kind { allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv };
// The workload name ("allgather"); kind_from_string throws std::invalid_argument otherwise.
const char* to_string(Kind kind);
Kind kind_from_string(const std::string& name);

}  // namespace mgbench::bench::collective
