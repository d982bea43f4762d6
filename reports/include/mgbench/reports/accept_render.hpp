#pragma once
// `mgbench accept`'s answer in a language: the console's closing lines and the report (HTML and
// Markdown), each beginning with the verdict and the checklist, one line per item with the
// measured figure against its criterion and, for a warning or a failure, the likely cause and the
// next step; then the stages, the single-card vs all-cards figures and the criteria used. Rendered
// from the results' "accept" section alone (`mgbench accept --from` renders a saved run again).
#include <ostream>
#include <string>

#include "mgbench/model/results.hpp"
#include "mgbench/reports/accept_text.hpp"

namespace mgbench::reports {

// The criteria, the stages, then the verdict and the checklist (the last lines). Throws
// UsageError when `run` is no accept run.
void render_accept_console(const RunResult& run, Lang lang, std::ostream& out, bool colour = false);
std::string render_accept_markdown(const RunResult& run, Lang lang);
std::string render_accept_html(const RunResult& run, Lang lang);
// DIR/report.html and DIR/report.md; throws when they cannot be written.
void write_accept_reports(const RunResult& run, Lang lang, const std::string& dir);

}  // namespace mgbench::reports
