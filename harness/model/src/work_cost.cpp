#include "mgbench/model/work_cost.hpp"

namespace mgbench {

const char* to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce:
      return "all-reduce";
    case CollectiveKind::all_gather:
      return "all-gather";
    case CollectiveKind::reduce_scatter:
      return "reduce-scatter";
    case CollectiveKind::broadcast:
      return "broadcast";
    case CollectiveKind::reduce:
      return "reduce";
  }
  return "?";
}

}  // namespace mgbench
