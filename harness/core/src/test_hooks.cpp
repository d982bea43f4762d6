// Test-only environment hooks: read only behind the MGBENCH_ENABLE_TEST_WORKLOADS switch.
#include "mgbench/core/test_hooks.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"

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

std::optional<double> read_number(const char* name, double lo, double hi) {
  const auto text = read(name);
  if (!text) return std::nullopt;
  const double value = parse_double(*text, name);
  if (value < lo || value > hi) {
    throw UsageError(fmt::format("{}={}: expected a number from {} to {}", name, *text, lo, hi));
  }
  return value;
}

std::map<std::string, std::string> active() {
  std::map<std::string, std::string> hooks;
  // The hooks that change what is measured. A failing journal (kJournalFailAfter) changes no
  // figure: a sweep it stopped must resume without it.
  for (const char* name :
       {kFakeDevices, kSlowdown, kTrainDoubleReduce, kRanksPerNode, kFakeTelemetry,
        kPeerAccessFail, kFakeGpuPerTask, kAcceptLoad, kAcceptDoctor}) {
    if (auto value = read(name)) hooks[name] = *value;
  }
  return hooks;
}

}  // namespace mgbench::test_hooks
