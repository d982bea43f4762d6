// The acceptance items of the communication, scaling and soak stages. See accept_judge.hpp.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "mgbench/analysis/accept_judge.hpp"
#include "mgbench/core/text.hpp"
#include "accept_judge_detail.hpp"

namespace mgbench {
namespace {

using accept_detail::add_detail;
using accept_detail::make_item;
using accept_detail::percent;

// A row of a pair matrix (the summary rows of the peer workloads: src, dst, GBps).
struct PairRow {
  int src = 0, dst = 0;
  double gbps = 0;
  std::string group;  // what the row was measured with: engine, direction, size, timing
};

std::vector<PairRow> pair_rows(const RunResult& run, const AcceptRoles& roles) {
  std::vector<PairRow> out;
  for (const auto& [workload, category] : roles) {
    if (category != WorkloadCategory::peer || !run.summaries.contains(workload)) continue;
    const Json& rows = run.summaries[workload];
    if (!rows.is_array()) continue;
    for (const Json& r : rows) {
      if (!r.is_object() || !r.contains("src") || !r.contains("dst")) continue;
      if (!r["src"].is_number_integer() || !r["dst"].is_number_integer()) continue;
      PairRow row{r["src"].get<int>(), r["dst"].get<int>(),
                  r.contains("GBps") && r["GBps"].is_number() ? r["GBps"].get<double>() : 0.0, ""};
      for (const char* key : {"engine", "direction", "bytes", "measured"}) {
        if (r.contains(key)) {
          row.group += (row.group.empty() ? "" : " ") +
                       one_line(r[key].is_string() ? r[key].get<std::string>() : r[key].dump());
        }
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

std::string pair_name(const PairRow& r) { return fmt::format("GPU {} -> GPU {}", r.src, r.dst); }

// Whether the doctor found peer access between every pair (its check passed).
bool peer_access_promised(const Json& doctor) {
  const Json checks = doctor.is_object() ? doctor.value("checks", Json::array()) : Json();
  if (!checks.is_array()) return false;
  for (const Json& c : checks) {
    if (c.is_object() && c.value("name", "") == "peer_access")
      return c.value("status", "") == "pass";
  }
  return false;
}

// Points waived because a group could not enable peer access fail where the doctor found peer
// access (a platform setting blocks what the GPUs offer), and warn where it did not (the
// configuration item already says so; NCCL stages through host memory). A pair of the matrix that
// moved nothing fails.
AcceptItem judge_peer_access(const RunResult& run, const std::vector<PairRow>& rows,
                             const Json& doctor) {
  AcceptItem item = make_item("peer_access", "communication", accept_text("criterion.peer_access"));
  const AcceptStatus blocked =
      peer_access_promised(doctor) ? AcceptStatus::fail : AcceptStatus::warn;
  std::size_t waived = 0;
  for (const auto& p : run.points) {
    if (p.status != Status::waived) continue;
    ++waived;
    add_detail(item, AcceptDetail{blocked, accept_point_label(p), one_line(p.message),
                                  accept_text("cause.peer_waived"), AcceptText{}});
  }
  std::set<std::pair<int, int>> pairs, reached;
  for (const auto& r : rows) {
    const auto key = std::minmax(r.src, r.dst);
    pairs.insert(key);
    if (r.gbps > 0) {
      reached.insert(key);
    } else {
      add_detail(item, AcceptDetail{AcceptStatus::fail, pair_name(r), "0 GB/s",
                                    accept_text("cause.pair_zero"), AcceptText{}});
    }
  }
  const bool unreached = reached.size() < pairs.size();
  item.measured = pairs.empty()
                      ? accept_text("measured.points_waived",
                                    {std::to_string(waived), std::to_string(run.points.size())})
                      : accept_text("measured.pairs_reached",
                                    {std::to_string(reached.size()), std::to_string(pairs.size())});
  item.status = unreached ? AcceptStatus::fail : waived > 0 ? blocked : AcceptStatus::pass;
  if (item.status != AcceptStatus::pass) {
    item.cause = accept_text("cause.peer_unreachable");
    item.next = accept_text("next.peer_unreachable");
  }
  return item;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

AcceptItem judge_pairs(const std::vector<PairRow>& rows, const AcceptCriteria& c) {
  AcceptItem item = make_item("p2p_pairs", "communication",
                              accept_text("criterion.pair_min", {percent(c.p2p_pair_min)}));
  std::map<std::string, std::vector<const PairRow*>> groups;
  for (const auto& r : rows) {
    if (r.gbps > 0) groups[r.group].push_back(&r);
  }
  if (groups.empty()) {
    item.status = AcceptStatus::skip;
    item.measured = accept_text("measured.no_matrix");
    return item;
  }
  const PairRow* worst = nullptr;
  double worst_ratio = 2;
  for (const auto& [group, members] : groups) {
    std::vector<double> values;
    for (const PairRow* r : members) values.push_back(r->gbps);
    const double median = median_of(values);
    for (const PairRow* r : members) {
      const double ratio = r->gbps / median;
      if (ratio < worst_ratio) {
        worst_ratio = ratio;
        worst = r;
      }
      if (ratio >= c.p2p_pair_min) continue;
      add_detail(item, AcceptDetail{AcceptStatus::fail, pair_name(*r),
                                    fmt::format("{:.1f} GB/s, {} of the median {:.1f} GB/s ({})",
                                                r->gbps, percent(ratio), median, group),
                                    AcceptText{}, AcceptText{}});
    }
  }
  item.measured =
      accept_text("measured.slowest_pair",
                  {pair_name(*worst), fmt::format("{:.1f}", worst->gbps), percent(worst_ratio)});
  item.status = worst_ratio >= c.p2p_pair_min ? AcceptStatus::pass : AcceptStatus::fail;
  if (item.status == AcceptStatus::fail) {
    item.cause = accept_text("cause.slow_pair");
    item.next = accept_text("next.slow_pair");
  }
  return item;
}

AcceptItem judge_scaling_of(const RunResult& run, const std::string& workload, double min) {
  AcceptItem item =
      make_item("scaling", "scaling", accept_text("criterion.at_least", {percent(min)}), workload);
  const ScalingRow* worst = nullptr;
  for (const auto& series : run.scaling) {
    if (series.workload != workload || series.rows.size() < 2) continue;
    const ScalingRow& last = series.rows.back();
    if (worst == nullptr || last.efficiency < worst->efficiency) worst = &last;
  }
  if (worst == nullptr) {
    item.status = AcceptStatus::skip;
    item.measured = accept_text("measured.one_gpu");
    return item;
  }
  item.measured =
      accept_text("measured.efficiency", {percent(worst->efficiency), std::to_string(worst->gpus),
                                          fmt::format("{:.2f}", worst->speedup)});
  item.status = worst->efficiency >= min ? AcceptStatus::pass : AcceptStatus::fail;
  if (item.status == AcceptStatus::pass) return item;
  item.cause = accept_text("cause.scaling_low");
  item.next = accept_text("next.scaling_low");
  for (const auto& v : run.verdicts) {
    if (v.workload == workload && v.efficiency < min) {
      add_detail(item, AcceptDetail{AcceptStatus::fail, workload, one_line(v.text), AcceptText{},
                                    AcceptText{}});
    }
  }
  return item;
}

}  // namespace

std::vector<AcceptItem> judge_communication(const RunResult& run, const AcceptCriteria& c,
                                            const AcceptRoles& roles, const Json& doctor) {
  const auto rows = pair_rows(run, roles);
  std::vector<AcceptItem> items = {judge_runs(run, "communication"),
                                   judge_peer_access(run, rows, doctor), judge_pairs(rows, c)};
  for (const auto& [workload, category] : roles) {
    if (category == WorkloadCategory::collective) {
      items.push_back(judge_range(run, workload, "communication", c));
    }
  }
  items.push_back(judge_throttle(run, "communication", c));
  return items;
}

std::vector<AcceptItem> judge_scaling(const RunResult& run, const AcceptCriteria& c,
                                      const AcceptRoles& roles) {
  std::vector<AcceptItem> items = {judge_runs(run, "scaling")};
  for (const auto& [workload, category] : roles) {
    items.push_back(judge_range(run, workload, "scaling", c));
  }
  for (const auto& [workload, category] : roles) {
    if (category == WorkloadCategory::compute) {
      items.push_back(judge_scaling_of(run, workload, c.gemm_scaling_min));
    } else if (category == WorkloadCategory::training) {
      items.push_back(judge_scaling_of(run, workload, c.train_scaling_min));
    }
  }
  items.push_back(judge_throttle(run, "scaling", c));
  return items;
}

namespace {

AcceptItem judge_soak_stable(const Json& soak) {
  AcceptItem item = make_item("soak_stable", "soak", accept_text("criterion.soak_stable"));
  const Json& a = soak.value("analysis", Json::object());
  const std::string windows = std::to_string(soak.value("windows", Json::array()).size());
  const std::string measured = fmt::format("{:.0f}", soak.value("measured_s", 0.0));
  const Json steady = a.value("time_to_steady_s", Json());
  item.measured =
      steady.is_number()
          ? accept_text("measured.soak_steady",
                        {windows, measured, fmt::format("{:.0f}", steady.get<double>())})
          : accept_text("measured.soak_never_steady", {windows, measured});
  item.status = a.value("stable", false) ? AcceptStatus::pass : AcceptStatus::fail;
  if (item.status == AcceptStatus::pass) return item;
  item.cause = accept_text("cause.soak_unstable");
  item.next = accept_text("next.soak_unstable");
  for (const Json& r : a.value("reasons", Json::array())) {
    if (r.is_string()) {
      add_detail(item, AcceptDetail{AcceptStatus::fail, "soak", one_line(r.get<std::string>()),
                                    AcceptText{}, AcceptText{}});
    }
  }
  return item;
}

AcceptItem judge_degradation(const Json& soak, const AcceptCriteria& c) {
  AcceptItem item = make_item("soak_degradation", "soak",
                              accept_text("criterion.at_most", {percent(c.soak_degradation_max)}));
  const Json d = soak.value("analysis", Json::object()).value("degradation", Json());
  if (!d.is_number()) {
    item.status = AcceptStatus::skip;
    item.measured = accept_text("measured.none");
    return item;
  }
  item.measured = accept_text("measured.percent", {percent(d.get<double>())});
  item.status = d.get<double>() <= c.soak_degradation_max ? AcceptStatus::pass : AcceptStatus::fail;
  if (item.status == AcceptStatus::fail) {
    item.cause = accept_text("cause.degradation");
    item.next = accept_text("next.degradation");
  }
  return item;
}

AcceptItem judge_health(const Json& soak, const AcceptCriteria& c) {
  AcceptItem item = make_item("soak_health", "soak", accept_text("criterion.health"));
  const Json& health = soak.value("health", Json::object());
  if (health.value("monitor", "").rfind("none", 0) == 0) {
    item.status = AcceptStatus::skip;
    item.measured = accept_text("measured.no_health_monitor");
    return item;
  }
  const AcceptStatus bad =
      c.health_events == Severity::fail ? AcceptStatus::fail : AcceptStatus::warn;
  int xid = 0;
  for (const Json& e : health.value("events", Json::array())) {
    if (!e.is_object() || e.value("kind", "") != "xid") continue;
    ++xid;
    add_detail(item, AcceptDetail{bad, "XID", one_line(e.value("message", "")),
                                  accept_text("cause.xid"), AcceptText{}});
  }
  const int ecc = health.value("new_uncorrected_ecc", false) ? 1 : 0;
  const int remap = health.value("row_remap_trouble", false) ? 1 : 0;
  if (ecc) add_detail(item, AcceptDetail{bad, "ECC", "", accept_text("cause.ecc"), AcceptText{}});
  if (remap)
    add_detail(item,
               AcceptDetail{bad, "row remapping", "", accept_text("cause.remap"), AcceptText{}});
  item.measured = accept_text("measured.health",
                              {std::to_string(xid), std::to_string(ecc), std::to_string(remap)});
  item.status = xid + ecc + remap == 0 ? AcceptStatus::pass : bad;
  if (item.status != AcceptStatus::pass) item.next = accept_text("next.health");
  return item;
}

}  // namespace

std::vector<AcceptItem> judge_soak(const RunResult& run, const AcceptCriteria& c) {
  if (!run.soak.is_object()) {
    AcceptItem item = make_item("soak_stable", "soak", accept_text("criterion.soak_stable"));
    item.status = AcceptStatus::fail;
    item.measured = accept_text("measured.none");
    item.cause = accept_text("cause.soak_missing");
    item.next = accept_text("next.soak_unstable");
    return {item};
  }
  return {judge_soak_stable(run.soak), judge_degradation(run.soak, c), judge_health(run.soak, c)};
}

}  // namespace mgbench
