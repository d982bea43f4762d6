// Parsing of the workloads' dtype parameters (see dtype.hpp).
#include "mgbench/bench/dtype.hpp"

#include "mgbench/core/error.hpp"

namespace mgbench::bench {

kernels::DType dtype_from_string(const std::string& name,
                                 const std::vector<kernels::DType>& allowed,
                                 const std::string& what) {
  std::string expected;
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    if (name == kernels::to_string(allowed[i])) return allowed[i];
    if (i > 0) expected += i + 1 == allowed.size() ? " or " : ", ";
    expected += kernels::to_string(allowed[i]);
  }
  throw UsageError("unknown " + what + " dtype '" + name + "' (expected " + expected + ")");
}

}  // namespace mgbench::bench
