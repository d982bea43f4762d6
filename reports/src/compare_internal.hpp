#pragma once
// Internal to the comparison report: the typed inputs in one context, verdict styles, HTML
// table helpers and the sections and charts the page is made of.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/analysis/compare.hpp"
#include "mgbench/reports/compare_report.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/svg.hpp"

namespace mgbench::reports::cmp {

using Points = std::vector<const PointResult*>;

// Okabe-Ito colours; the marker shape of a series follows its palette index (svg: index % 5),
// so each verdict also has its own shape: ▲ faster, ▼ slower, ◆ noisy, ■ same.
struct VerdictStyle {
  const char* name;
  const char* symbol;
  int colour;  // palette index
  int rank;    // how much a person needs to see it: slower first
};
extern const VerdictStyle kVerdicts[4];
const VerdictStyle& verdict_style(const std::string& verdict);
int run_colour(std::size_t run);

struct Context {
  const Comparison* comparison = nullptr;      // two runs
  const OfferComparison* offer_cmp = nullptr;  // offers
  bool offers = false;
  std::vector<const RunResult*> runs;
  std::vector<std::string> labels;
  std::vector<std::string> workloads;
  std::map<std::string, Presentation> presentation;  // of the first run that has the workload
  std::map<std::string, const PointComparison*> verdicts;  // point key -> comparison
  std::set<std::string> ids;

  bool two_runs() const { return !offers && runs.size() >= 2; }
  std::string chart_id(const std::string& text);
  const PointComparison* verdict_of(const PointResult& p) const;
  std::string base_label() const { return labels.empty() ? "base" : labels[0]; }
  std::string new_label() const { return labels.size() < 2 ? "new" : labels[1]; }
  const Presentation& presentation_of(const std::string& workload) const;
};
Context make_context(const CompareReportInput& input);
// The ok points of one workload in one run (the first per key when a run repeats one).
Points ok_points(const RunResult& run, const std::string& workload);

// ---- text and HTML ----
std::string esc(const std::string& text);
std::string lower(std::string text);
std::string badge(const std::string& verdict, const std::string& text = "",
                  const std::string& extra_class = "");
std::string p_value_text(double p);
// "dtype=bf16 impl=x" of `keys` ("-" when none); declared merged parameters with one value
// shown once ("m=n=k=4096").
std::string params_text(const Params& params, const std::vector<std::string>& keys,
                        const Presentation& presentation);
// A label of a parameter set for charts: the `keys` given, byte axes in binary units.
std::string set_label(const Params& params, const std::vector<std::string>& keys,
                      const Presentation& presentation);
// Parameters that move with the declared axes (axes and their companions).
std::set<std::string> axis_params(const Presentation& presentation);
// The value of the first declared axis the parameters have.
std::optional<double> size_value(const Params& params, const Presentation& presentation);

struct HtmlTable {
  std::vector<std::pair<std::string, bool>> header;  // escaped html, numeric
  std::vector<std::vector<std::string>> rows;        // cells: full <td ...>...</td>
  std::vector<std::string> row_classes;

  void column(const std::string& title, bool numeric = false);
  void add(std::vector<std::string> cells, std::string cls = "");
  bool empty() const { return rows.empty(); }
  std::string render(const std::string& id = "") const;
};
std::string td(const std::string& text, const std::string& cls = "");
std::string td_num(const std::string& text, const std::string& extra = "");
std::string td_html(const std::string& html, const std::string& cls = "");
std::string section_open(const std::string& id, const std::string& title);
std::string caption(const std::string& text);
std::string quantity_caption(const Quantity& q, bool with_change);
// The keys of the first parameter set that are not in `vary`, as "a=1 b=x" (empty when none).
std::string fixed_params_text(const std::vector<const Params*>& params,
                              const std::vector<std::string>& vary,
                              const Presentation& presentation);

// ---- charts ----
// Markers of the new run's points, one marker-only series per verdict (drawn last, on top).
class VerdictOverlay {
 public:
  void add(const std::string& verdict, double x, double y, const std::string& title);
  // Points of the new run without a verdict (only in that run): its own black squares.
  void add_unjudged(double x, double y, const std::string& title);
  void append_to(svg::LineChart& chart) const;

 private:
  std::map<std::string, svg::Series> series_;
  svg::Series unjudged_;
};
void add_point(const Context& ctx, std::size_t run, const PointResult& p, double x, double y,
               const std::string& title, svg::Series& series, VerdictOverlay& overlay);
void add_run_series(const Context& ctx, svg::LineChart& chart,
                    std::vector<std::pair<std::size_t, svg::Series>> series,
                    bool verdict_markers = true);
svg::Axis gpu_axis(const std::set<int>& counts);

struct WorkloadCharts {
  std::vector<std::string> svgs;
  std::string note;
};
WorkloadCharts workload_charts(Context& ctx, const std::string& workload);
void size_charts(Context& ctx, const std::string& workload, std::vector<std::string>& svgs,
                 std::string& note);

// ---- sections ----
std::string summary_section(const Context& ctx);
std::string environment_section(const Context& ctx);
std::string verdict_tables(const Context& ctx);
std::string unmatched_section(const Context& ctx);
std::string efficiency_table(const Context& ctx, const std::string& workload);
std::string inputs_section(const Context& ctx);
std::string offers_summary_section(const Context& ctx);
std::string offer_tables(const Context& ctx, const std::string& workload);

}  // namespace mgbench::reports::cmp
