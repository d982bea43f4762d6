#pragma once
// The comparison report of `mgbench compare BASE NEW [...] --report cmp.html`: one
// self-contained HTML page (same look, escaping and no-network policy as the run report).
//
// Two runs (the regression gate): the environment diff first, then per workload a verdict table
// of every matched point (faster / slower / same / noisy: a colour-blind-safe colour, a symbol
// and the word), the points not compared and those only in one run; the runs' curves overlaid
// (throughput vs GPU count with the ideal line, GEMM TFLOP/s vs size per dtype and
// implementation, all-reduce busbw vs message size on a log2 axis, training samples/s vs batch),
// the new run's markers coloured and shaped by their verdict (▲ faster, ▼ slower, ◆ noisy,
// ■ same); scaling efficiency per GPU count side by side.
// Three or more runs, or --offers: the offers' fingerprints, each environment's differences from
// the first, the offer tables (throughput, scaling efficiency, per watt, per dollar, best offer
// per row) and the curves of all offers overlaid.
// Sections whose data are absent are left out.
#include <string>
#include <vector>

#include "mgbench/analysis/compare.hpp"

namespace mgbench::reports {

struct CompareReportInput {
  const Json& comparison;                     // comparison_to_json or offers_to_json
  const std::vector<const RunResult*>& runs;  // inputs in command-line order
  const std::vector<std::string>& labels;
  bool offers = false;
};

// The page for `input` (input.comparison is comparison_to_json or offers_to_json; input.runs
// and input.labels in command-line order).
std::string render_compare_html(const CompareReportInput& input);

// `--report PATH`: *.html / *.htm writes render_compare_html, *.json the comparison JSON; any
// other name throws UsageError; a file that cannot be written, EnvironmentError.
void write_compare_report_file(const std::string& path, const CompareReportInput& input);

}  // namespace mgbench::reports
