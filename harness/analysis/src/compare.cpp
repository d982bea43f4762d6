// Comparison of two runs: points matched by key, each judged (rank test + effect size, noise
// from --baseline runs), and the run-level result. See mgbench/compare.hpp for the rules; the
// environment diff, efficiencies, offers and JSON forms live in the sibling compare_*.cpp and
// offers.cpp files.
#include "mgbench/analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "compare_detail.hpp"
#include "mgbench/analysis/peaks.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/stats.hpp"

namespace mgbench {

using namespace compare_detail;

namespace {

// "<name> v<version>" of the code a point ran (extra.implementation), "" when it names none.
std::string implementation_of(const PointResult& p) {
  if (!p.extra.is_object() || !p.extra.contains("implementation")) return "";
  const Json& impl = p.extra["implementation"];
  if (!impl.is_object()) return "";
  const Json name = impl.contains("name") ? impl["name"] : Json();
  const Json version = impl.contains("version") ? impl["version"] : Json();
  return (name.is_string() ? name.get<std::string>() : name.dump()) + " v" +
         (version.is_string() ? version.get<std::string>() : version.dump());
}

std::string implementation_change(const PointResult& base, const PointResult& next) {
  const std::string before = implementation_of(base), after = implementation_of(next);
  if (before == after) return "";
  return point_key(base) + ": " + (before.empty() ? "(not named)" : before) + " -> " +
         (after.empty() ? "(not named)" : after);
}

// ---- point matching ------------------------------------------------------------------------

struct MatchResult {
  std::vector<std::pair<const PointResult*, const PointResult*>> pairs;
  std::vector<const PointResult*> only_base, only_new;
};

MatchResult match_points(const std::vector<PointResult>& base,
                         const std::vector<PointResult>& next) {
  std::map<std::string, std::vector<const PointResult*>> base_by_key, new_by_key;
  std::vector<std::string> order;
  for (const PointResult& p : base) {
    auto& list = base_by_key[point_key(p)];
    if (list.empty()) order.push_back(point_key(p));
    list.push_back(&p);
  }
  for (const PointResult& p : next) new_by_key[point_key(p)].push_back(&p);

  MatchResult result;
  for (const std::string& key : order) {
    const auto& bs = base_by_key[key];
    auto it = new_by_key.find(key);
    if (it == new_by_key.end()) {
      result.only_base.insert(result.only_base.end(), bs.begin(), bs.end());
      continue;
    }
    const auto& ns = it->second;
    if (bs.size() == 1 && ns.size() == 1) {
      result.pairs.emplace_back(bs[0], ns[0]);
      continue;
    }
    // The same configuration more than once (e.g. every GPU alone): match on the devices.
    std::vector<bool> used(ns.size(), false);
    for (const PointResult* b : bs) {
      bool matched = false;
      for (std::size_t i = 0; i < ns.size(); ++i) {
        if (!used[i] && point_key(*b, true) == point_key(*ns[i], true)) {
          used[i] = true;
          matched = true;
          result.pairs.emplace_back(b, ns[i]);
          break;
        }
      }
      if (!matched) result.only_base.push_back(b);
    }
    for (std::size_t i = 0; i < ns.size(); ++i) {
      if (!used[i]) result.only_new.push_back(ns[i]);
    }
  }
  for (const PointResult& p : next) {
    if (base_by_key.find(point_key(p)) == base_by_key.end()) result.only_new.push_back(&p);
  }
  return result;
}

// ---- measurement method ---------------------------------------------------------------------

// The point's timing method or cache mode: recorded, else its parameter, else what mgbench
// did before it recorded them (gated device timing on hot buffers).
template <typename Method>
std::string method_field(const PointResult& p, const std::optional<Method>& recorded,
                         const char* param, const char* before) {
  if (recorded) return to_string(*recorded);
  const ParamValue* value = p.params.find(param);
  return value != nullptr && value->is_text() ? value->text() : before;
}

// "" when both points were measured the same way, else how they differ, in words.
std::string method_difference(const PointResult& b, const PointResult& n) {
  std::string out;
  const auto differ = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y) out += (out.empty() ? "" : ", ") + std::string(what) + " " + x + " (base) vs " + y + " (new)";
  };
  differ("timing", method_field(b, b.measured.timing, "timing", "device"),
         method_field(n, n.measured.timing, "timing", "device"));
  differ("cache", method_field(b, b.measured.cache, "cache", "hot"),
         method_field(n, n.measured.cache, "cache", "hot"));
  return out;
}

// point_key without the timing and cache parameters.
std::string method_free_key(const PointResult& p) {
  PointResult q;
  q.workload = p.workload;
  q.gpus = p.gpus;
  q.params = p.params;
  q.params.erase("timing");
  q.params.erase("cache");
  return point_key(q);
}

NotCompared refused(const PointResult& b, const PointResult& n, const std::string& difference) {
  return NotCompared{point_key(b), b.workload, b.params, b.gpus, b.status, n.status,
                     "measured differently, not comparable: " + difference};
}

// Points left unmatched only because of their timing or cache parameters: one refusal each
// when they were measured differently, else a pair (they leave the unmatched lists).
std::vector<NotCompared> refuse_method_mismatches(MatchResult& match) {
  std::vector<NotCompared> out;
  std::vector<const PointResult*> rest_base;
  for (const PointResult* b : match.only_base) {
    const std::string key = method_free_key(*b);
    const auto it = std::find_if(match.only_new.begin(), match.only_new.end(),
                                 [&](const PointResult* n) { return method_free_key(*n) == key; });
    if (it == match.only_new.end()) {
      rest_base.push_back(b);
      continue;
    }
    const std::string difference = method_difference(*b, **it);
    if (difference.empty()) {
      match.pairs.emplace_back(b, *it);  // e.g. an older file without the parameters
    } else {
      out.push_back(refused(*b, **it, difference));
    }
    match.only_new.erase(it);
  }
  match.only_base = std::move(rest_base);
  return out;
}

UnmatchedPoint unmatched(const PointResult& p) {
  return UnmatchedPoint{point_key(p), p.workload, p.params, p.gpus, p.status};
}

// ---- the verdict of one point --------------------------------------------------------------

PointComparison describe_pair(const PointResult& base, const PointResult& next) {
  PointComparison pc;
  pc.key = point_key(base);
  pc.workload = base.workload;
  pc.params = base.params;
  pc.gpus = base.gpus;
  pc.base_devices = base.devices;
  pc.new_devices = next.devices;
  return pc;
}

// Sets pc.threshold: the option's, or noise_k x the point's run-to-run noise when larger.
void apply_noise(PointComparison& pc, const CompareOptions& options, const NoiseMap* noise) {
  pc.threshold = options.threshold;
  if (!noise) return;
  auto it = noise->find(pc.key);
  if (it != noise->end() && it->second.runs >= 2) {
    pc.noise = it->second;
    pc.threshold = std::max(options.threshold, options.noise_k * it->second.relative);
  }
}

// "base: ...; new: ..." for the sides that must not be judged; "" when both are reliable.
std::string unreliable_pair(const PointResult& base, const PointResult& next,
                            const CompareOptions& options) {
  const std::string base_unreliable =
      unreliable_reason(base, options.throttle_limit, options.power_cap_throttles);
  const std::string new_unreliable =
      unreliable_reason(next, options.throttle_limit, options.power_cap_throttles);
  std::string reason;
  if (!base_unreliable.empty()) reason = "base: " + base_unreliable;
  if (!new_unreliable.empty()) {
    reason += (reason.empty() ? "" : "; ") + std::string("new: ") + new_unreliable;
  }
  return reason;
}

// The verdict of a point with a rank test: significant, large enough, and in agreement on
// the direction.
void decide(PointComparison& pc, const CompareOptions& options) {
  const bool worse = pc.quantity.higher_is_better ? pc.change < 0 : pc.change > 0;
  const bool significant = pc.test->p_value < options.alpha;
  // 1e-12: an effect of exactly the threshold counts despite rounding.
  const bool large = std::fabs(pc.change) >= pc.threshold - 1e-12;
  // Samples are times: the new run is slower in rank terms when its U exceeds the base's.
  const bool ranks_worse = pc.test->u2 > pc.test->u1;
  const std::string p_text = "p = " + format_p(pc.test->p_value);
  if (!significant) {
    pc.verdict = Verdict::same;
    pc.reason = p_text + " >= " + format_p(options.alpha) + " (not significant)";
  } else if (!large) {
    pc.verdict = Verdict::same;
    pc.reason = "effect " + format_percent(pc.change) + " below threshold " +
                format_percent(pc.threshold) + " (" + p_text + ")";
  } else if (pc.change == 0 || ranks_worse != worse) {
    pc.verdict = Verdict::same;
    pc.reason = "rank test and median disagree on the direction (" + p_text + ")";
  } else {
    pc.verdict = worse ? Verdict::slower : Verdict::faster;
    pc.reason = p_text + ", effect " + format_percent(pc.change) + " >= threshold " +
                format_percent(pc.threshold);
  }
}

PointComparison judge(const PointResult& base, const PointResult& next,
                      const CompareOptions& options, const NoiseMap* noise) {
  PointComparison pc = describe_pair(base, next);
  pc.quantity = quantity_for(base.workload, options);
  std::optional<double> bv = quantity_value(base, pc.quantity);
  std::optional<double> nv = quantity_value(next, pc.quantity);
  const bool usable = bv && nv && *bv > 0 && *nv > 0;
  if (!usable && !pc.quantity.metric.empty()) {
    // Metric missing or zero on a side (e.g. all-reduce busbw on one GPU): compare times.
    pc.quantity = Quantity{"", "s", false};
    bv = quantity_value(base, pc.quantity);
    nv = quantity_value(next, pc.quantity);
  }
  apply_noise(pc, options, noise);
  if (!bv || !nv || !(*bv > 0) || !std::isfinite(*nv)) {
    pc.verdict = Verdict::noisy;
    pc.reason = "no usable median on one side";
    return pc;
  }
  pc.base_value = *bv;
  pc.new_value = *nv;
  pc.change = *nv / *bv - 1.0;
  if (!base.samples.empty() && !next.samples.empty()) {
    pc.test = mann_whitney_u(base.samples, next.samples);
  }
  const std::string unreliable = unreliable_pair(base, next, options);
  if (!unreliable.empty()) {
    pc.verdict = Verdict::noisy;
    pc.reason = unreliable;
    return pc;
  }
  if (!pc.test) {
    pc.verdict = Verdict::noisy;
    pc.reason = std::string("no raw samples in the ") + (base.samples.empty() ? "base" : "new") +
                " run: cannot test";
    return pc;
  }
  decide(pc, options);
  return pc;
}

NotCompared not_compared(const PointResult& b, const PointResult& n) {
  return NotCompared{point_key(b), b.workload, b.params, b.gpus, b.status, n.status,
                     n.status != Status::ok ? n.message : b.message};
}

}  // namespace

// ---- public --------------------------------------------------------------------------------

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::same: return "same";
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::noisy: return "noisy";
  }
  return "?";
}

CompareOptions with_headlines(CompareOptions options, const std::vector<const RunResult*>& runs) {
  for (const RunResult* run : runs) {
    if (run == nullptr) continue;
    for (const PointResult& point : run->points) {
      if (options.headlines.count(point.workload) != 0) continue;
      const Presentation p = presentation_for(*run, point.workload);
      if (p.headline_) options.headlines.emplace(point.workload, *p.headline_);
    }
  }
  return options;
}

Quantity quantity_for(const std::string& workload, const CompareOptions& options) {
  auto it = options.metrics.find(workload);
  if (it != options.metrics.end()) {
    if (it->second.empty()) return Quantity{"", "s", false};
    return Quantity{it->second, "", true};
  }
  const auto headline = options.headlines.find(workload);
  if (headline != options.headlines.end() && !headline->second.name.empty()) {
    const MetricSpec& m = headline->second;
    return Quantity{m.name, m.unit, m.better_ == Better::higher};
  }
  return Quantity{"", "s", false};
}

std::optional<double> quantity_value(const PointResult& point, const Quantity& quantity) {
  if (!quantity.metric.empty()) {
    if (point.metrics.is_object() && point.metrics.contains(quantity.metric) &&
        point.metrics[quantity.metric].is_number()) {
      return point.metrics[quantity.metric].get<double>();
    }
    return std::nullopt;
  }
  if (point.stats.n > 0 && point.stats.median > 0) return point.stats.median;
  if (!point.samples.empty()) return median_of(point.samples);
  return std::nullopt;
}

NoiseMap estimate_noise(const std::vector<const RunResult*>& runs, const CompareOptions& given) {
  const CompareOptions options = with_headlines(given, runs);
  std::map<std::string, std::vector<double>> values;
  for (const RunResult* run : runs) {
    std::set<std::string> seen;
    for (const PointResult& p : run->points) {
      if (p.status != Status::ok) continue;
      const std::string key = point_key(p);
      if (!seen.insert(key).second) continue;  // first of duplicates only
      Quantity q = quantity_for(p.workload, options);
      std::optional<double> v = quantity_value(p, q);
      if (!v && !q.metric.empty()) v = quantity_value(p, Quantity{"", "s", false});
      if (v && std::isfinite(*v)) values[key].push_back(*v);
    }
  }
  NoiseMap out;
  for (const auto& [key, list] : values) {
    if (list.size() < 2) continue;
    double mean = 0;
    for (double v : list) mean += v;
    mean /= static_cast<double>(list.size());
    double ss = 0;
    for (double v : list) ss += (v - mean) * (v - mean);
    const double stdev = std::sqrt(ss / static_cast<double>(list.size() - 1));
    out[key] = NoiseEstimate{mean > 0 ? stdev / mean : 0.0, static_cast<int>(list.size())};
  }
  return out;
}

int Comparison::count(Verdict verdict) const {
  return static_cast<int>(
      std::count_if(points.begin(), points.end(),
                    [&](const PointComparison& p) { return p.verdict == verdict; }));
}

Comparison compare_runs(const RunResult& base, const RunResult& next, const CompareOptions& given,
                        const NoiseMap* noise) {
  const CompareOptions options = with_headlines(given, {&base, &next});
  Comparison cmp;
  cmp.options = options;
  cmp.environment = diff_runs(base, next, options);
  const std::string fb = find_string(base.environment, {"fingerprint_hash"});
  const std::string fn = find_string(next.environment, {"fingerprint_hash"});
  cmp.fingerprint_differs = !fb.empty() && !fn.empty() && fb != fn;
  cmp.hooks_differ = hooks_difference(base, next);

  const PeakReport base_peaks = compute_peaks(base), new_peaks = compute_peaks(next);
  MatchResult match = match_points(base.points, next.points);
  cmp.not_compared = refuse_method_mismatches(match);
  if (match.pairs.empty() && !cmp.not_compared.empty()) {
    const NotCompared& first = cmp.not_compared.front();
    throw Error(ExitCode::inconclusive,
                "inconclusive, nothing to compare: " + std::to_string(cmp.not_compared.size()) +
                    " point(s) match only in a differently measured form (e.g. " +
                    first.workload + ": " + first.message + ")");
  }
  if (match.pairs.empty()) {
    throw Error(ExitCode::inconclusive, "inconclusive, nothing to compare: no point of the base run (" +
                     std::to_string(base.points.size()) + ") matches one of the new run (" +
                     std::to_string(next.points.size()) +
                     ") by workload, parameters and GPU count");
  }
  std::map<std::string, Presentation> presentations;  // of the base run, per workload
  for (const auto& [b, n] : match.pairs) {
    std::string change = implementation_change(*b, *n);
    if (!change.empty()) cmp.implementation_changes.push_back(std::move(change));
    if (b->status != Status::ok || n->status != Status::ok) {
      cmp.not_compared.push_back(not_compared(*b, *n));
      continue;
    }
    const std::string differs = method_difference(*b, *n);
    if (!differs.empty()) {
      cmp.not_compared.push_back(refused(*b, *n, differs));
      continue;
    }
    cmp.points.push_back(judge(*b, *n, options, noise));
    PointComparison& pc = cmp.points.back();
    pc.base_of_peak = share_fraction(base_peaks.find(b->index, pc.quantity.metric));
    pc.new_of_peak = share_fraction(new_peaks.find(n->index, pc.quantity.metric));
    auto pres = presentations.find(b->workload);
    if (pres == presentations.end()) {
      pres = presentations.emplace(b->workload, presentation_for(base, b->workload)).first;
    }
    pc.parts = step_parts(*b, *n, pres->second);
  }
  if (cmp.points.empty()) {
    const NotCompared& first = cmp.not_compared.back();
    const bool both_ok = first.base_status == Status::ok && first.new_status == Status::ok;
    throw Error(ExitCode::inconclusive, "inconclusive, nothing to compare: none of the " + std::to_string(match.pairs.size()) +
                     " matched points is ok in both runs and measured the same way (e.g. " +
                     first.workload + " on " + std::to_string(first.gpus) + " GPU(s): " +
                     (both_ok ? first.message
                              : "base " + std::string(to_string(first.base_status)) + ", new " +
                                    to_string(first.new_status)) + ")");
  }
  for (const PointResult* p : match.only_base) cmp.only_in_base.push_back(unmatched(*p));
  for (const PointResult* p : match.only_new) cmp.only_in_new.push_back(unmatched(*p));
  cmp.efficiency = efficiency_rows(base, next, options);
  return cmp;
}

std::string hooks_difference(const RunResult& base, const RunResult& next) {
  auto hooks = [](const RunResult& run) {
    const Json& env = run.environment;
    return env.is_object() && env.contains("test_hooks") ? env["test_hooks"] : Json::object();
  };
  const Json a = hooks(base), b = hooks(next);
  if (a == b) return "";
  // ASCII only: the values come from the files.
  return "the runs had different test hooks (base " + a.dump(-1, ' ', true) + ", new " +
         b.dump(-1, ' ', true) +
         "): a slowdown may be the hook's";
}

std::string inconclusive_reason(const Comparison& cmp) {
  if (cmp.count(Verdict::same) + cmp.count(Verdict::faster) + cmp.count(Verdict::slower) == 0) {
    return "inconclusive: every compared point is noisy (" + std::to_string(cmp.points.size()) +
           " point(s)); nothing can be judged";
  }
  if (cmp.any_slower() && !cmp.hooks_differ.empty()) {
    return "inconclusive: " + cmp.hooks_differ + "; no regression is called";
  }
  return "";
}

int comparison_exit_code(const Comparison& comparison) {
  if (!inconclusive_reason(comparison).empty()) return static_cast<int>(ExitCode::inconclusive);
  return comparison.any_slower() ? static_cast<int>(ExitCode::regression)
                                 : static_cast<int>(ExitCode::ok);
}

}  // namespace mgbench
