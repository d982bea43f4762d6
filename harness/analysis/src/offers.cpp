// The offer comparison (cloud A vs cloud B vs bare metal): a summary of each offer's machine and
// one table per workload with throughput, efficiency, per watt and per dollar side by side.
#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <utility>
#include <vector>

#include "compare_detail.hpp"
#include "mgbench/analysis/compare.hpp"

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
  if (s.gpu_count == 0) {
    for (const PointResult& p : run.points) s.gpu_count = std::max(s.gpu_count, p.gpus);
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

// A table's row keys: per workload the (params, gpus) pairs in first-seen order of the
// parameter set, then by GPU count. Every lookup is hashed: offers come from other machines and
// may hold many points.
struct RowKeys {
  std::map<std::string, std::vector<std::pair<std::string, int>>> rows;  // workload -> keys
  std::map<std::string, Params> params_of;                               // dump -> params
};

std::string row_key(const std::string& workload, const std::string& pk, int gpus) {
  return workload + '\n' + pk + '\n' + std::to_string(gpus);
}

RowKeys collect_row_keys(const std::vector<Offer>& offers) {
  RowKeys keys;
  std::unordered_set<std::string> seen_rows;
  std::unordered_map<std::string, std::size_t> param_rank;  // workload + pk -> first-seen rank
  for (const Offer& offer : offers) {
    for (const PointResult& p : offer.run->points) {
      const Json params = params_json_or_empty(p.params);
      const std::string pk = params.dump(-1, ' ', false, Json::error_handler_t::replace);
      if (seen_rows.insert(row_key(p.workload, pk, p.gpus)).second) {
        keys.rows[p.workload].emplace_back(pk, p.gpus);
      }
      param_rank.emplace(p.workload + '\n' + pk, param_rank.size());
      keys.params_of.emplace(pk, params);
    }
  }
  for (auto& [workload, rows] : keys.rows) {
    const std::string& w = workload;
    std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      const std::size_t ia = param_rank.at(w + '\n' + a.first);
      const std::size_t ib = param_rank.at(w + '\n' + b.first);
      return ia != ib ? ia < ib : a.second < b.second;
    });
  }
  return keys;
}

// Each offer's points by row key; an ok point wins when the configuration appears more than
// once.
using PointIndex = std::unordered_map<std::string, const PointResult*>;
PointIndex index_points(const RunResult& run) {
  PointIndex index;
  for (const PointResult& p : run.points) {
    const std::string pk =
        params_json_or_empty(p.params).dump(-1, ' ', false, Json::error_handler_t::replace);
    const PointResult*& slot = index[row_key(p.workload, pk, p.gpus)];
    if (!slot || (slot->status != Status::ok && p.status == Status::ok)) slot = &p;
  }
  return index;
}

const PointResult* find_point(const PointIndex& index, const std::string& workload,
                              const std::string& pk, int gpus) {
  const auto it = index.find(row_key(workload, pk, gpus));
  return it == index.end() ? nullptr : it->second;
}

// The point's "<metric>_per_watt", else throughput over the sum of its GPUs' average power.
std::optional<double> per_watt(const PointResult& point, const Quantity& quantity,
                               double throughput) {
  const std::string key = quantity.metric + "_per_watt";
  if (point.metrics.is_object() && point.metrics.contains(key) && point.metrics[key].is_number()) {
    return point.metrics[key].get<double>();
  }
  double watts = 0;
  bool any = false;
  for (const Json* gpu : telemetry_gpus(point.telemetry)) {
    if (auto w = gpu_average_power(*gpu)) {
      watts += *w;
      any = true;
    }
  }
  if (any && watts > 0) return throughput / watts;
  return std::nullopt;
}

OfferCell make_cell(const PointResult* point, const Offer& offer, const Quantity& quantity,
                    const EffIndex& effs, int gpus, const CompareOptions& options) {
  OfferCell cell;
  if (!point) return cell;
  cell.present = true;
  cell.status = point->status;
  if (point->status != Status::ok) return cell;
  cell.unreliable =
      !unreliable_reason(*point, options.throttle_limit, options.power_cap_throttles).empty();
  cell.throughput = quantity_value(*point, quantity);
  cell.efficiency = point_efficiency(effs, *point);
  if (cell.throughput && quantity.higher_is_better) {
    cell.per_watt = per_watt(*point, quantity, *cell.throughput);
    if (offer.price_per_gpu_hour && *offer.price_per_gpu_hour > 0) {
      cell.per_dollar = *cell.throughput / (*offer.price_per_gpu_hour * gpus);
    }
  }
  return cell;
}

// The offer with the best value of `field`, or -1 unless at least two offers have one.
int best_offer(const std::vector<OfferCell>& cells, std::optional<double> OfferCell::*field,
               bool higher) {
  int index = -1, present = 0;
  for (std::size_t o = 0; o < cells.size(); ++o) {
    const auto& v = cells[o].*field;
    if (!v) continue;
    ++present;
    if (index < 0 || (higher ? *v > *(cells[index].*field) : *v < *(cells[index].*field))) {
      index = static_cast<int>(o);
    }
  }
  return present >= 2 ? index : -1;
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

OfferComparison compare_offers(const std::vector<Offer>& offers, const CompareOptions& given) {
  std::vector<const RunResult*> runs;
  for (const Offer& offer : offers) runs.push_back(offer.run);
  const CompareOptions options = with_headlines(given, runs);
  OfferComparison result;
  for (const Offer& offer : offers) result.offers.push_back(summarize_offer(offer));
  // Rows: the union of (workload, params, gpus), workloads in name order.
  std::vector<EffIndex> effs;
  for (const Offer& offer : offers) {
    effs.push_back(index_efficiencies(collect_efficiencies(*offer.run, options)));
  }
  RowKeys keys = collect_row_keys(offers);
  std::vector<PointIndex> indexes;
  for (const Offer& offer : offers) indexes.push_back(index_points(*offer.run));
  for (const auto& [workload, rows] : keys.rows) {
    OfferTable table;
    table.workload = workload;
    table.quantity = quantity_for(workload, options);
    for (const auto& [pk, gpus] : rows) {
      OfferRow row;
      row.params = keys.params_of[pk];
      row.gpus = gpus;
      for (std::size_t o = 0; o < offers.size(); ++o) {
        const PointResult* point = find_point(indexes[o], workload, pk, gpus);
        row.cells.push_back(make_cell(point, offers[o], table.quantity, effs[o], gpus, options));
      }
      row.best_throughput =
          best_offer(row.cells, &OfferCell::throughput, table.quantity.higher_is_better);
      row.best_per_watt = best_offer(row.cells, &OfferCell::per_watt, true);
      row.best_per_dollar = best_offer(row.cells, &OfferCell::per_dollar, true);
      table.rows.push_back(std::move(row));
    }
    result.tables.push_back(std::move(table));
  }
  return result;
}

}  // namespace mgbench
