#pragma once
// What a point carries about the trust in its numbers, as results.json stores it: the spread of
// its samples and the flags on values the hardware cannot produce (point_quality.hpp decides
// both). Each has one writer and one reader of its JSON, used only where results are saved or
// loaded.
#include <optional>
#include <string>

#include "mgbench/core/params.hpp"

namespace mgbench {

// The sample spread of a point: a property of the point (samples may oscillate under a power
// cap while the median is certain).
struct Spread {
  std::optional<double> rel_stdev;             // relative stdev of the samples
  std::optional<double> median_ci_half_width;  // of the median's bootstrap 95 % CI, relative
  bool oscillating = false;  // spread above the noise threshold while the median is certain
  std::string cause;         // what held the clocks, from telemetry ("" when none was seen)
  std::string reason;        // in words ("" when the point is neither noisy nor oscillating)
};

// A value the hardware cannot produce.
struct PointFlag {
  std::string kind;  // "impossible"
  std::string metric;
  std::string reason;
};

// from_json throws UsageError naming the field when a value has the wrong type.
void to_json(Json& j, const Spread& spread);
void from_json(const Json& j, Spread& spread);
void to_json(Json& j, const PointFlag& flag);
void from_json(const Json& j, PointFlag& flag);

}  // namespace mgbench
