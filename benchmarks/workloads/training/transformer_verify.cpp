// The transformer step's verification (see transformer_verify.hpp).
#include "training/transformer_verify.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

#include "training/transformer_shards.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench::bench::transformer {

namespace {

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

Json hash_json(const Replica::Hash& h) {
  return Json{{"value", hex(h.value)}, {"nonfinite", h.nonfinite}};
}

// The ranks whose values disagree with those of the first rank of the same key.
int disagreeing(const std::vector<Json>& all, const char* what, int (*key)(int rank, int tp),
                int tp) {
  int count = 0;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const std::size_t first = static_cast<std::size_t>(key(static_cast<int>(r), tp));
    if (all[r].at(what) != all[first].at(what)) ++count;
  }
  return count;
}

int group_first_rank(int /*rank*/, int /*tp*/) { return 0; }
int same_tp_rank(int rank, int tp) { return rank % tp; }

}  // namespace

CheckResult check_agreement(const RankEnv& env, Replica& replica, Verification& v) {
  const StepConfig& cfg = replica.config();
  const Replica::Hash master = replica.master_hash(), norms = replica.norm_hash();
  const Replica::Hash gathered = replica.gathered_hash();  // collective for fsdp
  const Json mine{{"master", hex(master.value)}, {"norms", hex(norms.value)},
                  {"gathered", hex(gathered.value)}};
  const std::vector<Json> all = env.all_gather_json(mine);
  v.details["master_hash"] = hash_json(master);
  v.details["nonfinite_weights"] = master.nonfinite;
  int wrong = 0;
  std::string what;
  switch (cfg.strategy) {
    case Strategy::ddp:
      wrong = disagreeing(all, "master", group_first_rank, 1);
      what = "fp32 master weights (replicas)";
      break;
    case Strategy::fsdp:
      wrong = disagreeing(all, "gathered", group_first_rank, 1);
      v.details["gathered_hash"] = hash_json(gathered);
      what = "whole model gathered from the shards";
      break;
    case Strategy::tp:
    case Strategy::tp_dp:
      wrong = disagreeing(all, "norms", group_first_rank, 1) +
              disagreeing(all, "master", same_tp_rank, cfg.tp);
      v.details["norm_hash"] = hash_json(norms);
      what = "replicated norm weights and the slices of each tensor-parallel rank";
      break;
  }
  v.details["agreement_checked"] = what;
  v.details["replicas_agree"] = wrong == 0;
  if (wrong != 0) {
    return {false, std::to_string(wrong) + " rank(s) disagree on the " + what +
                       " after the measured steps"};
  }
  if (master.nonfinite != 0) {
    return {false, std::to_string(master.nonfinite) + " master weights are not finite"};
  }
  return {};
}

CheckResult check_comm_volume(const CommVolume& counted, const StepConfig& cfg, Verification& v) {
  const CommVolume want = comm_volume(cfg);
  const auto pair = [](double got, double expected) { return Json{got, expected}; };
  // Per kind: [what this rank handed to NCCL, what the formula says].
  v.details["comm_bytes"] =
      Json{{"all_reduce_tp", pair(counted.all_reduce_tp, want.all_reduce_tp)},
           {"all_reduce_dp", pair(counted.all_reduce_dp, want.all_reduce_dp)},
           {"all_gather", pair(counted.all_gather, want.all_gather)},
           {"reduce_scatter", pair(counted.reduce_scatter, want.reduce_scatter)}};
  const bool ok = counted.all_reduce_tp == want.all_reduce_tp &&
                  counted.all_reduce_dp == want.all_reduce_dp &&
                  counted.all_gather == want.all_gather &&
                  counted.reduce_scatter == want.reduce_scatter;
  v.details["comm_volume_ok"] = ok;
  if (ok) return {};
  return {false, "the step handed " + std::to_string(counted.total()) +
                     " bytes to NCCL, the formula says " + std::to_string(want.total())};
}

namespace {

// The whole model from every rank's arrays `key` ("w" or "g") of the first tensor-parallel group.
std::vector<double> assemble(const StepConfig& cfg, const std::vector<Json>& all,
                             const char* key) {
  std::vector<std::vector<double>> parts;
  switch (cfg.strategy) {
    case Strategy::ddp: return all.at(0).at(key).get<std::vector<double>>();
    case Strategy::fsdp:
      for (const Json& r : all) parts.push_back(r.at(key).get<std::vector<double>>());
      return assemble_fsdp(cfg.shape, cfg.layers, parts);
    case Strategy::tp:
    case Strategy::tp_dp:
      for (int r = 0; r < cfg.tp; ++r) {
        parts.push_back(all.at(static_cast<std::size_t>(r)).at(key).get<std::vector<double>>());
      }
      return assemble_tp(cfg.shape, cfg.layers, parts);
  }
  return {};
}

}  // namespace

CheckResult check_gradients(const RankEnv& env, Replica& tiny, Verification& v) {
  const StepConfig& cfg = tiny.config();
  Json mine{{"x", tiny.read_x()}, {"t", tiny.read_t()}};
  const bool whole = cfg.strategy == Strategy::ddp;
  if (!whole || env.rank == 0) mine["w"] = tiny.read_weights();  // what the GEMMs read
  tiny.enqueue_step();
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env.stream));
  if (!whole || env.rank == 0) mine["g"] = tiny.read_grads();
  const std::vector<Json> all = env.all_gather_json(std::move(mine));
  const std::vector<double> weights = assemble(cfg, all, "w"), grads = assemble(cfg, all, "g");

  const ReferenceModel model = reference_model(cfg.shape, cfg.layers,
                                               static_cast<std::size_t>(cfg.seq),
                                               static_cast<std::size_t>(cfg.local_sequences()));
  std::vector<double> ref(grads.size(), 0.0);
  for (int d = 0; d < cfg.dp(); ++d) {  // each data-parallel group's micro-batch
    const Json& first = all.at(static_cast<std::size_t>(d * cfg.tp));
    const std::vector<double> g =
        reference_gradients(model, weights, first.at("x").get<std::vector<double>>(),
                            first.at("t").get<std::vector<double>>());
    if (g.size() != ref.size()) throw EnvironmentError("transformer_step: reference size");
    for (std::size_t i = 0; i < g.size(); ++i) ref[i] += cfg.accum * g[i];
  }
  const TensorErrors e = tensor_errors(model, grads, ref);
  const double tolerance = gradient_tolerance(cfg.precision);
  v.details["grad_rel_l2"] = e.worst;
  v.details["grad_worst_tensor"] =
      std::string(to_string(e.worst_segment)) + " of layer " + std::to_string(e.worst_layer);
  v.details["grad_tolerance"] = tolerance;
  if (e.worst <= tolerance && e.nonfinite == 0) return {};
  return {false, "tiny-model gradients differ from the FP64 reference: the " +
                     std::string(to_string(e.worst_segment)) + " of layer " +
                     std::to_string(e.worst_layer) + " by " + std::to_string(e.worst) +
                     " (relative), tolerance " + std::to_string(tolerance)};
}

}  // namespace mgbench::bench::transformer
