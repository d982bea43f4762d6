// The spread and flags of a point in results.json (see point_marks.hpp).
#include "mgbench/model/point_marks.hpp"

#include <cmath>

#include "mgbench/core/error.hpp"

namespace mgbench {

namespace {

// The field `name` of `j` when present: a non-negative finite number, else UsageError.
std::optional<double> optional_share(const Json& j, const char* name) {
  if (!j.contains(name)) return std::nullopt;
  const Json& v = j.at(name);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
    throw UsageError(std::string("point spread '") + name + "' is not a non-negative number");
  }
  return v.get<double>();
}

// The text field `name` of `j` ("" when absent), else UsageError naming `what`.
std::string optional_text(const Json& j, const char* name, const char* what) {
  if (!j.contains(name)) return "";
  if (!j.at(name).is_string()) {
    throw UsageError(std::string(what) + " '" + name + "' is not a string");
  }
  return j.at(name).get<std::string>();
}

}  // namespace

void to_json(Json& j, const Spread& spread) {
  j = Json::object();
  if (spread.rel_stdev) j["rel_stdev"] = *spread.rel_stdev;
  if (spread.median_ci_half_width) j["median_ci_half_width"] = *spread.median_ci_half_width;
  j["oscillating"] = spread.oscillating;
  if (!spread.cause.empty()) j["cause"] = spread.cause;
  if (!spread.reason.empty()) j["reason"] = spread.reason;
}

void from_json(const Json& j, Spread& spread) {
  if (!j.is_object()) throw UsageError("point spread is not an object");
  spread.rel_stdev = optional_share(j, "rel_stdev");
  spread.median_ci_half_width = optional_share(j, "median_ci_half_width");
  if (j.contains("oscillating") && !j.at("oscillating").is_boolean()) {
    throw UsageError("point spread 'oscillating' is not a boolean");
  }
  spread.oscillating = j.value("oscillating", false);
  spread.cause = optional_text(j, "cause", "point spread");
  spread.reason = optional_text(j, "reason", "point spread");
}

void to_json(Json& j, const PointFlag& flag) {
  j = Json{{"kind", flag.kind}, {"metric", flag.metric}, {"reason", flag.reason}};
}

void from_json(const Json& j, PointFlag& flag) {
  if (!j.is_object()) throw UsageError("point flag is not an object");
  flag.kind = optional_text(j, "kind", "point flag");
  flag.metric = optional_text(j, "metric", "point flag");
  flag.reason = optional_text(j, "reason", "point flag");
}

}  // namespace mgbench
