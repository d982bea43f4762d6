// The comparison report's sections for two runs: the summary, the environment changes, a
// verdict table per workload, the points not compared or only in one run, scaling efficiency
// side by side and the inputs.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "compare_internal.hpp"
#include "mgbench/core/json_order.hpp"
#include "mgbench/reports/compare_render.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports::cmp {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A library of "versions.<library>[_built|_loaded|_driver|_runtime]".
std::string library_of(const std::string& path) {
  std::string lib = path.substr(path.find('.') + 1);
  for (const char* suffix : {"_built", "_loaded", "_driver", "_runtime", "_version"}) {
    if (ends_with(lib, suffix)) lib.resize(lib.size() - std::string(suffix).size());
  }
  return lib;
}

// The kind of an environment path in words (driver, a library, VBIOS...).
std::string env_kind(const std::string& path) {
  const std::string p = lower(path);
  const auto has = [&](const char* s) { return p.find(s) != std::string::npos; };
  const auto starts = [&](const char* s) { return p.rfind(s, 0) == 0; };
  if (has("nvls")) return "NCCL setting";
  if (has("vbios")) return "VBIOS";
  if (has("power_limit") || has("power-limit")) return "power limit";
  if (has("clock")) return "clocks";
  if (starts("versions.")) return library_of(p);
  if (has("driver")) return "driver";
  if (starts("gpus[") && ends_with(p, ".name")) return "GPU model";
  if (has("gpu_count")) return "GPU count";
  if (has("ecc") || has("mig") || has("persistence")) return "GPU mode";
  if (has("pcie") || has("nvlink") || has("topology")) return "interconnect";
  if (starts("gpus[")) return "GPU";
  if (starts("host")) return "host";
  if (starts("env")) return "environment variable";
  if (starts("tool")) return "mgbench";
  if (has("fingerprint")) return "fingerprint";
  return "other";
}

std::string env_changes_table(const std::vector<EnvChange>& changes) {
  HtmlTable t;
  t.column("what");
  t.column("field");
  t.column("before");
  t.column("after");
  for (const EnvChange& c : changes) {
    t.add({td(env_kind(c.path)),
           td(c.count > 1 ? fmt::format("{} (x{})", c.path, c.count) : c.path, "path"),
           td(c.before), td(c.after)});
  }
  return t.render();
}

std::string gpus_cell(int gpus) { return td_num(std::to_string(gpus)); }

std::string status_cell(Status status) {
  return td(to_string(status), status == Status::ok ? "" : "bad-status");
}

std::string outcome_line(const Comparison& cmp) {
  const int slower = cmp.count(Verdict::slower);
  const std::size_t compared = cmp.points.size();
  const int exit_code = comparison_exit_code(cmp);
  if (slower > 0) {
    return "<p class=\"outcome bad\">" +
           esc(fmt::format("Regression: {} of {} compared points slower (exit code {}).", slower,
                           compared, exit_code)) +
           "</p>\n";
  }
  return "<p class=\"outcome good\">" +
         esc(fmt::format("No regression: none of {} compared points is slower (exit code {}).",
                         compared, exit_code)) +
         "</p>\n";
}

std::string verdict_row_table(const Context& ctx, const std::vector<const PointComparison*>& rows,
                              const std::vector<std::string>& vary,
                              const Presentation& presentation) {
  const double global = ctx.comparison->options.threshold;
  bool any_test = false, own_threshold = false;
  for (const auto* p : rows) {
    any_test = any_test || p->test.has_value();
    own_threshold = own_threshold || std::fabs(p->threshold - global) > 1e-12;
  }
  HtmlTable t;
  t.column("parameters");
  t.column("GPUs", true);
  t.column(ctx.base_label(), true);
  t.column(ctx.new_label(), true);
  t.column("change", true);
  if (any_test) t.column("p", true);
  if (own_threshold) t.column("threshold", true);
  t.column("verdict");
  t.column("why");
  std::map<std::pair<std::string, int>, int> seen;  // the same parameters on as many GPUs
  for (const auto* p : rows) ++seen[{p->params.dump(), p->gpus}];
  for (const auto* p : rows) {
    const std::string unit = p->quantity.metric.empty() ? "s" : p->quantity.unit;
    const std::string verdict = to_string(p->verdict);
    const bool by_device = seen[{p->params.dump(), p->gpus}] > 1;
    std::vector<std::string> cells = {
        td(params_text(p->params, vary, presentation)),
        td_num(compared_gpus(p->gpus, p->new_devices, by_device)),
        td_num(format_quantity(p->base_value, unit)), td_num(format_quantity(p->new_value, unit)),
        td_num(format_change(p->change))};
    if (any_test) cells.push_back(td_num(p->test ? p_value_text(p->test->p_value) : "-"));
    if (own_threshold) {
      std::string th = format_percent(p->threshold);
      if (p->noise) th += " (noise " + format_percent(p->noise->relative) + ")";
      cells.push_back(td_num(th));
    }
    cells.push_back(td_html(badge(verdict)));
    // A "same" needs no reason unless the median moved by the threshold or more.
    const bool explain = p->verdict != Verdict::same || std::fabs(p->change) >= p->threshold;
    const std::string parts = explain ? parts_change_text(*p) : "";
    cells.push_back(td(explain ? p->reason + (parts.empty() ? "" : "; " + parts) : "", "why"));
    t.add(std::move(cells), "v-" + slug(verdict));
  }
  return t.render();
}

std::string points_table(const std::string& title, const std::vector<UnmatchedPoint>& items) {
  if (items.empty()) return {};
  HtmlTable t;
  t.column("workload");
  t.column("parameters");
  t.column("GPUs", true);
  t.column("status");
  for (const UnmatchedPoint& p : items) {
    t.add({td(p.workload), td(format_params(p.params)), gpus_cell(p.gpus), status_cell(p.status)});
  }
  return "<h3>" + esc(title) + "</h3>\n" + t.render();
}

}  // namespace

std::string summary_section(const Context& ctx) {
  const Comparison& cmp = *ctx.comparison;
  std::string out = section_open("summary", "Summary") + outcome_line(cmp);
  out += "<div class=\"chips\">";
  for (const auto& v : kVerdicts) {
    int n = 0;
    for (const PointComparison& p : cmp.points) n += to_string(p.verdict) == std::string(v.name);
    out += badge(v.name, fmt::format("{} {}", n, v.name), n == 0 ? "zero" : "");
  }
  const std::pair<std::size_t, std::string> extra[] = {
      {cmp.not_compared.size(), "not compared"},
      {cmp.only_in_base.size(), "only in " + ctx.base_label()},
      {cmp.only_in_new.size(), "only in " + ctx.new_label()}};
  for (const auto& [n, text] : extra) {
    if (n > 0) out += "<span class=\"plain\">" + esc(fmt::format("{} {}", n, text)) + "</span>";
  }
  out += "</div>\n";
  const std::string rule = fmt::format(
      "Verdicts: two-sided Mann-Whitney U test on the raw samples (alpha {:g}) and an effect on "
      "the median of at least the threshold ({}); points noisy or throttled in either run are "
      "noisy, never slower.",
      cmp.options.alpha, format_percent(cmp.options.threshold));
  return out + caption(rule) + "</section>\n";
}

std::string environment_section(const Context& ctx) {
  std::string out = section_open("environment", "Environment changes");
  if (!ctx.offers) {
    const Comparison& cmp = *ctx.comparison;
    if (cmp.environment.empty()) {
      out += "<p class=\"note\">" +
             esc("No environment changes between the fingerprints of " + ctx.base_label() +
                 " and " + ctx.new_label() + ".") +
             "</p>\n";
    } else {
      out += caption(ctx.base_label() + " \u2192 " + ctx.new_label() +
                     ": most important first (driver, CUDA, NCCL, cuBLAS, VBIOS, power limit, "
                     "clocks, GPU model, host...).");
      out += env_changes_table(cmp.environment);
    }
    if (cmp.fingerprint_differs) {
      out +=
          "<p class=\"note\">The environment fingerprints differ (GPU model, count, driver, "
          "CUDA or NCCL): the runs did not measure the same system.</p>\n";
    }
    if (!cmp.implementation_changes.empty()) {
      out += "<p class=\"note\">" +
             esc(std::to_string(cmp.implementation_changes.size()) +
                 " point(s) ran different code versions (e.g. " +
                 cmp.implementation_changes.front() +
                 "): a changed number there is not evidence of a driver change.") +
             "</p>\n";
    }
    return out + "</section>\n";
  }
  out += caption("Each offer's environment against " + ctx.base_label() + "'s.");
  for (std::size_t i = 1; i < ctx.runs.size(); ++i) {
    const auto changes = diff_runs(*ctx.runs[0], *ctx.runs[i]);
    out += "<h3>" + esc(ctx.labels[0] + " \u2192 " + ctx.labels[i]) + "</h3>\n";
    out += changes.empty() ? "<p class=\"note\">No differences.</p>\n" : env_changes_table(changes);
  }
  return out + "</section>\n";
}

std::string verdict_tables(const Context& ctx) {
  const Comparison& cmp = *ctx.comparison;
  if (cmp.points.empty()) return {};
  std::vector<std::string> workloads;
  for (const PointComparison& p : cmp.points) {
    if (std::find(workloads.begin(), workloads.end(), p.workload) == workloads.end())
      workloads.push_back(p.workload);
  }
  std::string out = section_open("verdicts", "Verdicts");
  out += "<p class=\"legend-line\">" + badge("slower") + " " + badge("faster") + " " +
         badge("noisy") + " " + badge("same") + " " +
         esc("\u2014 the same colours and shapes mark " + ctx.new_label() +
             "'s points in the charts.") +
         "</p>\n";
  for (const auto& w : workloads) {
    // One table per compared quantity: a workload's 1-GPU points may be compared on time while
    // the others are on its headline (all-reduce busbw is undefined on one GPU).
    std::vector<std::string> quantities;
    for (const PointComparison& p : cmp.points) {
      const std::string q = p.quantity.metric;
      if (p.workload == w && std::find(quantities.begin(), quantities.end(), q) == quantities.end())
        quantities.push_back(q);
    }
    out += "<h3 id=\"" + esc("verdicts-" + slug(w)) + "\">" + esc(w) + "</h3>\n";
    for (const std::string& q : quantities) {
      std::vector<const PointComparison*> rows;
      std::vector<const Params*> params;
      for (const PointComparison& p : cmp.points) {
        if (p.workload != w || p.quantity.metric != q) continue;
        rows.push_back(&p);
        params.push_back(&p.params);
      }
      const auto vary = varying_keys(params);
      const Presentation& presentation = ctx.presentation_of(w);
      std::string cap = quantity_caption(rows[0]->quantity, true);
      const std::string fixed = fixed_params_text(params, vary, presentation);
      if (!fixed.empty()) cap += " Same in every row: " + fixed + ".";
      out += caption(cap) + verdict_row_table(ctx, rows, vary, presentation);
    }
  }
  return out + "</section>\n";
}

std::string unmatched_section(const Context& ctx) {
  const Comparison& cmp = *ctx.comparison;
  if (cmp.not_compared.empty() && cmp.only_in_base.empty() && cmp.only_in_new.empty()) return {};
  std::string out = section_open("unmatched", "Not compared and unmatched points");
  if (!cmp.not_compared.empty()) {
    out += "<h3>Not compared (not ok in both runs)</h3>\n";
    HtmlTable t;
    t.column("workload");
    t.column("parameters");
    t.column("GPUs", true);
    t.column(ctx.base_label() + " status");
    t.column(ctx.new_label() + " status");
    t.column("message");
    for (const NotCompared& p : cmp.not_compared) {
      t.add({td(p.workload), td(format_params(p.params)), gpus_cell(p.gpus),
             status_cell(p.base_status), status_cell(p.new_status), td(p.message, "why")});
    }
    out += t.render();
  }
  out += points_table("Only in " + ctx.base_label(), cmp.only_in_base);
  out += points_table("Only in " + ctx.new_label(), cmp.only_in_new);
  return out + "</section>\n";
}

std::string efficiency_table(const Context& ctx, const std::string& workload) {
  if (ctx.offers) return {};
  std::vector<const EfficiencyRow*> rows;
  std::vector<const Params*> params;
  for (const EfficiencyRow& r : ctx.comparison->efficiency) {
    if (r.workload != workload) continue;
    rows.push_back(&r);
    params.push_back(&r.params);
  }
  if (rows.empty()) return {};
  // Numeric order of the parameters (batch 32 before 128), then GPU count.
  std::stable_sort(rows.begin(), rows.end(), [](const EfficiencyRow* a, const EfficiencyRow* b) {
    if (const int c = compare_values(Json(a->params), Json(b->params))) return c < 0;
    return a->gpus < b->gpus;
  });
  const auto vary = varying_keys(params);
  const Presentation& presentation = ctx.presentation_of(workload);
  HtmlTable t;
  t.column("parameters");
  t.column("GPUs", true);
  t.column(ctx.base_label(), true);
  t.column(ctx.new_label(), true);
  t.column("difference", true);
  for (const EfficiencyRow* r : rows) {
    std::string diff = "-";
    if (r->base && r->next) {
      const double pp = std::round((*r->next - *r->base) * 1000.0) / 10.0;  // no "-0.0"
      diff = pp == 0 ? "0.0 pp" : fmt::format("{:+.1f} pp", pp);
    }
    t.add({td(params_text(r->params, vary, presentation)), gpus_cell(r->gpus),
           td_num(r->base ? format_percent(*r->base) : "-"),
           td_num(r->next ? format_percent(*r->next) : "-"), td_num(diff)});
  }
  std::string cap = "Scaling efficiency at each GPU count, side by side (pp: percentage points).";
  const std::string fixed = fixed_params_text(params, vary, presentation);
  if (!fixed.empty()) cap += " Same in every row: " + fixed + ".";
  return "<h3>Scaling efficiency</h3>\n" + caption(cap) + t.render();
}

std::string inputs_section(const Context& ctx) {
  HtmlTable t;
  for (const char* h : {"label", "file", "host", "started", "mgbench", "GPUs", "driver", "points"})
    t.column(h);
  for (std::size_t i = 0; i < ctx.runs.size(); ++i) {
    const RunResult& run = *ctx.runs[i];
    std::string path;
    if (i < 2) path = i == 0 ? ctx.comparison->base_path : ctx.comparison->new_path;
    const OfferSummary s = summarize_offer(Offer{ctx.labels[i], path, &run, std::nullopt});
    std::string tool = json_string(run.tool, "version");
    const std::string rev = json_string(run.tool, "git_revision");
    if (!rev.empty()) tool += (tool.empty() ? "(" : " (") + rev + ")";
    t.add({td(ctx.labels[i]), td(path, "path"), td(run.host.empty() ? s.host : run.host),
           td(run.started_at), td(tool),
           td(s.gpu_count > 0 ? fmt::format("{} x{}", s.gpu_model, s.gpu_count) : s.gpu_model),
           td(s.driver.empty() ? "-" : s.driver), td(status_counts(run))});
  }
  return section_open("inputs", "Inputs") + t.render() + "</section>\n";
}

}  // namespace mgbench::reports::cmp
