// transformer_step on several GPUs (the binary skips itself below 2): for ddp, fsdp, tp and (on 4
// GPUs or more) tp_dp, the replicas or shards agree after the measured steps, the whole model's
// tiny-model gradients assembled from the ranks match the FP64 reference, and the bytes each
// rank handed to NCCL per step equal the strategy's formula, computed here from the point.
#include <cstdlib>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "training/transformer_math.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "workload_runner.hpp"

namespace {

// mgbench never uses NVLink SHARP / multicast; set before any NCCL call.
[[maybe_unused]] const int kNvlsOff = ::setenv("NCCL_NVLS_ENABLE", "0", 0);

using mgbench::Json;
using mgbench::Params;
using mgbench::Status;
using mgbench::test::cuda_device_count;
using mgbench::test::first_devices;
namespace tf = mgbench::bench::transformer;

// hidden 256, 8 heads of 32 over 4 kv heads, MLP 512, 2 layers of 128-token sequences, 2 per GPU:
// tensor parallelism of 2 and 4 divides it.
Params small_point(const std::string& strategy, bool overlap = true, int accum = 1) {
  Params p{{"model", "custom"}, {"hidden", 256},  {"heads", 8},   {"kv_heads", 4},
           {"mlp", 512},        {"layers", 2},    {"seq", 128},   {"batch", 2},
           {"accum", accum},    {"dtype", "bf16"}, {"strategy", strategy}};
  if (strategy != "tp") p.set("overlap", overlap);
  if (strategy == "tp_dp") p.set("tp_size", 2);
  return p;
}

std::vector<mgbench::PointResult> run_on(int gpus, const std::vector<Params>& points) {
  return mgbench::test::run_workload("transformer_step", first_devices(gpus), points,
                                     mgbench::test::fast_settings());
}

// Every rank verified, the same agreement, and each rank's bytes per kind equal to the formula.
void require_verified(const mgbench::PointResult& r, int gpus) {
  CAPTURE(r.params.dump(), r.gpus, mgbench::to_string(r.status), r.message,
          r.verification.dump());
  REQUIRE(r.status == Status::ok);
  CHECK(r.verification.value("ok", false));
  REQUIRE(r.extra.contains("ranks"));
  const Json& ranks = r.extra["ranks"];
  REQUIRE(ranks.size() == static_cast<std::size_t>(gpus));
  const tf::CommVolume want = tf::comm_volume(tf::config_from_params(r.params, gpus));
  for (const auto& rank : ranks) {
    const Json& v = rank["verification"];
    CHECK(v["replicas_agree"].get<bool>());
    CHECK(v["comm_volume_ok"].get<bool>());
    CHECK(v["nonfinite_weights"].get<std::uint64_t>() == 0);
    CHECK(v["grad_rel_l2"].get<double>() <= v["grad_tolerance"].get<double>());
    const Json& bytes = v["comm_bytes"];
    CHECK(bytes["all_reduce_tp"][0].get<double>() == want.all_reduce_tp);
    CHECK(bytes["all_reduce_dp"][0].get<double>() == want.all_reduce_dp);
    CHECK(bytes["all_gather"][0].get<double>() == want.all_gather);
    CHECK(bytes["reduce_scatter"][0].get<double>() == want.reduce_scatter);
  }
  CHECK(want.total() > 0);
  CHECK(r.metrics["tokens_per_s"].get<double>() > 0);
}

}  // namespace

TEST_CASE("transformer_step ddp on 2 GPUs: replicas agree, gradients and bytes as the formula",
          "[multi_gpu][transformer]") {
  const auto results = run_on(2, {small_point("ddp"), small_point("ddp", false, 2)});
  REQUIRE(results.size() == 2);
  require_verified(results[0], 2);
  require_verified(results[1], 2);
}

TEST_CASE("transformer_step fsdp on 2 GPUs: shards agree, gradients and bytes as the formula",
          "[multi_gpu][transformer]") {
  const auto results = run_on(2, {small_point("fsdp"), small_point("fsdp", false),
                                  small_point("fsdp", true, 2)});
  REQUIRE(results.size() == 3);
  for (const auto& r : results) require_verified(r, 2);
  // Each rank holds half of the parameter state.
  const Json d = results[0].extra["ranks"][0]["details"];
  CHECK(d["communication"]["parts"].size() == 2);
}

TEST_CASE("transformer_step tp on 2 GPUs: slices agree, gradients and bytes as the formula",
          "[multi_gpu][transformer]") {
  const auto results = run_on(2, {small_point("tp"), small_point("tp", true, 2)});
  REQUIRE(results.size() == 2);
  require_verified(results[0], 2);
  require_verified(results[1], 2);
  CHECK(results[0].extra["ranks"][1]["details"]["tp_rank"] == 1);
}

TEST_CASE("transformer_step on 4 GPUs: tp, tp x dp and fsdp verify", "[multi_gpu][transformer]") {
  if (cuda_device_count() < 4) mgbench::test::skip_test("needs 4 GPUs");
  const auto results = run_on(4, {small_point("tp"), small_point("tp_dp"),
                                  small_point("tp_dp", false), small_point("fsdp")});
  REQUIRE(results.size() == 4);
  for (const auto& r : results) require_verified(r, 4);
  const Json& ranks = results[1].extra["ranks"];
  CHECK(ranks[3]["details"]["tp_rank"] == 1);
  CHECK(ranks[3]["details"]["dp_rank"] == 1);
}

TEST_CASE("transformer_step tp on 3 GPUs: a degree that does not divide 8 verifies",
          "[multi_gpu][transformer]") {
  if (cuda_device_count() < 3) mgbench::test::skip_test("needs 3 GPUs");
  Params p = small_point("tp");  // 12 heads over 6 kv heads, MLP 768: 3 divides them
  p.set("hidden", 384);
  p.set("heads", 12);
  p.set("kv_heads", 6);
  p.set("mlp", 768);
  const auto results = run_on(3, {p});
  REQUIRE(results.size() == 1);
  require_verified(results[0], 3);  // the tiny model's 3 kv heads: whole heads on every rank
}

TEST_CASE("transformer_step ddp on every visible GPU: replicas agree",
          "[multi_gpu][transformer]") {
  const int n = cuda_device_count();
  const auto results = run_on(n, {small_point("ddp")});
  REQUIRE(results.size() == 1);
  require_verified(results[0], n);
}
