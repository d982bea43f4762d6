// The transformer step's points and metrics (see transformer_points.hpp).
#include "training/transformer_points.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include "training/transformer_math.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench::bench::transformer {

namespace {

std::vector<ParamValue> list(const AxisValues& values, const std::string& name) {
  const auto it = values.find(name);
  return it == values.end() ? std::vector<ParamValue>{} : it->second;
}

// One Params per model shape: a preset's name, or model=custom with its dimensions.
std::vector<Params> shapes(const AxisValues& values) {
  const auto hidden = list(values, "hidden"), heads = list(values, "heads"),
             kv = list(values, "kv_heads"), mlp = list(values, "mlp");
  const bool dims = !hidden.empty() || !heads.empty() || !kv.empty() || !mlp.empty();
  bool custom = false;
  std::vector<Params> out;
  for (const ParamValue& model : list(values, "model")) {
    if (model.text() != "custom") {
      out.push_back(Params{{"model", model}});
      continue;
    }
    custom = true;
    if (hidden.empty() || heads.empty() || mlp.empty()) {
      throw UsageError("transformer_step model=custom needs hidden, heads and mlp "
                       "(--param hidden=4096 heads=32 mlp=14336; kv_heads defaults to heads)");
    }
    for (const ParamValue& h : hidden) {
      for (const ParamValue& n : heads) {
        for (const ParamValue& k : kv.empty() ? std::vector<ParamValue>{n} : kv) {
          for (const ParamValue& m : mlp) {
            (void)custom_shape(h.integer(), n.integer(), k.integer(), m.integer());  // valid?
            out.push_back(Params{{"model", "custom"}, {"hidden", h}, {"heads", n},
                                 {"kv_heads", k}, {"mlp", m}});
          }
        }
      }
    }
  }
  if (dims && !custom) {
    throw UsageError("transformer_step hidden, heads, kv_heads and mlp describe model=custom "
                     "only: add --param model=custom");
  }
  return out;
}

// `points` x every value of `name` (key `name`).
std::vector<Params> times(const std::vector<Params>& points,
                          const std::vector<ParamValue>& values, const std::string& name) {
  std::vector<Params> out;
  for (const Params& p : points) {
    for (const ParamValue& v : values) {
      Params q = p;
      q.set(name, v);
      out.push_back(std::move(q));
    }
  }
  return out;
}

}  // namespace

std::vector<Params> expand_points(const AxisValues& values) {
  std::vector<Params> points = shapes(values);
  for (const char* name : {"layers", "seq", "dtype", "accum"}) {
    points = times(points, list(values, name), name);
  }
  std::vector<Params> with_strategy;
  for (const Params& p : points) {
    for (const ParamValue& strategy : list(values, "strategy")) {
      Params q = p;
      q.set("strategy", strategy);
      const auto s = q.choice<Strategy>("strategy", kStrategyNames);
      std::vector<Params> more{q};
      if (s == Strategy::tp_dp) more = times(more, list(values, "tp_size"), "tp_size");
      if (s != Strategy::tp) more = times(more, list(values, "overlap"), "overlap");
      with_strategy.insert(with_strategy.end(), more.begin(), more.end());
    }
  }
  return times(with_strategy, list(values, "batch"), "batch");
}

Json metrics(const Params& params, int nranks, double seconds) {
  const StepConfig cfg = config_from_params(params, nranks);
  const double sequences = static_cast<double>(cfg.batch) * cfg.accum * nranks;
  const double tokens = sequences * static_cast<double>(cfg.seq);
  Json m{{"global_batch", sequences},
         {"global_tokens", tokens},
         {"step_time_s", seconds},
         {"parameters", model_parameters(cfg.shape, cfg.layers)},
         {"comm_bytes_per_step", comm_volume(cfg).total()}};
  if (!(seconds > 0) || !std::isfinite(seconds)) {
    // No usable step time, no rate: NaN makes reject_non_finite fail the point with the reason.
    m["tokens_per_s"] = std::numeric_limits<double>::quiet_NaN();
    return m;
  }
  m["tokens_per_s"] = tokens / seconds;
  m["tokens_per_s_per_gpu"] = tokens / nranks / seconds;
  m["model_tflops_per_gpu"] = step_model_flops_per_gpu(cfg) / seconds / 1e12;
  return m;
}

}  // namespace mgbench::bench::transformer
