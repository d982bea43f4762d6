#pragma once
// Self-contained HTML report: one file, inline CSS and SVG, no scripts, fonts or network
// (a Content-Security-Policy forbids every external load). Every string from the results
// is escaped.
#include <string>
#include <vector>

#include "mgbench/model/results.hpp"
#include "mgbench/reports/printer.hpp"

namespace mgbench::reports {

// `prediction`: drawn on the efficiency charts (build_charts).
std::string render_html_report(const mgbench::RunResult& run,
                               const Prediction* prediction = nullptr);

// "html": the report page (an accept run: its own report, in English).
class HtmlPrinter final : public Printer {
 public:
  std::string name() const override { return "html"; }
  std::string default_file() const override { return "report.html"; }
  std::vector<std::string> extensions() const override { return {".html"}; }
  bool draws_charts() const override { return true; }
  void print(const Printable& what, std::ostream& out) const override;
};

// Building blocks for other HTML reports (e.g. the comparison report), same look:
// the document head (title escaped, CSS, CSP; `lang` the page's language tag) and the closing tags.
std::string html_page_begin(const std::string& title, const std::string& subtitle,
                            const std::string& lang = "en");
std::string html_page_end();
// <nav> with links to (id, label) pairs.
std::string html_nav(const std::vector<std::pair<std::string, std::string>>& links);
// A grid of charts (each an <svg> element); `small` packs three per row on wide screens.
std::string html_chart_grid(const std::vector<std::string>& svgs, bool small = false);

}  // namespace mgbench::reports
