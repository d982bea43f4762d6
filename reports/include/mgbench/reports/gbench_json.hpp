#pragma once
// Google Benchmark's JSON output format (json_schema_version 1), so Google Benchmark's comparison
// tooling (tools/compare.py) reads mgbench runs. Each ok point is one benchmark named
// "<workload>/<param>:<value>/.../gpus:<N>": one "iteration" run per raw sample (real_time and
// cpu_time are the sample's time per operation in ns; cpu_time is the same GPU time, since no CPU
// time is measured) and the "aggregate" runs mean, median, stddev and cv; the point's metrics are
// counters of the median aggregate. Points that are not ok are left out (counted in the context).
#include <ostream>
#include <string>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/printer.hpp"

namespace mgbench::reports {

// "<workload>/<param>:<value>/.../gpus:<N>".
std::string gbench_name(const PointResult& point);
Json gbench_document(const RunResult& run);
void write_gbench_json(const RunResult& run, std::ostream& out);

class GbenchPrinter final : public Printer {
 public:
  std::string name() const override { return "gbench"; }
  void print(const Printable& what, std::ostream& out) const override;
};

}  // namespace mgbench::reports
