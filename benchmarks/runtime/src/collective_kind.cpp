// The collectives' names (see collective_kind.hpp).
#include "mgbench/bench/collective_kind.hpp"

#include <stdexcept>

namespace mgbench::bench::collective {

namespace {

constexpr Kind kKinds[] = {Kind::allreduce, Kind::allgather, Kind::reducescatter, Kind::alltoall,
                           Kind::broadcast, Kind::reduce,    Kind::sendrecv};

}  // namespace

const char* to_string(Kind kind) {
  switch (kind) {
    case Kind::allreduce: return "allreduce";
    case Kind::allgather: return "allgather";
    case Kind::reducescatter: return "reducescatter";
    case Kind::alltoall: return "alltoall";
    case Kind::broadcast: return "broadcast";
    case Kind::reduce: return "reduce";
    case Kind::sendrecv: return "sendrecv";
  }
  return "?";
}

Kind kind_from_string(const std::string& name) {
  for (Kind k : kKinds) {
    if (name == to_string(k)) return k;
  }
  throw std::invalid_argument("unknown collective '" + name + "'");
}

}  // namespace mgbench::bench::collective
