// The workloads as the binary registers them: axes, defaults per profile, throughput metrics.
// Runs on the CPU (declarations need no GPU); this binary links the workloads and so cuBLAS and
// NCCL, which the unit-test binary must not.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "gemm/gemm_math.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/workload.hpp"

namespace {

using mgbench::AxisValues;
using mgbench::bench::expand_gemm_points;

// The values a profile gives each axis of the registered workload.
AxisValues registered_defaults(mgbench::Profile profile) {
  const mgbench::Workload* gemm = mgbench::find_workload("gemm");
  REQUIRE(gemm != nullptr);
  AxisValues values;
  for (const auto& axis : gemm->axes()) {
    for (const auto& text : axis.values_for(profile)) {
      values[axis.name].push_back(axis.parse_value(text));
    }
  }
  return values;
}

}  // namespace

TEST_CASE("gemm workload: standard defaults plan square points only") {
  const auto points = expand_gemm_points(registered_defaults(mgbench::Profile::standard));
  // 2 sizes x 5 dtypes x 2 impls.
  CHECK(points.size() == 20);
  for (const auto& p : points) CHECK(p.at("shape") == "square");
}

TEST_CASE("gemm workload: quick profile plans one size and fewer dtypes") {
  const auto points = expand_gemm_points(registered_defaults(mgbench::Profile::quick));
  REQUIRE_FALSE(points.empty());
  CHECK(points.size() < 20);
  for (const auto& p : points) CHECK(p.at("m") == 4096);
}

TEST_CASE("gemm workload: declares the axes the CLI maps and its throughput metric") {
  const mgbench::Workload* gemm = mgbench::find_workload("gemm");
  REQUIRE(gemm != nullptr);
  const auto* batch = gemm->find_axis("batch");
  const auto* dtype = gemm->find_axis("dtype");
  REQUIRE(batch != nullptr);
  REQUIRE(dtype != nullptr);
  CHECK(batch->standard_values.empty());
  CHECK(dtype->allowed_values == std::vector<std::string>{"fp32", "tf32", "fp16", "bf16", "fp8"});
  CHECK_THROWS_AS(dtype->parse_value("int4"), mgbench::UsageError);
  CHECK(gemm->throughput_metric() == "tflops_aggregate");
  CHECK(gemm->run() != nullptr);
}

TEST_CASE("allreduce workload declares nccl-tests parameters and busbw throughput",
          "[allreduce]") {
  const mgbench::Workload* w = mgbench::find_workload("allreduce");
  REQUIRE(w != nullptr);
  for (const char* name : {"bytes", "dtype", "impl", "inplace", "algo"}) {
    CHECK(w->find_axis(name) != nullptr);
  }
  CHECK(w->throughput_metric() == "busbw_GBps");
  REQUIRE(w->find_axis("dtype") != nullptr);
  CHECK(w->find_axis("dtype")->allowed_values ==
        std::vector<std::string>{"fp32", "bf16", "fp16", "int32"});
}

namespace {

// Points a profile plans for one registered workload (its own expansion).
std::size_t planned_points(const std::string& name, mgbench::Profile profile) {
  const mgbench::Workload* w = mgbench::find_workload(name);
  REQUIRE(w != nullptr);
  AxisValues values;
  for (const auto& axis : w->axes()) {
    for (const auto& text : axis.values_for(profile)) {
      values[axis.name].push_back(axis.parse_value(text));
    }
  }
  return w->expand_points(values).size();
}

}  // namespace

TEST_CASE("data-path workloads declare their axes, throughput and a short default plan",
          "[datapath]") {
  struct Expect {
    const char* name;
    std::vector<std::string> axes;
    std::size_t standard, quick;
    bool summary;
  };
  const std::vector<Expect> expected{
      {"membw", {"impl", "bytes"}, 6, 3, false},
      {"h2d", {"direction", "memory", "numa", "bytes"}, 12, 2, true},
      {"p2p", {"engine", "direction", "bytes"}, 4, 2, true}};
  for (const auto& e : expected) {
    INFO(e.name);
    const mgbench::Workload* w = mgbench::find_workload(e.name);
    REQUIRE(w != nullptr);
    for (const auto& axis : e.axes) CHECK(w->find_axis(axis) != nullptr);
    CHECK(w->throughput_metric() == "GBps_aggregate");
    CHECK(w->run() != nullptr);
    CHECK(static_cast<bool>(w->summarizer()) == e.summary);
    CHECK(planned_points(e.name, mgbench::Profile::standard) == e.standard);
    CHECK(planned_points(e.name, mgbench::Profile::quick) == e.quick);
    const mgbench::Presentation p = w->presentation();
    REQUIRE(p.headline_.has_value());
    CHECK(p.headline_->name == "GBps_aggregate");
    CHECK_FALSE(p.tables.empty());
    // What results.json stores reads back (reports render from it alone).
    const mgbench::Json stored = p;
    mgbench::Presentation back;
    CHECK_NOTHROW(mgbench::from_json(stored, back));
    CHECK(back.tables.size() == p.tables.size());
    CHECK(back.summaries.size() == (e.summary ? 1u : 0u));
  }
  // membw's default arrays are all far larger than an H200's 60 MB L2.
  for (const auto& text : mgbench::find_workload("membw")->find_axis("bytes")->standard_values) {
    CHECK(std::stoll(text) >= (std::int64_t{256} << 20));
  }
  CHECK_THROWS_AS(mgbench::find_workload("h2d")->find_axis("memory")->parse_value("managed"),
                  mgbench::UsageError);
}

TEST_CASE("every workload's headline has a % of peak, of a peak kind the reports know") {
  // The headline (the summary's best figure) of every real workload names what it is a share
  // of, directly or through its per-unit metric; the test workload has none.
  for (const auto& w : mgbench::workloads()) {
    if (w.name() == "selftest") continue;
    INFO(w.name());
    const mgbench::Presentation p = w.presentation();
    REQUIRE(p.headline_);
    const mgbench::MetricSpec* headline = p.find_metric(p.headline_->name);
    REQUIRE(headline != nullptr);
    REQUIRE(headline->peak_);
    const mgbench::MetricSpec* unit =
        headline->peak_->as.empty() ? headline : p.find_metric(headline->peak_->as);
    REQUIRE(unit != nullptr);
    REQUIRE(unit->peak_);
    CHECK(unit->peak_->as.empty());
  }
  const auto kind_of = [](const char* workload, const char* metric) {
    const mgbench::Presentation p = mgbench::find_workload(workload)->presentation();
    const mgbench::MetricSpec* m = p.find_metric(metric);
    REQUIRE(m != nullptr);
    REQUIRE(m->peak_);
    return m->peak_->kind;
  };
  CHECK(kind_of("gemm", "tflops_per_gpu") == mgbench::LimitKind::tflops);
  CHECK(kind_of("membw", "GBps_per_gpu") == mgbench::LimitKind::hbm_traffic);
  CHECK(kind_of("h2d", "GBps_per_gpu") == mgbench::LimitKind::host_link);
  CHECK(kind_of("p2p", "GBps_per_pair") == mgbench::LimitKind::peer_link);
  CHECK(kind_of("allreduce", "busbw_GBps") == mgbench::LimitKind::peer_link);
  for (const char* collective :
       {"allgather", "reducescatter", "alltoall", "broadcast", "reduce", "sendrecv"}) {
    CHECK(kind_of(collective, "busbw_GBps") == mgbench::LimitKind::peer_link);
  }
  CHECK(kind_of("train_step", "model_tflops_per_gpu") == mgbench::LimitKind::tflops);
}

TEST_CASE("every workload declares what it measures: `mgbench accept` picks its stages by it") {
  using mgbench::WorkloadCategory;
  std::vector<std::string> communication, single_vs_all;
  for (const auto& w : mgbench::workloads()) {
    INFO(w.name());
    if (w.name() == "selftest") {
      CHECK(w.category() == WorkloadCategory::other);  // the test workload is in no stage
      continue;
    }
    CHECK(w.category() != WorkloadCategory::other);
    const bool talks =
        w.category() == WorkloadCategory::peer || w.category() == WorkloadCategory::collective;
    (talks ? communication : single_vs_all).push_back(w.name());
  }
  // The collectives, the peer matrix, and the data path and compute of the stage 3.
  for (const char* name : {"allreduce", "p2p", "allgather", "reducescatter", "alltoall",
                           "broadcast", "reduce", "sendrecv"}) {
    CHECK(std::find(communication.begin(), communication.end(), name) != communication.end());
  }
  for (const char* name : {"gemm", "membw", "h2d", "train_step"}) {
    CHECK(std::find(single_vs_all.begin(), single_vs_all.end(), name) != single_vs_all.end());
  }
  CHECK(std::string(mgbench::to_string(WorkloadCategory::collective)) == "collective");
}
