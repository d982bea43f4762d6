#pragma once
// The comparison report of `mgbench compare BASE NEW [...] --report cmp.html`: one
// self-contained HTML page (same look, escaping and no-network policy as the run report).
//
// Two runs (the regression gate): the environment diff first, then per workload a verdict table
// of every matched point (faster / slower / same / noisy: a colour-blind-safe colour, a symbol
// and the word), the points not compared and those only in one run; the runs' curves overlaid
// (throughput vs GPU count with the ideal line, the workload's first declared metric-vs-axis
// chart), the new run's markers coloured and shaped by their verdict (▲ faster, ▼ slower,
// ◆ noisy, ■ same); scaling efficiency per GPU count side by side.
// Three or more runs, or --offers: the offers' fingerprints, each environment's differences from
// the first, the offer tables (throughput, scaling efficiency, per watt, per dollar, best offer
// per row) and the curves of all offers overlaid.
// Sections whose data are absent are left out. Everything comes from the typed comparison, the
// runs and their presentation; no workload is named.
#include <string>
#include <vector>

#include "mgbench/analysis/compare.hpp"

namespace mgbench::reports {

struct CompareReportInput {
  CompareReportInput(const Comparison& comparison, std::vector<const RunResult*> runs,
                     std::vector<std::string> labels);
  CompareReportInput(const OfferComparison& offers, std::vector<const RunResult*> runs,
                     std::vector<std::string> labels);

  const Comparison* comparison = nullptr;  // two runs (the regression gate)
  const OfferComparison* offers = nullptr;  // three or more runs, or --offers
  std::vector<const RunResult*> runs;      // inputs in command-line order
  std::vector<std::string> labels;
  const Json* document = nullptr;  // --report *.json writes this when set
};

std::string render_compare_html(const CompareReportInput& input);

// `--report PATH`: *.html / *.htm writes render_compare_html, *.json `document` or else the
// comparison JSON (comparison_to_json / offers_to_json); any other name throws UsageError; a
// file that cannot be written, EnvironmentError.
void write_compare_report_file(const std::string& path, const CompareReportInput& input);

}  // namespace mgbench::reports
