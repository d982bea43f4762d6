// The offer comparison (cloud A vs cloud B vs bare metal): a summary of each offer's machine and
// one table per workload with throughput, efficiency, per watt and per dollar side by side.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <utility>
#include <vector>

#include "compare_detail.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/analysis/prediction.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/model/point_view.hpp"
#include "mgbench/model/telemetry_keys.hpp"

namespace mgbench {

using namespace compare_detail;

namespace {

// ---- the offer's machine -------------------------------------------------------------------

const Json& object_at(const Json& env, const char* key) {
  static const Json empty = Json::object();
  return env.contains(key) && env[key].is_object() ? env[key] : empty;
}

const Json& array_at(const Json& env, const char* key) {
  static const Json empty = Json::array();
  return env.contains(key) && env[key].is_array() ? env[key] : empty;
}

// GPU model and count: environment.gpus[], else the largest point.
void describe_gpus(const Json& env, const RunResult& run, OfferSummary& s) {
  std::vector<std::pair<std::string, int>> models;
  for (const Json& gpu : array_at(env, "gpus")) {
    const std::string name = find_string(gpu, {"name", "model"});
    auto it = std::find_if(models.begin(), models.end(),
                           [&](const auto& m) { return m.first == name; });
    if (it == models.end())
      models.emplace_back(name, 1);
    else
      it->second += 1;
    ++s.gpu_count;
  }
  // Points across nodes ran on more GPUs than the submitting host's environment lists.
  for (const PointResult& p : run.points) {
    s.gpu_count = std::max(s.gpu_count, p.gpus);
    s.nodes = std::max(s.nodes, p.placement.nodes);
  }
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string name = models[i].first.empty() ? "unknown GPU" : models[i].first;
    s.gpu_model += (i ? " + " : "") + name +
                   (models.size() > 1 ? " x" + std::to_string(models[i].second) : "");
  }
  if (s.gpu_model.empty()) s.gpu_model = "unknown";
}

// Versions: environment.versions.{driver, cuda_driver, ...} (fingerprint.cpp), or flat
// "<name>_version" keys.
void describe_versions(const Json& env, OfferSummary& s) {
  const Json& versions = object_at(env, "versions");
  auto version = [&](std::initializer_list<const char*> nested,
                     std::initializer_list<const char*> flat) {
    std::string v = find_string(versions, nested);
    return v.empty() ? find_string(env, flat) : v;
  };
  s.driver = version({"driver"}, {"driver_version"});
  s.cuda = version({"cuda_driver", "cuda_runtime"},
                   {"cuda_driver_version", "cuda_runtime_version", "cuda_version"});
  s.nccl = version({"nccl_loaded", "nccl_built"},
                   {"nccl_version_loaded", "nccl_version_built", "nccl_version"});
}

// The most NVLink links up on any GPU (0 when none reports a count); `nvlink` is set when a
// GPU has a link up.
long nvlink_links_up(const Json& gpus, bool& nvlink) {
  long links_up = 0;
  auto take = [&](const Json& object, const char* key) {
    if (object.contains(key) && object[key].is_number() && object[key].get<double>() > 0) {
      nvlink = true;
      links_up = std::max(links_up, object[key].get<long>());
    }
  };
  for (const Json& gpu : gpus) {
    if (!gpu.is_object()) continue;
    if (gpu.contains("nvlink") && gpu["nvlink"].is_object()) {
      for (const char* key : {"links_up", "active_links", "links_active"}) {
        take(gpu["nvlink"], key);
      }
    }
    for (const char* key : {"nvlink_links_up", "nvlink_active_links"}) take(gpu, key);
  }
  return links_up;
}

// An "NV#" cell anywhere in the topology matrix.
bool topology_has_nvlink(const Json& env) {
  if (!(env.contains("topology") && env["topology"].is_object() &&
        env["topology"].contains("matrix"))) {
    return false;
  }
  bool nvlink = false;
  for (const Json& row : env["topology"]["matrix"]) {
    if (!row.is_array()) continue;
    for (const Json& cell : row) {
      if (!cell.is_string()) continue;
      const std::string text = cell.get<std::string>();
      if (text.size() >= 3 && text[0] == 'N' && text[1] == 'V' &&
          std::isdigit(static_cast<unsigned char>(text[2]))) {
        nvlink = true;
      }
    }
  }
  return nvlink;
}

// "PCIe Gen5 x16" from the first GPU's link; "" when unknown.
std::string pcie_text(const Json& gpu) {
  std::string gen, width;
  if (gpu.contains("pcie") && gpu["pcie"].is_object()) {
    gen = find_string(gpu["pcie"], {"gen_max", "max_generation", "gen_gpu_max", "generation"});
    width = find_string(gpu["pcie"], {"width_max", "max_width", "width"});
  }
  if (gen.empty()) gen = find_string(gpu, {"pcie_gen_max", "pcie_gen"});
  if (width.empty()) width = find_string(gpu, {"pcie_width_max", "pcie_width"});
  return gen.empty() ? "" : "PCIe Gen" + gen + (width.empty() ? "" : " x" + width);
}

// Interconnect: NVLink links up on a GPU, or NV# cells in the topology matrix; else the PCIe
// link of the first GPU.
std::string describe_interconnect(const Json& env) {
  const Json& gpus = array_at(env, "gpus");
  bool nvlink = false;
  const long links_up = nvlink_links_up(gpus, nvlink);
  if (!nvlink) nvlink = topology_has_nvlink(env);
  std::string text;
  if (nvlink) {
    text = links_up > 0 ? "NVLink (" + std::to_string(links_up) + " links/GPU)" : "NVLink";
  } else if (!gpus.empty() && gpus[0].is_object()) {
    text = pcie_text(gpus[0]);
  }
  return text.empty() ? "unknown" : text;
}

// VM or bare metal: host.virtualization (a hint such as "Amazon EC2", null on bare metal) and
// host.hypervisor_flag (fingerprint.cpp), or host.hypervisor (string or bool).
std::string describe_platform(const Json& env) {
  const Json& host = object_at(env, "host");
  auto is_vm_text = [](const std::string& text) {
    const std::string v = lower(text);
    return !(v.empty() || v == "none" || v == "bare metal" || v == "bare-metal" || v == "no");
  };
  if (host.contains("virtualization") && host["virtualization"].is_string() &&
      is_vm_text(host["virtualization"].get<std::string>())) {
    return "VM (" + host["virtualization"].get<std::string>() + ")";
  }
  if (host.contains("hypervisor") && host["hypervisor"].is_string()) {
    const std::string h = host["hypervisor"].get<std::string>();
    return is_vm_text(h) ? "VM (" + h + ")" : "bare metal";
  }
  if (host.contains("hypervisor") && host["hypervisor"].is_boolean()) {
    return host["hypervisor"].get<bool>() ? "VM" : "bare metal";
  }
  if (host.contains("hypervisor_flag") && host["hypervisor_flag"].is_boolean()) {
    return host["hypervisor_flag"].get<bool>() ? "VM" : "bare metal";
  }
  if (host.contains("virtualization") && host["virtualization"].is_null()) return "bare metal";
  return "unknown";
}

// ---- the tables ----------------------------------------------------------------------------

// A table's row keys: per workload the (params, gpus, devices) rows in first-seen order of the
// parameter set, then by GPU count and devices. A 1-GPU configuration that some offer measured
// on several GPUs alone (--baseline each) gets one row per device in every offer, so that a slow
// GPU keeps its row. Every lookup is hashed: offers come from other machines and may hold many
// points.
struct RowKey {
  std::string pk;
  int gpus = 1;
  std::vector<int> devices;  // only for the per-device 1-GPU rows
};

struct RowKeys {
  std::map<std::string, std::vector<RowKey>> rows;  // workload -> keys
  std::map<std::string, Params> params_of;          // dump -> params
  std::unordered_set<std::string> per_device;       // workload + pk of per-device 1-GPU rows
};

std::string params_key(const PointResult& p) {
  return dump_json(Json(p.params));
}

std::string row_key(const std::string& workload, const std::string& pk, int gpus,
                    const std::vector<int>& devices = {}) {
  std::string key = workload + '\n' + pk + '\n' + std::to_string(gpus);
  for (int d : devices) key += ',' + std::to_string(d);
  return key;
}

// The 1-GPU configurations an offer measured on more than one device.
std::unordered_set<std::string> per_device_configs(const std::vector<Offer>& offers) {
  std::unordered_set<std::string> out;
  for (const Offer& offer : offers) {
    std::unordered_map<std::string, std::vector<int>> seen;
    for (const PointResult& p : offer.run->points) {
      if (p.gpus != 1 || p.devices.size() != 1) continue;
      const std::string config = p.workload + '\n' + params_key(p);
      auto& devices = seen[config];
      if (std::find(devices.begin(), devices.end(), p.devices.front()) == devices.end()) {
        devices.push_back(p.devices.front());
      }
      if (devices.size() > 1) out.insert(config);
    }
  }
  return out;
}

std::vector<int> row_devices(const RowKeys& keys, const PointResult& p, const std::string& pk) {
  if (p.gpus == 1 && keys.per_device.count(p.workload + '\n' + pk)) return p.devices;
  return {};
}

RowKeys collect_row_keys(const std::vector<Offer>& offers) {
  RowKeys keys;
  keys.per_device = per_device_configs(offers);
  std::unordered_set<std::string> seen_rows;
  std::unordered_map<std::string, std::size_t> param_rank;  // workload + pk -> first-seen rank
  for (const Offer& offer : offers) {
    for (const PointResult& p : offer.run->points) {
      const std::string pk = params_key(p);
      const std::vector<int> devices = row_devices(keys, p, pk);
      if (seen_rows.insert(row_key(p.workload, pk, p.gpus, devices)).second) {
        keys.rows[p.workload].push_back({pk, p.gpus, devices});
      }
      param_rank.emplace(p.workload + '\n' + pk, param_rank.size());
      keys.params_of.emplace(pk, p.params);
    }
  }
  for (auto& [workload, rows] : keys.rows) {
    const std::string& w = workload;
    std::stable_sort(rows.begin(), rows.end(), [&](const RowKey& a, const RowKey& b) {
      const std::size_t ia = param_rank.at(w + '\n' + a.pk);
      const std::size_t ib = param_rank.at(w + '\n' + b.pk);
      if (ia != ib) return ia < ib;
      return a.gpus != b.gpus ? a.gpus < b.gpus : a.devices < b.devices;
    });
  }
  return keys;
}

// Each offer's points by row key; an ok point wins when the configuration appears more than
// once.
using PointIndex = std::unordered_map<std::string, const PointResult*>;
PointIndex index_points(const RunResult& run, const RowKeys& keys) {
  PointIndex index;
  for (const PointResult& p : run.points) {
    const std::string pk = params_key(p);
    const PointResult*& slot = index[row_key(p.workload, pk, p.gpus, row_devices(keys, p, pk))];
    if (!slot || (slot->status != Status::ok && p.status == Status::ok)) slot = &p;
  }
  return index;
}

const PointResult* find_point(const PointIndex& index, const std::string& workload,
                              const RowKey& key) {
  const auto it = index.find(row_key(workload, key.pk, key.gpus, key.devices));
  return it == index.end() ? nullptr : it->second;
}

// True when a run has ok 1-GPU points of the workload and none carries the quantity while some
// larger point does: a per-GPU figure that does not add across GPUs (bus bandwidth).
bool undefined_alone(const RunResult& run, const std::string& workload, const Quantity& q) {
  if (q.metric.empty()) return false;
  bool alone = false, defined_alone = false, defined_more = false;
  for (const PointResult& p : run.points) {
    if (p.workload != workload || p.status != Status::ok) continue;
    const bool has = quantity_value(p, q).has_value();
    if (p.gpus == 1) {
      alone = true;
      defined_alone = defined_alone || has;
    } else {
      defined_more = defined_more || has;
    }
  }
  return alone && !defined_alone && defined_more;
}

// The point's "<metric>" + kPerWatt, else throughput over the sum of its GPUs' average power.
std::optional<double> per_watt(const PointResult& point, const Quantity& quantity,
                               double throughput) {
  const std::string key = quantity.metric + telemetry_keys::kPerWatt;
  if (point.metrics.is_object() && point.metrics.contains(key) && point.metrics[key].is_number()) {
    return point.metrics[key].get<double>();
  }
  double watts = 0;
  bool any = false;
  for (const Json* gpu : telemetry_gpus(point.telemetry)) {
    if (auto w = read_gpu_telemetry(*gpu).avg_power_w) {
      watts += *w;
      any = true;
    }
  }
  if (any && watts > 0) return throughput / watts;
  return std::nullopt;
}

OfferCell make_cell(const PointResult* point, const Offer& offer, const OfferTable& table,
                    const EffIndex& effs, int gpus, const CompareOptions& options) {
  const Quantity& quantity = table.quantity;
  OfferCell cell;
  if (!point) return cell;
  cell.present = true;
  cell.status = point->status;
  if (point->status != Status::ok) return cell;
  cell.unreliable =
      !unreliable_reason(*point, options.throttle_limit, options.power_cap_throttles).empty();
  cell.throughput = quantity_value(*point, quantity);
  cell.efficiency = point_efficiency(effs, *point);
  if (cell.throughput && quantity.higher_is_better && !table.per_gpu_quantity) {
    cell.per_watt = per_watt(*point, quantity, *cell.throughput);
    if (offer.price_per_gpu_hour && *offer.price_per_gpu_hour > 0) {
      cell.per_dollar = *cell.throughput / (*offer.price_per_gpu_hour * gpus);
    }
  }
  return cell;
}

// The offer with the best value of `field` (none unless at least two offers have one), and every
// offer within `margin` (relative) of it: a tie when more than one.
BestOffer best_offer(const std::vector<OfferCell>& cells, std::optional<double> OfferCell::*field,
                     bool higher, double margin) {
  BestOffer best;
  int present = 0;
  for (std::size_t o = 0; o < cells.size(); ++o) {
    const auto& v = cells[o].*field;
    if (!v) continue;
    ++present;
    const auto& b = best.offer < 0 ? v : cells[static_cast<std::size_t>(best.offer)].*field;
    if (best.offer < 0 || (higher ? *v > *b : *v < *b)) best.offer = static_cast<int>(o);
  }
  if (present < 2) return {};
  const double top = *(cells[static_cast<std::size_t>(best.offer)].*field);
  best.tied.push_back(best.offer);
  for (std::size_t o = 0; o < cells.size(); ++o) {
    const auto& v = cells[o].*field;
    if (!v || static_cast<int>(o) == best.offer) continue;
    const double gap = std::fabs(*v - top) / std::max(std::fabs(*v), std::fabs(top));
    if (gap <= margin) best.tied.push_back(static_cast<int>(o));
  }
  if (!best.tie()) best.tied.clear();
  return best;
}

// ---- predicted rows (compare --predict-gpus) ------------------------------------------------

// The offer's predicted cell of the table's quantity for `params`: the throughput in the
// quantity's metric (the time when the table compares time), the efficiency, and per dollar.
OfferCell predicted_cell(const Offer& offer, const OfferPrediction& predicted,
                         const OfferTable& table, const Params& params) {
  OfferCell cell;
  if (predicted.prediction == nullptr) return cell;
  for (const PredictedSeries& s : predicted.prediction->series) {
    if (s.workload != table.workload || s.params != params) continue;
    for (const PredictedRow& r : s.rows) {
      if (r.gpus != predicted.gpus) continue;
      cell.present = true;
      const Quantity& q = table.quantity;
      if (q.metric.empty()) {
        cell.throughput = r.time_s;
      } else if (s.metric == q.metric) {
        cell.throughput = r.throughput;
      }
      cell.efficiency = r.efficiency;
      if (cell.throughput && q.higher_is_better && !table.per_gpu_quantity &&
          offer.price_per_gpu_hour && *offer.price_per_gpu_hour > 0) {
        cell.per_dollar = *cell.throughput / (*offer.price_per_gpu_hour * r.gpus);
      }
      return cell;
    }
  }
  return cell;
}

// After the measured rows of each parameter set, its predicted row (when an offer has a
// prediction of it), best and ties as in the measured rows.
void add_predicted_rows(OfferTable& table, const std::vector<Offer>& offers,
                        const std::vector<OfferPrediction>& predicted, double margin) {
  std::vector<OfferRow> rows;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    rows.push_back(std::move(table.rows[i]));
    const Params& params = rows.back().params;
    if (i + 1 < table.rows.size() && table.rows[i + 1].params == params) continue;
    OfferRow row;
    row.params = params;
    row.gpus = predicted.front().gpus;
    row.predicted = true;
    bool any = false;
    for (std::size_t o = 0; o < offers.size(); ++o) {
      row.cells.push_back(predicted_cell(offers[o], predicted[o], table, params));
      any = any || row.cells.back().present;
    }
    if (!any) continue;
    row.best_throughput = best_offer(row.cells, &OfferCell::throughput,
                                     table.quantity.higher_is_better, margin);
    row.best_per_dollar = best_offer(row.cells, &OfferCell::per_dollar, true, margin);
    rows.push_back(std::move(row));
  }
  table.rows = std::move(rows);
}

}  // namespace

OfferSummary summarize_offer(const Offer& offer) {
  OfferSummary s;
  s.label = offer.label;
  s.path = offer.path;
  s.price_per_gpu_hour = offer.price_per_gpu_hour;
  if (!offer.run) return s;
  const RunResult& run = *offer.run;
  const Json& env = run.environment.is_object() ? run.environment : Json::object();
  s.host = run.host;
  if (s.host.empty() && env.contains("host")) s.host = find_string(env["host"], {"hostname"});
  describe_gpus(env, run, s);
  describe_versions(env, s);
  s.interconnect = describe_interconnect(env);
  s.platform = describe_platform(env);
  return s;
}

OfferComparison compare_offers(const std::vector<Offer>& offers, const CompareOptions& given,
                               const std::vector<OfferPrediction>& predicted) {
  if (!predicted.empty() && predicted.size() != offers.size()) {
    throw std::invalid_argument("compare_offers: one prediction per offer");
  }
  std::vector<const RunResult*> runs;
  for (const Offer& offer : offers) runs.push_back(offer.run);
  const CompareOptions options = with_headlines(given, runs);
  OfferComparison result;
  for (const Offer& offer : offers) result.offers.push_back(summarize_offer(offer));
  for (std::size_t o = 0; o < predicted.size(); ++o) {
    result.predicted_gpus = predicted[o].gpus;
    if (predicted[o].prediction == nullptr) {
      result.not_predicted.push_back(offers[o].label + ": " + predicted[o].why);
    }
  }
  // Rows: the union of (workload, params, gpus), workloads in name order.
  std::vector<EffIndex> effs;
  for (const Offer& offer : offers) {
    effs.push_back(index_efficiencies(collect_efficiencies(*offer.run, options)));
  }
  RowKeys keys = collect_row_keys(offers);
  std::vector<PointIndex> indexes;
  for (const Offer& offer : offers) indexes.push_back(index_points(*offer.run, keys));
  const double margin = options.threshold;
  result.tie_margin = margin;
  for (const auto& [workload, rows] : keys.rows) {
    OfferTable table;
    table.workload = workload;
    table.quantity = quantity_for(workload, options);
    for (const Offer& offer : offers) {
      table.per_gpu_quantity =
          table.per_gpu_quantity || undefined_alone(*offer.run, workload, table.quantity);
    }
    for (const RowKey& key : rows) {
      OfferRow row;
      row.params = keys.params_of[key.pk];
      row.gpus = key.gpus;
      row.devices = key.devices;
      for (std::size_t o = 0; o < offers.size(); ++o) {
        const PointResult* point = find_point(indexes[o], workload, key);
        row.cells.push_back(make_cell(point, offers[o], table, effs[o], key.gpus, options));
      }
      row.best_throughput = best_offer(row.cells, &OfferCell::throughput,
                                       table.quantity.higher_is_better, margin);
      row.best_per_watt = best_offer(row.cells, &OfferCell::per_watt, true, margin);
      row.best_per_dollar = best_offer(row.cells, &OfferCell::per_dollar, true, margin);
      table.rows.push_back(std::move(row));
    }
    if (!predicted.empty()) add_predicted_rows(table, offers, predicted, margin);
    result.tables.push_back(std::move(table));
  }
  return result;
}

}  // namespace mgbench
