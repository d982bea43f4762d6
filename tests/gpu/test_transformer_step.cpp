// transformer_step on one GPU through the registered workload: ddp and fsdp (the strategies one
// GPU allows) verify in bf16 and fp16 (replicas or shards agree, the bytes handed to NCCL equal
// the formula, the tiny model's gradients match the FP64 reference tensor by tensor), with
// gradient accumulation and without overlap, with scores whose rows are not 16-byte multiples;
// the breakdown, the memory estimate and an out-of-memory configuration.
#include <cstdint>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "training/transformer_math.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/results.hpp"
#include "workload_runner.hpp"

using mgbench::Json;
using mgbench::Params;
using mgbench::Status;

namespace {

// A small custom model: hidden 256, 8 heads of 32 over 4 kv heads, MLP 512, 2 layers of 128-token
// sequences, 2 per GPU.
Params small_point(const std::string& strategy, const std::string& dtype = "bf16") {
  Params p{{"model", "custom"}, {"hidden", 256}, {"heads", 8},  {"kv_heads", 4},
           {"mlp", 512},        {"layers", 2},   {"seq", 128},  {"batch", 2},
           {"accum", 1},        {"dtype", dtype}, {"strategy", strategy}};
  if (strategy != "tp") p.set("overlap", true);
  if (strategy == "tp_dp") p.set("tp_size", 2);
  return p;
}

std::vector<mgbench::PointResult> run(const std::vector<Params>& points) {
  return mgbench::test::run_workload("transformer_step", {0}, points,
                                     mgbench::test::fast_settings());
}

void require_verified(const mgbench::PointResult& r) {
  CAPTURE(r.params.dump(), mgbench::to_string(r.status), r.message, r.verification.dump());
  REQUIRE(r.status == Status::ok);
  CHECK(r.verification.value("ok", false));
  CHECK(r.verification.value("replicas_agree", false));
  CHECK(r.verification.value("comm_volume_ok", false));
  CHECK(r.verification.value("nonfinite_weights", -1) == 0);
  REQUIRE(r.verification.contains("grad_rel_l2"));
  CHECK(r.verification["grad_rel_l2"].get<double>() <=
        r.verification["grad_tolerance"].get<double>());
  CHECK(r.verification["grad_rel_l2"].get<double>() > 0);  // 16-bit steps round
  REQUIRE(r.metrics.contains("tokens_per_s"));
  CHECK(r.metrics["tokens_per_s"].get<double>() > 0);
  CHECK(r.metrics["model_tflops_per_gpu"].get<double>() > 0);
}

}  // namespace

TEST_CASE("transformer_step ddp and fsdp on one GPU match the FP64 reference in bf16",
          "[gpu][transformer]") {
  const auto results = run({small_point("ddp"), small_point("fsdp")});
  REQUIRE(results.size() == 2);
  require_verified(results[0]);
  require_verified(results[1]);
  CHECK(results[0].verification["grad_tolerance"].get<double>() ==
        mgbench::bench::transformer::gradient_tolerance(mgbench::kernels::DType::bf16));
}

TEST_CASE("transformer_step in fp16 matches the FP64 reference", "[gpu][transformer]") {
  const auto results = run({small_point("ddp", "fp16"), small_point("fsdp", "fp16")});
  REQUIRE(results.size() == 2);
  require_verified(results[0]);
  require_verified(results[1]);
}

TEST_CASE("transformer_step accumulates micro-steps and runs without overlap",
          "[gpu][transformer]") {
  std::vector<Params> points;
  for (const char* s : {"ddp", "fsdp"}) {
    Params p = small_point(s);
    p.set("accum", 2);
    points.push_back(p);
    p.set("overlap", false);
    points.push_back(p);
  }
  const auto results = run(points);
  REQUIRE(results.size() == 4);
  for (const auto& r : results) require_verified(r);
}

TEST_CASE("transformer_step with sequences of 12 (scalar softmax rows) and multi-head attention",
          "[gpu][transformer]") {
  Params p = small_point("ddp");
  p.set("seq", 12);
  p.set("kv_heads", 8);
  const auto results = run({p});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
}

TEST_CASE("transformer_step reports the breakdown, FSDP's parts and its memory",
          "[gpu][transformer]") {
  const auto results = run({small_point("fsdp")});
  REQUIRE(results.size() == 1);
  const auto& r = results[0];
  require_verified(r);
  CHECK(r.measured.timing == mgbench::TimingMethod::host);
  CHECK(r.measured.cache == mgbench::CacheMode::hot);
  for (const char* k : {"breakdown_step_s", "compute_only_s", "optimizer_s"}) {
    CAPTURE(k);
    CHECK(r.metrics[k].get<double>() > 0);
  }
  CHECK(r.metrics["comm_s"].get<double>() >= 0);
  CHECK(r.metrics["overlap_ratio"].get<double>() >= 0);
  CHECK(r.metrics["overlap_ratio"].get<double>() <= 1);
  const Json details = r.extra.at("ranks").at(0).at("details");
  const Json parts = details.at("communication").at("parts");
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].at("label") == "parameter all-gathers");
  const auto allocated = details["allocated_bytes"].get<std::uint64_t>();
  CHECK(r.memory["peak_bytes"][0].get<std::uint64_t>() >= allocated);
  // The estimate is the replicas' buffers (the hash words aside) and the GEMM workspace.
  const auto estimate = details["estimate_bytes"].get<std::uint64_t>();
  CHECK(allocated >= estimate);
  CHECK(allocated - estimate <= 64);
}

TEST_CASE("transformer_step: an impossible configuration is oom, the next point ok",
          "[gpu][transformer]") {
  Params huge = small_point("ddp");
  huge.set("model", "llama3-70b");
  for (const char* k : {"hidden", "heads", "kv_heads", "mlp"}) huge.erase(k);
  huge.set("layers", 400);  // 342e9 parameters: over 6 TB of master weights and Adam state
  const auto results = run({huge, small_point("ddp")});
  REQUIRE(results.size() == 2);
  CAPTURE(results[0].message);
  CHECK(results[0].status == Status::oom);
  require_verified(results[1]);
}
