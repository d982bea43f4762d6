// Test-only environment hooks: read only behind the MGBENCH_ENABLE_TEST_WORKLOADS switch.
#include "mgbench/core/test_hooks.hpp"

#include <cstdlib>

namespace mgbench::test_hooks {

bool enabled() {
  const char* v = std::getenv(kEnable);
  return v != nullptr && std::string(v) == "1";
}

std::optional<std::string> read(const char* name) {
  if (!enabled()) return std::nullopt;
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace mgbench::test_hooks
