#pragma once
// How a point was measured, as its result records it once: the timing method, the cache mode
// and the warm-up (measurement.hpp says what each method and mode means and how a point picks
// them).
#include <optional>
#include <string>

namespace mgbench {

enum class TimingMethod { device, host, graph };
const char* to_string(TimingMethod method);
TimingMethod timing_from_string(const std::string& text);  // throws UsageError

enum class CacheMode { hot, cold };
const char* to_string(CacheMode mode);
CacheMode cache_from_string(const std::string& text);  // throws UsageError

// Unset fields: a results file written before they were recorded.
struct Measurement {
  std::optional<TimingMethod> timing;
  std::optional<CacheMode> cache;
  double warmup_s = 0;  // seconds of warm-up before the samples (0: not recorded)
};

// "host, cold": how a table's "measured as" column names it; "" without a recorded timing.
std::string describe(const Measurement& m);

}  // namespace mgbench
