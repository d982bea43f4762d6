// The comparison report's context (typed comparison, runs, presentation), verdict styles and
// the text and HTML table helpers its sections share (compare_internal.hpp).
#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "compare_internal.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports::cmp {

const VerdictStyle kVerdicts[4] = {{"slower", "\u25BC", 4, 3},
                                   {"faster", "\u25B2", 2, 2},
                                   {"noisy", "\u25C6", 3, 1},
                                   {"same", "\u25A0", 6, 0}};

const VerdictStyle& verdict_style(const std::string& verdict) {
  static const VerdictStyle kUnknown = {"", "?", 6, 0};
  for (const auto& v : kVerdicts) {
    if (verdict == v.name) return v;
  }
  return kUnknown;
}

int run_colour(std::size_t run) {
  static const int kColours[] = {0, 6, 1, 5, 2, 3, 4};
  return kColours[run % 7];
}

// ---- context -------------------------------------------------------------------------------

std::string Context::chart_id(const std::string& text) {
  std::string id = slug("cmp-" + text);
  if (id.size() > 64) id.resize(64);
  while (!id.empty() && id.back() == '-') id.pop_back();
  if (ids.insert(id).second) return id;
  for (int k = 2;; ++k) {
    const std::string candidate = id + "-" + std::to_string(k);
    if (ids.insert(candidate).second) return candidate;
  }
}

const PointComparison* Context::verdict_of(const PointResult& p) const {
  const auto it = verdicts.find(point_key(p));
  return it == verdicts.end() ? nullptr : it->second;
}

const Presentation& Context::presentation_of(const std::string& workload) const {
  static const Presentation kNone;
  const auto it = presentation.find(workload);
  return it == presentation.end() ? kNone : it->second;
}

Context make_context(const CompareReportInput& input) {
  Context ctx;
  ctx.comparison = input.comparison;
  ctx.offer_cmp = input.offers;
  ctx.offers = input.offers != nullptr;
  for (const RunResult* r : input.runs) {
    if (r) ctx.runs.push_back(r);
  }
  for (std::size_t i = 0; i < ctx.runs.size(); ++i) {
    ctx.labels.push_back(i < input.labels.size() && !input.labels[i].empty()
                             ? input.labels[i]
                             : "run " + std::to_string(i + 1));
  }
  for (const RunResult* r : ctx.runs) {
    for (const auto& w : workloads_of(*r)) {
      if (std::find(ctx.workloads.begin(), ctx.workloads.end(), w) != ctx.workloads.end()) continue;
      ctx.workloads.push_back(w);
      ctx.presentation.emplace(w, presentation_for(*r, w));
    }
  }
  if (ctx.comparison != nullptr) {
    for (const PointComparison& p : ctx.comparison->points) ctx.verdicts.emplace(p.key, &p);
  }
  return ctx;
}

Points ok_points(const RunResult& run, const std::string& workload) {
  Points out;
  std::set<std::string> seen;
  for (const auto* p : points_of(run, workload)) {
    if (p->status != Status::ok) continue;
    if (seen.insert(point_key(*p)).second) out.push_back(p);
  }
  return out;
}

// ---- text ----------------------------------------------------------------------------------

std::string esc(const std::string& text) { return escape_xml(text); }

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string badge(const std::string& verdict, const std::string& text,
                  const std::string& extra_class) {
  const VerdictStyle& s = verdict_style(verdict);
  std::string cls = s.name[0] ? std::string(" v-") + s.name : std::string();
  if (!extra_class.empty()) cls += " " + extra_class;
  return "<span class=\"verdict" + cls + "\"><span class=\"sym\" aria-hidden=\"true\">" + s.symbol +
         "</span>" + esc(text.empty() ? verdict : text) + "</span>";
}

std::string p_value_text(double p) {
  if (!std::isfinite(p)) return "-";
  if (p < 1e-4) return fmt::format("{:.1e}", p);
  return fmt::format("{:.4f}", p);
}

namespace {
// The merged parameters of the presentation's first params column ("m", "n", "k").
std::vector<std::string> merged_params(const Presentation& presentation) {
  for (const TableSpec& t : presentation.tables) {
    for (const ColumnSpec& c : t.columns) {
      if (c.kind == ColumnKind::params && !c.merge.empty()) return c.merge;
    }
  }
  return {};
}
}  // namespace

std::string params_text(const Params& params, const std::vector<std::string>& keys,
                        const Presentation& presentation) {
  const std::vector<std::string> merged = merged_params(presentation);
  bool merge = !merged.empty();
  for (const auto& k : merged) {
    const ParamValue* value = params.find(k);
    merge = merge && value != nullptr && *value == params.at(merged.front()) &&
            std::find(keys.begin(), keys.end(), k) != keys.end();
  }
  std::string joined;
  for (const auto& k : merged) joined += (joined.empty() ? "" : "=") + k;
  std::string out;
  for (const auto& k : keys) {
    if (!params.contains(k)) continue;
    if (merge && k != merged.front() &&
        std::find(merged.begin(), merged.end(), k) != merged.end())
      continue;
    out += (out.empty() ? "" : " ") + (merge && k == merged.front() ? joined : k) + "=" +
           params.str(k);
  }
  return out.empty() ? "-" : out;
}

std::set<std::string> axis_params(const Presentation& presentation) {
  std::set<std::string> out;
  for (const AxisSpec& a : presentation.axes) {
    out.insert(a.param);
    out.insert(a.companions.begin(), a.companions.end());
  }
  return out;
}

std::string set_label(const Params& params, const std::vector<std::string>& keys,
                      const Presentation& presentation) {
  std::vector<std::string> shown, bytes;
  for (const auto& k : keys) {
    const AxisSpec* a = presentation.find_axis(k);
    bool companion = false;
    for (const AxisSpec& other : presentation.axes) {
      const auto& c = other.companions;
      if (other.format_ == ValueFormat::bytes && std::find(c.begin(), c.end(), k) != c.end())
        companion = true;
    }
    if (a != nullptr && a->format_ == ValueFormat::bytes) {
      bytes.push_back(k);
    } else if (!companion) {
      shown.push_back(k);
    }
  }
  std::string out = params_short_label(params, shown);
  for (const auto& k : bytes) {
    if (const auto b = param_number(params, k)) {
      out += (out.empty() ? "" : " · ") + format_bytes_iec(*b);
    }
  }
  return out;
}

std::optional<double> size_value(const Params& params, const Presentation& presentation) {
  for (const AxisSpec& a : presentation.axes) {
    if (const auto v = param_number(params, a.param)) return v;
  }
  return std::nullopt;
}

// ---- HTML ----------------------------------------------------------------------------------

void HtmlTable::column(const std::string& title, bool numeric) {
  header.emplace_back(esc(title), numeric);
}

void HtmlTable::add(std::vector<std::string> cells, std::string cls) {
  rows.push_back(std::move(cells));
  row_classes.push_back(std::move(cls));
}

std::string HtmlTable::render(const std::string& id) const {
  std::string out = "<div class=\"table-wrap\"><table class=\"data\"";
  if (!id.empty()) out += " id=\"" + esc(id) + "\"";
  out += ">\n<thead><tr>";
  for (const auto& [h, numeric] : header) {
    out += numeric ? "<th class=\"num\">" : "<th>";
    out += h + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out += row_classes[r].empty() ? "<tr>" : "<tr class=\"" + esc(row_classes[r]) + "\">";
    for (const auto& c : rows[r]) out += c;
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string td(const std::string& text, const std::string& cls) {
  return (cls.empty() ? "<td>" : "<td class=\"" + cls + "\">") + esc(text) + "</td>";
}

std::string td_num(const std::string& text, const std::string& extra) {
  return "<td class=\"num" + (extra.empty() ? std::string() : " " + extra) + "\">" + esc(text) +
         "</td>";
}

std::string td_html(const std::string& html, const std::string& cls) {
  return (cls.empty() ? "<td>" : "<td class=\"" + cls + "\">") + html + "</td>";
}

std::string section_open(const std::string& id, const std::string& title) {
  return "<section id=\"" + esc(id) + "\">\n<h2>" + esc(title) + "</h2>\n";
}

std::string caption(const std::string& text) {
  return "<p class=\"caption\">" + esc(text) + "</p>\n";
}

std::string quantity_caption(const Quantity& q, bool with_change) {
  const std::string change = with_change ? " Change = new / base - 1." : "";
  if (q.metric.empty()) return "Compared: median time per op (lower is better)." + change;
  return "Compared: " + q.metric + (q.unit.empty() ? "" : " (" + q.unit + ")") + ", " +
         (q.higher_is_better ? "higher" : "lower") + " is better." + change;
}

std::string fixed_params_text(const std::vector<const Params*>& params,
                              const std::vector<std::string>& vary,
                              const Presentation& presentation) {
  if (params.empty()) return {};
  std::vector<std::string> fixed;
  for (const auto& [key, value] : *params[0]) {
    if (std::find(vary.begin(), vary.end(), key) == vary.end()) fixed.push_back(key);
  }
  return fixed.empty() ? std::string() : params_text(*params[0], fixed, presentation);
}

}  // namespace mgbench::reports::cmp
