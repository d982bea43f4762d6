// train_step on one GPU through the registered workload: every precision verifies (replica
// hash, tiny-model gradients against the FP64 reference), overlap/h2d off and the own
// all-reduce verify too, the step-time breakdown and peak memory are reported, every point
// records that it was timed host-side on a hot cache, and an impossible configuration ends as
// `oom` with the next point of the group still `ok`.
#include <cstdint>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/workload.hpp"
#include "workload_runner.hpp"

using mgbench::Json;
using mgbench::Params;
using mgbench::Status;

namespace {

// A small point: 4 layers of 512 (one bucket per layer at bucket_mb 1), batch 256, accum 2.
Params train_point(const std::string& dtype) {
  return Params{{"layers", 4},       {"hidden", 512},  {"batch", 256},
                {"dtype", dtype},    {"accum", 2},     {"overlap", true},
                {"h2d", true},       {"impl", "nccl"}, {"bucket_mb", 1}};
}

// The registered "train_step" workload on GPU 0 with the quick settings.
std::vector<mgbench::PointResult> run_train(const std::vector<Params>& points) {
  return mgbench::test::run_workload("train_step", {0}, points, mgbench::test::fast_settings());
}

// The breakdown metrics: in PointResult::metrics once the executor merges rank details,
// else in rank 0's details.
Json breakdown_of(const mgbench::PointResult& r) {
  if (r.metrics.contains("compute_only_s")) return r.metrics;
  return r.extra.at("ranks").at(0).at("details").at("metrics");
}

void require_verified(const mgbench::PointResult& r) {
  CAPTURE(r.params.dump(), mgbench::to_string(r.status), r.message, r.verification.dump());
  REQUIRE(r.status == Status::ok);
  CHECK(r.verification.value("ok", false));
  CHECK(r.verification.value("replicas_agree", false));
  CHECK(r.verification.value("nonfinite_weights", -1) == 0);
  REQUIRE(r.verification.contains("grad_rel_l2"));
  CHECK(r.verification["grad_rel_l2"].get<double>() <=
        r.verification["grad_tolerance"].get<double>());
  REQUIRE(r.metrics.contains("samples_per_s"));
  CHECK(r.metrics["samples_per_s"].get<double>() > 0);
}

}  // namespace

TEST_CASE("train_step fp32 on one GPU: replica hash and gradients match FP64", "[gpu][train]") {
  const auto results = run_train({train_point("fp32")});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
  CHECK(results[0].verification["grad_tolerance"].get<double>() == Approx(1e-4));
}

TEST_CASE("train_step tf32 on one GPU: replica hash and gradients match FP64", "[gpu][train]") {
  const auto results = run_train({train_point("tf32")});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
}

TEST_CASE("train_step bf16 on one GPU: replica hash and gradients match FP64", "[gpu][train]") {
  const auto results = run_train({train_point("bf16")});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
}

TEST_CASE("train_step fp16 on one GPU: replica hash and gradients match FP64", "[gpu][train]") {
  const auto results = run_train({train_point("fp16")});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
}

TEST_CASE("train_step without overlap, without h2d and accum 1 verifies", "[gpu][train]") {
  Params p = train_point("bf16");
  p.set("overlap", false);
  p.set("h2d", false);
  p.set("accum", 1);
  const auto results = run_train({p});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
  CHECK(breakdown_of(results[0])["h2d_s"].get<double>() == 0.0);
}

TEST_CASE("train_step with the own all-reduce (impl=mgbench) verifies on one GPU",
          "[gpu][train]") {
  Params p = train_point("bf16");
  p.set("impl", "mgbench");
  const auto results = run_train({p});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
}

TEST_CASE("train_step reports the step-time breakdown", "[gpu][train]") {
  const auto results = run_train({train_point("bf16")});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
  const Json b = breakdown_of(results[0]);
  CAPTURE(b.dump());
  CHECK(b["breakdown_step_s"].get<double>() > 0);
  CHECK(b["compute_only_s"].get<double>() > 0);
  CHECK(b["comm_s"].get<double>() >= 0);  // one rank: NCCL's in-place all-reduce is ~free
  CHECK(b["h2d_s"].get<double>() > 0);
  CHECK(b["optimizer_s"].get<double>() > 0);
  CHECK(b["exposed_comm_s"].get<double>() >= 0);
  CHECK(b["overlap_ratio"].get<double>() >= 0);
  CHECK(b["overlap_ratio"].get<double>() <= 1);
  // The parts timed alone are each shorter than the whole step (generous: timing noise).
  CHECK(b["optimizer_s"].get<double>() < b["breakdown_step_s"].get<double>());
  CHECK(b["compute_only_s"].get<double>() < 1.5 * b["breakdown_step_s"].get<double>());
}

TEST_CASE("train_step is timed host-side on a hot cache and records it", "[gpu][train]") {
  const auto results = run_train({train_point("bf16")});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
  CHECK(results[0].measured.timing == mgbench::TimingMethod::host);
  CHECK(results[0].measured.cache == mgbench::CacheMode::hot);
  CHECK(results[0].metrics["step_time_s"].get<double>() > 0);
}

TEST_CASE("train_step reports peak device memory at least its own allocations",
          "[gpu][train]") {
  const auto results = run_train({train_point("bf16")});
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
  const auto& r = results[0];
  REQUIRE(r.memory.contains("peak_bytes"));
  REQUIRE(r.memory["peak_bytes"].size() == 1);
  const Json details = r.extra.at("ranks").at(0).at("details");
  const auto peak = r.memory["peak_bytes"][0].get<std::uint64_t>();
  CHECK(peak >= details["allocated_bytes"].get<std::uint64_t>());
  CHECK(details["allocated_bytes"].get<std::uint64_t>() >=
        details["estimate_bytes"].get<std::uint64_t>());
  CHECK(details["buckets"].get<int>() == 4);
}

TEST_CASE("train_step: an impossible configuration is oom and the next point is still ok",
          "[gpu][train]") {
  // 64 layers of 65536 x batch 65536 in fp32: the activations alone are over 1 TB.
  Params huge = train_point("fp32");
  huge.set("layers", 64);
  huge.set("hidden", 65536);
  huge.set("batch", 65536);
  const auto results = run_train({huge, train_point("bf16")});
  REQUIRE(results.size() == 2);
  CAPTURE(results[0].message);
  CHECK(results[0].status == Status::oom);
  require_verified(results[1]);
}

TEST_CASE("train_step --batch-sizes auto: batches above an OOM are skipped, others run",
          "[gpu][train]") {
  // The executor's real path: settings.batch_auto on, a series whose second batch cannot fit.
  mgbench::RunSettings settings = mgbench::test::fast_settings();
  settings.batch_auto = true;
  Params small = train_point("fp32");
  Params huge = train_point("fp32");
  huge.set("layers", 64);
  huge.set("hidden", 65536);
  huge.set("batch", 65536);  // over 1 TB of activations: oom
  Params larger = huge;
  larger.set("batch", 131072);  // same series, larger batch: never tried
  Params other = train_point("bf16");
  const auto results = mgbench::test::run_workload("train_step", {0}, {small, huge, larger, other},
                                                   settings);
  REQUIRE(results.size() == 4);
  require_verified(results[0]);
  CAPTURE(results[1].message, results[2].message);
  CHECK(results[1].status == Status::oom);
  CHECK(results[2].status == Status::skipped);
  CHECK(results[2].message.find("above the OOM boundary: batch 65536") != std::string::npos);
  require_verified(results[3]);  // another series is not affected
}

TEST_CASE("train_step with 1024 layers of one bucket each never waits behind a closed gate",
          "[gpu][train]") {
  // Thousands of kernels and 1024 collectives per step: more than the CUDA launch queue and
  // NCCL hold while a start gate is closed. The warm-up's sizing op and the breakdown are timed
  // like the step's samples (host-launched), so nothing waits for a gate that only opens once
  // everything is enqueued (issue 30, finding 11); with the gate they failed after its timeout.
  mgbench::RunSettings settings = mgbench::test::fast_settings();
  settings.gate_timeout_s = 2;
  const Params deep{{"layers", 1024}, {"hidden", 32},    {"batch", 32},
                    {"dtype", "fp32"}, {"accum", 1},      {"overlap", true},
                    {"h2d", false},    {"impl", "nccl"},  {"bucket_mb", 0}};
  const auto results = mgbench::test::run_workload("train_step", {0}, {deep}, settings);
  REQUIRE(results.size() == 1);
  require_verified(results[0]);
  CHECK(breakdown_of(results[0]).at("breakdown_step_s").get<double>() > 0);
  const Json details = results[0].extra.at("ranks").at(0).at("details");
  CHECK(details.at("breakdown_timing") == "host");
  CHECK(details.at("buckets") == 1024);
}
