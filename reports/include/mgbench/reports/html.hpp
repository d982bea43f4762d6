#pragma once
// Self-contained HTML report: one file, inline CSS and SVG, no scripts, fonts or network
// (a Content-Security-Policy forbids every external load). Every string from the results
// is escaped.
#include <string>
#include <vector>

#include "mgbench/model/results.hpp"

namespace mgbench::reports {

// Throws UsageError when the file cannot be written.
void write_html(const mgbench::RunResult& run, const std::string& path);
std::string render_html_report(const mgbench::RunResult& run);

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
