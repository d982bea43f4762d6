// The prediction as JSON (`mgbench predict --json`).
#include "compare_detail.hpp"
#include "mgbench/analysis/prediction.hpp"

namespace mgbench {

using compare_detail::optional_json;

namespace {

Json band_json(const Band& band) { return Json{{"low", band.low}, {"high", band.high}}; }

Json link_json(const LinkChoice& choice) {
  const Link& l = choice.link;
  return Json{{"name", l.name},
              {"scope", to_string(l.scope)},
              {"line_GBps", l.line_GBps > 0 ? Json(l.line_GBps) : Json(nullptr)},
              {"bandwidth_GBps", l.bandwidth_GBps},
              {"hop_latency_us", l.hop_latency_us},
              {"nvls_efficiency", l.nvls_efficiency},
              {"origin", choice.origin},
              {"calibrated", choice.calibrated},
              {"source", l.source}};
}

Json row_json(const PredictedRow& r) {
  Json j{{"gpus", r.gpus},
         {"nodes", r.nodes},
         {"time_s", r.time_s},
         {"time_band_s", band_json(r.time)},
         {"throughput", optional_json(r.throughput)},
         {"throughput_band", r.throughput ? band_json(r.throughput_band) : Json(nullptr)},
         {"efficiency", optional_json(r.efficiency)},
         {"efficiency_band", r.efficiency ? band_json(r.efficiency_band) : Json(nullptr)},
         {"compute_s", r.compute_s},
         {"comm_s", r.comm_s},
         {"exposed_comm_s", r.exposed_s},
         {"hidden_comm_s", r.hidden_s},
         {"exposed_intra_s", r.exposed_intra_s},
         {"exposed_inter_s", r.exposed_inter_s},
         {"dominant", r.dominant},
         {"algorithm", r.algorithm},
         {"measured", nullptr}};
  if (r.measured) {
    const MeasuredAt& m = *r.measured;
    j["measured"] = Json{{"point_index", m.point_index},
                         {"time_s", m.time_s},
                         {"throughput", optional_json(m.throughput)},
                         {"efficiency", optional_json(m.efficiency)},
                         {"ratio", m.ratio}};
  }
  return j;
}

}  // namespace

void to_json(Json& j, const Prediction& p) {
  Json series = Json::array();
  for (const auto& s : p.series) {
    Json rows = Json::array();
    for (const auto& r : s.rows) rows.push_back(row_json(r));
    series.push_back(Json{{"workload", s.workload},
                          {"params", s.params},
                          {"metric", s.metric},
                          {"unit", s.unit},
                          {"basis", s.basis},
                          {"rows", rows}});
  }
  Json checks = Json::array();
  for (const auto& c : p.compute_checks) {
    checks.push_back(Json{{"workload", c.workload},
                          {"params", c.params},
                          {"measured_s", c.measured_s},
                          {"composed_s", c.composed_s},
                          {"error", c.error},
                          {"gemm_s", c.gemm_s},
                          {"memory_s", c.memory_s},
                          {"host_copy_s", c.host_copy_s},
                          {"references", c.references}});
  }
  j = Json{{"intra", link_json(p.intra)},
           {"inter", link_json(p.inter)},
           {"gpus_per_node", p.gpus_per_node},
           {"nvls", p.nvls},
           {"call_overhead_s", p.call_overhead_s},
           {"call_overhead_origin", p.call_overhead_origin},
           {"series", series},
           {"compute_checks", checks},
           {"notes", p.notes}};
}

}  // namespace mgbench
