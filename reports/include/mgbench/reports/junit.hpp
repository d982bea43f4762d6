#pragma once
// JUnit XML of `mgbench compare BASE NEW`, so CI systems show the regression gate as tests: one
// <testsuite> per workload, one <testcase> per matched point. A slower point is a <failure>
// carrying both values, the change, the threshold and the p-value; a noisy point, or one not ok in
// both runs, is <skipped/>. The schema of what is written: tests/data/junit.xsd.
#include <ostream>
#include <string>

#include "mgbench/analysis/compare.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/printer.hpp"

namespace mgbench::reports {

// `next` (the NEW run, may be null) gives each testcase its time: the wall time of the point.
void write_junit(const Comparison& comparison, const RunResult* next, std::ostream& out);

// "junit": the comparison (Printable::comparison) of a base run with `run`.
class JunitPrinter final : public Printer {
 public:
  std::string name() const override { return "junit"; }
  bool needs_comparison() const override { return true; }
  void print(const Printable& what, std::ostream& out) const override;
};

}  // namespace mgbench::reports
