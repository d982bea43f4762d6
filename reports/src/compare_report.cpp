// The comparison report page (compare_report.hpp): its sections in order, the style sheet on
// top of the run report's, and the --report file writer. The sections and charts are in
// compare_sections.cpp, compare_offers.cpp, compare_charts.cpp and compare_size_charts.cpp.
#include "mgbench/core/json_text.hpp"
#include "mgbench/reports/compare_report.hpp"

#include <fmt/format.h>

#include "compare_internal.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/html.hpp"

namespace mgbench::reports {

CompareReportInput::CompareReportInput(const Comparison& c, std::vector<const RunResult*> r,
                                       std::vector<std::string> l)
    : comparison(&c), runs(std::move(r)), labels(std::move(l)) {}

CompareReportInput::CompareReportInput(const OfferComparison& o, std::vector<const RunResult*> r,
                                       std::vector<std::string> l)
    : offers(&o), runs(std::move(r)), labels(std::move(l)) {}

namespace cmp {
namespace {

constexpr const char* kCss = R"CSS(
.outcome { margin: 14px 0 6px; padding: 8px 12px; border-radius: 4px; border: 1px solid #ccc;
           font-size: 15px; font-weight: 600; background: #f6f6f6; }
.outcome.bad { border-color: #E69F00; background: #fdf1da; box-shadow: inset 5px 0 0 #E69F00; }
.outcome.good { border-color: #009E73; background: #e3f4ee; box-shadow: inset 5px 0 0 #009E73; }
.outcome.neutral { box-shadow: inset 5px 0 0 #888; }
.chips { display: flex; flex-wrap: wrap; gap: 8px; margin: 6px 0 8px; }
.verdict { display: inline-block; padding: 0 7px; border: 1px solid #777; border-radius: 3px;
           font-weight: 600; white-space: nowrap; color: #222; background: #f2f2f2; }
.verdict .sym { margin-right: 4px; }
.verdict.v-slower { border-color: #E69F00; background: #fdebc8; }
.verdict.v-slower .sym { color: #b87d00; }
.verdict.v-faster { border-color: #009E73; background: #d9f1e8; }
.verdict.v-faster .sym { color: #009E73; }
.verdict.v-noisy { border-color: #CC79A7; background: #f6e4ee; }
.verdict.v-noisy .sym { color: #b0558a; }
.verdict.v-same { border-color: #000; background: #efefef; }
.verdict.v-same .sym { color: #000; }
.chips .verdict { font-size: 14px; padding: 2px 10px; }
.chips .verdict.zero { opacity: 0.55; font-weight: 400; }
.chips .plain { display: inline-block; padding: 2px 10px; border: 1px dashed #999;
                border-radius: 3px; color: #333; }
table.data tr.v-slower td:first-child { box-shadow: inset 4px 0 0 #E69F00; }
table.data tr.v-faster td:first-child { box-shadow: inset 4px 0 0 #009E73; }
table.data tr.v-noisy td:first-child { box-shadow: inset 4px 0 0 #CC79A7; }
table.data td.best { font-weight: 700; background: #e3f4ee; }
table.data td.na { color: #777; }
table.data td.bad-status { color: #a33; }
table.data td.path, table.data td code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo,
                                         Consolas, monospace; font-size: 12px; }
table.data td.why { color: #444; max-width: 460px; }
#inputs table.data td:not(.path), #offers table.data td:not(.path) { white-space: nowrap; }
.legend-line { margin: 2px 0 10px; color: #444; }
/* The new run's verdict markers (svg.cpp draws 3.6 px markers): larger, outlined. */
svg.chart g.series[data-name^="verdict: "] .point { transform-box: fill-box;
  transform-origin: center; transform: scale(1.7); stroke: #222; stroke-width: 0.5; }
svg.chart g.series[data-name="verdict: same"] .point { transform: scale(1.3); stroke: #fff; }
.legend-line .verdict { margin: 0 2px; }
@media print {
  .verdict, .outcome, table.data td.best, table.data tr td:first-child {
    -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
)CSS";

std::string chart_legend_line(const Context& ctx) {
  std::string out = "<p class=\"legend-line\">";
  if (ctx.two_runs()) {
    out += esc(ctx.base_label() + ": blue, dashed, circles. " + ctx.new_label() +
               ": black, solid; its markers show each point's verdict ") +
           badge("slower") + " " + badge("faster") + " " + badge("noisy") + " " + badge("same") +
           esc(". Hover a marker for its values.");
  } else {
    out += esc("One colour, marker shape and line style per offer (" + ctx.base_label() +
               ": blue, dashed, drawn on top). Hover a marker for its values.");
  }
  return out + "</p>\n";
}

}  // namespace
}  // namespace cmp

std::string render_compare_html(const CompareReportInput& input) {
  using namespace cmp;
  Context ctx = make_context(input);
  std::vector<std::pair<std::string, WorkloadCharts>> charts;
  for (const auto& w : ctx.workloads) charts.emplace_back(w, workload_charts(ctx, w));

  std::string title, subtitle, body;
  std::vector<std::pair<std::string, std::string>> nav;
  if (!ctx.offers) {
    title = "mgbench comparison: " + ctx.base_label() + " \u2192 " + ctx.new_label();
    const Comparison& c = *ctx.comparison;
    subtitle = fmt::format("{} same, {} faster, {} slower, {} noisy", c.count(Verdict::same),
                           c.count(Verdict::faster), c.count(Verdict::slower),
                           c.count(Verdict::noisy));
    nav = {{"summary", "Summary"}, {"environment", "Environment"}};
    body += summary_section(ctx);
    body += environment_section(ctx);
    const std::string verdicts = verdict_tables(ctx);
    if (!verdicts.empty()) nav.emplace_back("verdicts", "Verdicts");
    body += verdicts;
    const std::string unmatched = unmatched_section(ctx);
    if (!unmatched.empty()) nav.emplace_back("unmatched", "Unmatched");
    body += unmatched;
  } else {
    title = "mgbench offer comparison: ";
    for (std::size_t i = 0; i < ctx.labels.size(); ++i) title += (i ? " vs " : "") + ctx.labels[i];
    subtitle = fmt::format("{} offers, {} workload{}", ctx.labels.size(), ctx.workloads.size(),
                           ctx.workloads.size() == 1 ? "" : "s");
    nav = {{"offers", "Offers"}, {"environment", "Environment"}};
    body += offers_summary_section(ctx);
    body += environment_section(ctx);
  }
  bool legend_done = false;
  for (const auto& [w, wc] : charts) {
    const std::string tables = ctx.offers ? offer_tables(ctx, w) : efficiency_table(ctx, w);
    if (wc.svgs.empty() && tables.empty()) continue;
    const std::string id = "workload-" + slug(w);
    nav.emplace_back(id, w);
    body += section_open(id, w);
    if (!wc.svgs.empty()) {
      if (!legend_done) body += chart_legend_line(ctx);
      legend_done = true;
      if (!wc.note.empty()) body += caption(wc.note);
      body += html_chart_grid(wc.svgs);
    }
    body += tables + "</section>\n";
  }
  if (!ctx.offers) {
    nav.emplace_back("inputs", "Inputs");
    body += inputs_section(ctx);
  }

  std::string page = html_page_begin(title, subtitle);
  const auto style_end = page.find("</style>");
  if (style_end != std::string::npos) page.insert(style_end, kCss);
  return page + html_nav(nav) + "<main>\n" + body + "</main>\n" + html_page_end();
}

void write_compare_report_file(const std::string& path, const CompareReportInput& input) {
  const std::string name = cmp::lower(path);
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".json")) {
    const Json doc = input.document != nullptr ? *input.document
                     : input.offers != nullptr ? offers_to_json(*input.offers)
                                               : comparison_to_json(*input.comparison);
    write_file_atomic(path, dump_json(doc, 2) + "\n");
  } else if (ends_with(".html") || ends_with(".htm")) {
    write_file_atomic(path, render_compare_html(input));
  } else {
    throw UsageError("--report " + path +
                     ": expected a file name ending in .html (the report) or .json");
  }
}

}  // namespace mgbench::reports
