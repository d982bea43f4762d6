// The JSON forms of a comparison (`mgbench compare --json`, the report's input): the two-run
// gate and the offer table.
#include <cstddef>
#include <utility>

#include "compare_detail.hpp"
#include "mgbench/analysis/compare.hpp"

namespace mgbench {

using namespace compare_detail;

namespace {

Json point_json(const PointComparison& p) {
  Json noise = nullptr;
  if (p.noise) noise = Json{{"relative", p.noise->relative}, {"runs", p.noise->runs}};
  Json j{{"key", p.key},
              {"workload", p.workload},
              {"params", Json(p.params)},
              {"gpus", p.gpus},
              {"base_devices", p.base_devices},
              {"new_devices", p.new_devices},
              {"quantity", quantity_json(p.quantity)},
              {"base", p.base_value},
              {"new", p.new_value},
              {"change", p.change},
              {"threshold", p.threshold},
              {"noise", noise},
              {"test", test_json(p.test)},
              {"verdict", to_string(p.verdict)},
              {"reason", p.reason},
              {"base_of_peak", p.base_of_peak ? Json(*p.base_of_peak) : Json()},
              {"new_of_peak", p.new_of_peak ? Json(*p.new_of_peak) : Json()}};
  if (!p.parts.empty()) {
    Json parts = Json::array();
    for (const PartChange& part : p.parts) {
      parts.push_back(Json{{"label", part.label}, {"base_s", part.base_s}, {"new_s", part.new_s}});
    }
    j["parts"] = std::move(parts);
  }
  return j;
}

Json unmatched_json(const std::vector<UnmatchedPoint>& list) {
  Json out = Json::array();
  for (const UnmatchedPoint& p : list) {
    out.push_back(Json{{"key", p.key},
                       {"workload", p.workload},
                       {"params", Json(p.params)},
                       {"gpus", p.gpus},
                       {"status", to_string(p.status)}});
  }
  return out;
}

Json offer_cell_json(const OfferCell& c) {
  if (!c.present) return nullptr;
  return Json{{"status", to_string(c.status)},
              {"unreliable", c.unreliable},
              {"throughput", optional_json(c.throughput)},
              {"efficiency", optional_json(c.efficiency)},
              {"per_watt", optional_json(c.per_watt)},
              {"per_dollar", optional_json(c.per_dollar)}};
}

}  // namespace

Json comparison_to_json(const Comparison& cmp) {
  Json j;
  j["kind"] = "comparison";
  j["base"] = Json{{"label", cmp.base_label}, {"path", cmp.base_path}};
  j["new"] = Json{{"label", cmp.new_label}, {"path", cmp.new_path}};
  j["options"] = Json{{"threshold", cmp.options.threshold},
                      {"alpha", cmp.options.alpha},
                      {"noise_k", cmp.options.noise_k},
                      {"throttle_limit", cmp.options.throttle_limit}};
  j["fingerprint_differs"] = cmp.fingerprint_differs;
  Json env = Json::array();
  for (const EnvChange& c : cmp.environment) {
    env.push_back(
        Json{{"path", c.path}, {"before", c.before}, {"after", c.after}, {"count", c.count}});
  }
  j["environment"] = std::move(env);
  Json points = Json::array();
  for (const PointComparison& p : cmp.points) points.push_back(point_json(p));
  j["points"] = std::move(points);
  Json nc = Json::array();
  for (const NotCompared& p : cmp.not_compared) {
    nc.push_back(Json{{"key", p.key},
                      {"workload", p.workload},
                      {"params", Json(p.params)},
                      {"gpus", p.gpus},
                      {"base_status", to_string(p.base_status)},
                      {"new_status", to_string(p.new_status)},
                      {"message", p.message}});
  }
  j["not_compared"] = std::move(nc);
  j["only_in_base"] = unmatched_json(cmp.only_in_base);
  j["only_in_new"] = unmatched_json(cmp.only_in_new);
  Json eff = Json::array();
  for (const EfficiencyRow& r : cmp.efficiency) {
    eff.push_back(Json{{"workload", r.workload},
                       {"params", Json(r.params)},
                       {"gpus", r.gpus},
                       {"base", optional_json(r.base)},
                       {"new", optional_json(r.next)}});
  }
  j["efficiency"] = std::move(eff);
  j["summary"] =
      Json{{"same", cmp.count(Verdict::same)},        {"faster", cmp.count(Verdict::faster)},
           {"slower", cmp.count(Verdict::slower)},    {"noisy", cmp.count(Verdict::noisy)},
           {"not_compared", cmp.not_compared.size()}, {"only_in_base", cmp.only_in_base.size()},
           {"only_in_new", cmp.only_in_new.size()},   {"exit_code", comparison_exit_code(cmp)}};
  j["inconclusive_reason"] = inconclusive_reason(cmp);
  j["test_hooks_differ"] = cmp.hooks_differ;
  j["implementation_changes"] = cmp.implementation_changes;
  return j;
}

Json offers_to_json(const OfferComparison& cmp) {
  Json j;
  j["kind"] = "offers";
  j["units"] = Json{
      {"per_dollar", "throughput per (USD per hour): throughput / (price per GPU-hour x GPUs)"},
      {"per_watt", "throughput per watt of average GPU power"}};
  Json offers = Json::array();
  for (const OfferSummary& s : cmp.offers) {
    offers.push_back(Json{{"label", s.label},
                          {"path", s.path},
                          {"host", s.host},
                          {"gpu_model", s.gpu_model},
                          {"gpu_count", s.gpu_count},
                          {"nodes", s.nodes},
                          {"interconnect", s.interconnect},
                          {"driver", s.driver},
                          {"cuda", s.cuda},
                          {"nccl", s.nccl},
                          {"platform", s.platform},
                          {"price_per_gpu_hour", optional_json(s.price_per_gpu_hour)}});
  }
  j["offers"] = std::move(offers);
  Json tables = Json::array();
  for (const OfferTable& t : cmp.tables) {
    Json rows = Json::array();
    for (const OfferRow& r : t.rows) {
      Json cells = Json::array();
      for (const OfferCell& c : r.cells) cells.push_back(offer_cell_json(c));
      // The best offer's label, null without one or on a tie ("tie_*" lists the tied labels).
      Json row{{"params", Json(r.params)}, {"gpus", r.gpus}, {"cells", std::move(cells)}};
      const std::pair<const char*, const BestOffer*> bests[] = {
          {"throughput", &r.best_throughput},
          {"per_watt", &r.best_per_watt},
          {"per_dollar", &r.best_per_dollar}};
      for (const auto& [name, best] : bests) {
        const auto label = [&](int i) { return cmp.offers[static_cast<std::size_t>(i)].label; };
        row[std::string("best_") + name] =
            best->offer >= 0 && !best->tie() ? Json(label(best->offer)) : Json(nullptr);
        if (best->tie()) {
          Json tied = Json::array();
          for (int i : best->tied) tied.push_back(label(i));
          row[std::string("tie_") + name] = std::move(tied);
        }
      }
      if (!r.devices.empty()) row["devices"] = r.devices;
      if (r.predicted) row["predicted"] = true;
      rows.push_back(std::move(row));
    }
    tables.push_back(Json{{"workload", t.workload},
                          {"quantity", quantity_json(t.quantity)},
                          {"per_gpu_quantity", t.per_gpu_quantity},
                          {"rows", std::move(rows)}});
  }
  j["tables"] = std::move(tables);
  if (cmp.predicted_gpus) {
    j["predicted_gpus"] = *cmp.predicted_gpus;
    j["not_predicted"] = cmp.not_predicted;
  }
  return j;
}

}  // namespace mgbench
