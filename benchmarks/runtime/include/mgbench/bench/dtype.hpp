#pragma once
// The workloads' dtype parameters, parsed into the one element-type enum (kernels::DType).
#include <string>
#include <vector>

#include "mgbench/kernels/fill.hpp"

namespace mgbench::bench {

// The type named `name` (as kernels::to_string spells it) when it is one of `allowed`;
// otherwise throws UsageError "unknown <what> dtype '<name>' (expected a, b or c)".
kernels::DType dtype_from_string(const std::string& name,
                                 const std::vector<kernels::DType>& allowed,
                                 const std::string& what);

}  // namespace mgbench::bench
