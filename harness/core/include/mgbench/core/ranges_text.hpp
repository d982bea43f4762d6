#pragma once
// Integer lists in the compact form people type and read: "0-4,6,7" (runs of three or more
// consecutive values as a range, pairs as two values), e.g. device lists for --devices.
#include <string>
#include <vector>

namespace mgbench {

std::string ranges_text(const std::vector<int>& values);

}  // namespace mgbench
