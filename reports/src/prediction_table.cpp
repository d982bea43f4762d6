// Console rendering of a prediction (see prediction_table.hpp).
#include "mgbench/reports/prediction_table.hpp"

#include <fmt/format.h>

#include <string>

#include "mgbench/reports/compare_render.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/table.hpp"

namespace mgbench::reports {

namespace {

std::string link_line(const char* what, const LinkChoice& c) {
  std::string text = fmt::format("{}: {}, {} GB/s per GPU and direction", what, c.link.name,
                                 format_sig(c.link.bandwidth_GBps));
  if (c.link.line_GBps > 0) text += fmt::format(" (line rate {})", format_sig(c.link.line_GBps));
  text += fmt::format(", {} us per hop", format_sig(c.link.hop_latency_us, 2));
  if (c.link.nvls_efficiency > 0) {
    text += fmt::format(", NVLS x{}", format_sig(c.link.nvls_efficiency, 2));
  }
  return text + "; " + c.origin;
}

std::string band_text(const Band& b, bool seconds) {
  return seconds ? format_seconds(b.low) + " - " + format_seconds(b.high)
                 : format_sig(b.low) + " - " + format_sig(b.high);
}

std::string percent_band(const Band& b) {
  return format_percent(b.low, 0) + " - " + format_percent(b.high, 0);
}

std::string comm_text(const PredictedRow& r) {
  if (r.comm_s <= 0) return "-";
  return format_seconds(r.exposed_s) + " / " + format_seconds(r.hidden_s);
}

std::string measured_text(const PredictedRow& r) {
  if (!r.measured) return "";
  const MeasuredAt& m = *r.measured;
  std::string text = format_seconds(m.time_s);
  if (m.efficiency) text += " (" + format_percent(*m.efficiency, 0) + ")";
  return text;
}

Table series_table(const PredictedSeries& s) {
  Table t;
  t.title = s.workload;
  t.caption = format_params(s.params) + "; " + s.basis;
  const std::string unit = s.unit.empty() ? "throughput" : s.unit;
  t.column("GPUs", Align::right).column("nodes", Align::right);
  t.column("time", Align::right).column("band", Align::right);
  t.column(unit, Align::right).column("efficiency", Align::right).column("band", Align::right);
  t.column("compute", Align::right).column("comm exposed / hidden", Align::right);
  t.column("dominant").column("algorithm");
  t.column("measured", Align::right).column("measured / predicted", Align::right);
  for (const auto& r : s.rows) {
    const bool below = r.measured && r.measured->ratio < 0.85;
    t.add_row({std::to_string(r.gpus), std::to_string(r.nodes), format_seconds(r.time_s),
               band_text(r.time, true), r.throughput ? format_sig(*r.throughput) : "-",
               r.efficiency ? format_percent(*r.efficiency, 1) : "-",
               r.efficiency ? percent_band(r.efficiency_band) : "", format_seconds(r.compute_s),
               comm_text(r), r.dominant, r.algorithm.empty() ? "-" : r.algorithm, measured_text(r),
               r.measured ? format_sig(r.measured->ratio, 3) : ""},
              below ? RowTone::warn : RowTone::normal);
  }
  t.drop_empty_columns();
  return t;
}

Table checks_table(const std::vector<ComputeCheck>& checks) {
  Table t;
  t.title = "One GPU: compute composed from the run's GEMM, memory and host-copy points";
  t.column("workload").column("parameters");
  t.column("measured", Align::right).column("composed", Align::right);
  t.column("error", Align::right).column("GEMM", Align::right);
  t.column("memory", Align::right).column("host copy", Align::right);
  for (const auto& c : checks) {
    t.add_row({c.workload, format_params(c.params), format_seconds(c.measured_s),
               format_seconds(c.composed_s), format_change(c.error), format_seconds(c.gemm_s),
               format_seconds(c.memory_s), format_seconds(c.host_copy_s)});
    for (const auto& ref : c.references) t.notes.push_back(c.workload + ": " + ref);
  }
  return t;
}

}  // namespace

void render_prediction(const Prediction& p, std::ostream& out) {
  out << link_line("intra-node", p.intra) << '\n'
      << link_line("inter-node", p.inter) << '\n'
      << fmt::format("{} GPUs per node; NVLS {}; per-call overhead {} ({})\n", p.gpus_per_node,
                     p.nvls ? "on" : "off", format_seconds(p.call_overhead_s),
                     p.call_overhead_origin);
  out << "Weak scaling: the per-GPU work of each point is kept. Band: compute and communication "
         "each off by their uncertainty.\n";
  for (const auto& s : p.series) {
    out << '\n';
    render_text(series_table(s), out);
  }
  if (!p.compute_checks.empty()) {
    out << '\n';
    render_text(checks_table(p.compute_checks), out);
  }
  if (!p.notes.empty()) {
    out << "\nNotes:\n";
    for (const auto& note : p.notes) out << "  " << one_line(note) << '\n';
  }
}

}  // namespace mgbench::reports
