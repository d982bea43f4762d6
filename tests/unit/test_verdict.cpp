// Plain-words verdicts: the text for each anomaly, the breakdown and the slow-GPU sentence.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/verdict.hpp"

using mgbench::compute_verdicts;
using mgbench::Json;
using mgbench::PointResult;
using mgbench::ScalingRow;
using mgbench::ScalingSeries;

namespace {

ScalingRow row(int gpus, double throughput, double speedup, std::size_t point_index) {
  ScalingRow r;
  r.gpus = gpus;
  r.throughput = throughput;
  r.speedup = speedup;
  r.efficiency = speedup / gpus;
  r.point_index = point_index;
  return r;
}

ScalingSeries series(const std::string& workload, mgbench::Params params,
                     std::vector<ScalingRow> rows, const std::string& unit = "TFLOP/s",
                     const std::string& mode = "weak") {
  ScalingSeries s;
  s.workload = workload;
  s.params = std::move(params);
  s.metric = "throughput";
  s.unit = unit;
  s.mode = mode;
  s.rows = std::move(rows);
  return s;
}

PointResult point(std::size_t index, const std::string& workload, mgbench::Params params, int gpus,
                  Json metrics = Json::object()) {
  PointResult p;
  p.index = index;
  p.workload = workload;
  p.params = std::move(params);
  p.gpus = gpus;
  p.metrics = std::move(metrics);
  return p;
}

const Json kGemm = {{"dtype", "bf16"}, {"m", 8192}};

std::string only_text(const Json& verdicts) {
  REQUIRE(verdicts.is_array());
  REQUIRE(verdicts.size() == 1);
  return verdicts[0].at("text").get<std::string>();
}

}  // namespace

TEST_CASE("verdict: the issue's example, with breakdown and a slow GPU") {
  const Json bf16 = {{"batch", 64}, {"precision", "bf16"}};
  const Json fp32 = {{"batch", 128}, {"precision", "fp32"}};
  const std::vector<ScalingSeries> all = {
      series("train_step", bf16,
             {row(1, 1000, 1.0, 0), row(2, 1960, 1.96, 1), row(8, 7100, 7.1, 2)}, "samples/s"),
      series("train_step", fp32, {row(1, 400, 1.0, 3), row(2, 790, 1.975, 4)}, "samples/s")};
  const std::vector<PointResult> points = {
      point(0, "train_step", bf16, 1), point(1, "train_step", bf16, 2),
      point(2, "train_step", bf16, 8,
            {{"step_time_s", 0.1}, {"exposed_comm_s", 0.009}, {"overlap_ratio", 0.71}}),
      point(3, "train_step", fp32, 1), point(4, "train_step", fp32, 2)};
  const std::vector<Json> outliers = {Json{{"workload", "train_step"},
                                           {"params", bf16},
                                           {"device", 3},
                                           {"throughput", 930.0},
                                           {"best_device", 0},
                                           {"best", 1000.0},
                                           {"deficit", 0.07}}};
  const Json v = compute_verdicts(all, points, outliers);
  REQUIRE(v.size() == 2);
  CHECK(v[0].at("text") ==
        "train_step bf16 batch 64: 8 GPUs give 7.1x (89 %). Exposed communication is 9 % of "
        "the step; overlap hides 71 % of all-reduce time. GPU 3 is 7 % slower than the best GPU "
        "(GPU 0).");
  CHECK(v[0].at("anomalies") == Json::array({"slow_gpu"}));
  CHECK(v[1].at("text") == "train_step fp32 batch 128: 2 GPUs give 2.0x (99 %).");
  CHECK(v[1].at("anomalies").empty());
}

TEST_CASE("verdict: fields gpus_max, speedup, efficiency come from the largest GPU count") {
  const Json v = compute_verdicts(
      {series("gemm", kGemm, {row(1, 100, 1.0, 0), row(4, 360, 3.6, 1)})}, {}, {});
  REQUIRE(v.size() == 1);
  CHECK(v[0].at("workload") == "gemm");
  CHECK(v[0].at("params") == kGemm);
  CHECK(v[0].at("gpus_max") == 4);
  CHECK(v[0].at("speedup").get<double>() == Approx(3.6));
  CHECK(v[0].at("efficiency").get<double>() == Approx(0.9));
  CHECK(v[0].at("mode") == "weak");
}

TEST_CASE("verdict: super-linear efficiency above 105 % is an anomaly") {
  const Json v = compute_verdicts(
      {series("gemm", kGemm, {row(1, 100, 1.0, 0), row(2, 212, 2.12, 1), row(4, 400, 4.0, 2)})},
      {}, {});
  // Without the points (no telemetry) it cannot say whether the baseline was slowed.
  CHECK(only_text(v) ==
        "gemm: 4 GPUs give 4.0x (100 %). Anomaly: super-linear efficiency at 2 GPUs (106 %): "
        "this run has no telemetry to tell whether the 1-GPU baseline was slowed.");
  CHECK(v[0].at("anomalies") == Json::array({"super_linear"}));
}

TEST_CASE("verdict: 105 % efficiency exactly is not super-linear") {
  const Json v = compute_verdicts({series("gemm", kGemm, {row(1, 100, 1.0, 0),
                                                          row(2, 210, 2.0 * 1.05, 1)})},
                                  {}, {});
  CHECK(v[0].at("anomalies").empty());
}

TEST_CASE("verdict: efficiency below 50 % is a collapse, naming every GPU count affected") {
  const Json v = compute_verdicts({series("gemm", kGemm,
                                          {row(1, 100, 1.0, 0), row(2, 150, 1.5, 1),
                                           row(4, 180, 1.8, 2), row(8, 288, 2.88, 3)})},
                                  {}, {});
  CHECK(only_text(v) ==
        "gemm: 8 GPUs give 2.9x (36 %). Anomaly: scaling collapses at 4 GPUs (45 %) and 8 GPUs "
        "(36 %): less than half of the GPUs' combined capacity is used.");
  CHECK(v[0].at("anomalies") == Json::array({"collapse"}));
}

TEST_CASE("verdict: throughput falling with more GPUs is non-monotonic") {
  const Json v = compute_verdicts(
      {series("gemm", kGemm, {row(1, 100, 1.0, 0), row(2, 190, 1.9, 1), row(3, 185, 1.85, 2)})},
      {}, {});
  CHECK(only_text(v) ==
        "gemm: 3 GPUs give 1.9x (62 %). The most throughput is at 2 GPUs (190.0 TFLOP/s). "
        "Anomaly: throughput falls from 2 to 3 GPUs (190.0 -> 185.0 TFLOP/s).");
  CHECK(v[0].at("anomalies") == Json::array({"non_monotonic"}));
}

TEST_CASE("verdict: a drop by half is both a collapse and non-monotonic") {
  const Json v = compute_verdicts(
      {series("gemm", kGemm, {row(1, 100, 1.0, 0), row(2, 190, 1.9, 1), row(4, 148, 1.48, 2)})},
      {}, {});
  CHECK(only_text(v) ==
        "gemm: 4 GPUs give 1.5x (37 %). The most throughput is at 2 GPUs (190.0 TFLOP/s). "
        "Anomaly: scaling collapses at 4 GPUs (37 %): less than half of the GPUs' combined "
        "capacity is used. Anomaly: throughput falls from 2 to 4 GPUs (190.0 -> 148.0 "
        "TFLOP/s).");
  CHECK(v[0].at("anomalies") == Json::array({"collapse", "non_monotonic"}));
}

TEST_CASE("verdict: a healthy series has no anomaly sentence") {
  const Json v = compute_verdicts(
      {series("gemm", kGemm, {row(1, 100, 1.0, 0), row(2, 196, 1.96, 1), row(4, 380, 3.8, 2)})},
      {}, {});
  CHECK(only_text(v) == "gemm: 4 GPUs give 3.8x (95 %).");
  CHECK(v[0].at("anomalies").empty());
}

TEST_CASE("verdict: a single-GPU series says there is no scaling figure") {
  const Json v = compute_verdicts({series("gemm", kGemm, {row(1, 812.3, 1.0, 0)})}, {}, {});
  CHECK(only_text(v) == "gemm: measured on 1 GPU only (812.3 TFLOP/s); no scaling figure.");
  CHECK(v[0].at("gpus_max") == 1);
}

TEST_CASE("verdict: strong scaling says the global batch is fixed, and its size per GPU") {
  const mgbench::Params params{{"global_batch", 256}, {"precision", "bf16"}};
  const Json v = compute_verdicts(
      {series("train_step", params, {row(1, 1280, 1.0, 0), row(4, 4571.4, 3.5714, 1)},
              "samples/s", "strong")},
      {}, {});
  CHECK(only_text(v) ==
        "train_step: 4 GPUs give 3.6x (89 %) at a fixed global batch of 256 (64 per GPU).");
}

TEST_CASE("verdict: copy and optimizer shares are 1-GPU facts, not scaling losses") {
  const mgbench::Params params{{"batch", 64}};
  const Json v = compute_verdicts(
      {series("train_step", params, {row(1, 1000, 1.0, 0), row(2, 1980, 1.98, 1)},
              "samples/s")},
      {point(0, "train_step", params, 1),
       point(1, "train_step", params, 2,
             {{"step_time_s", 0.05}, {"h2d_s", 0.0015}, {"optimizer_s", 0.001}})},
      {});
  // They exist on one GPU too: on more GPUs the loss split says what scaling loses.
  CHECK(only_text(v) == "train_step: 2 GPUs give 2.0x (99 %).");
}

TEST_CASE("verdict: overlap alone is reported without the exposed share") {
  const mgbench::Params params{{"batch", 64}};
  const Json v = compute_verdicts(
      {series("train_step", params, {row(1, 1000, 1.0, 0), row(2, 1900, 1.9, 1)}, "samples/s")},
      {point(1, "train_step", params, 2, {{"overlap_ratio", 0.5}})}, {});
  CHECK(only_text(v) ==
        "train_step: 2 GPUs give 1.9x (95 %). Overlap hides 50 % of all-reduce time.");
}

TEST_CASE("verdict: no communication sentence on a single GPU") {
  const mgbench::Params params{{"batch", 64}};
  const Json v = compute_verdicts(
      {series("train_step", params, {row(1, 1000, 1.0, 0)}, "samples/s")},
      {point(0, "train_step", params, 1,
             {{"step_time_s", 0.1}, {"exposed_comm_s", 0.0}, {"optimizer_s", 0.004}})},
      {});
  CHECK(only_text(v) ==
        "train_step: measured on 1 GPU only (1000 samples/s); no scaling figure. The optimizer "
        "takes 4 % of the step.");
}

TEST_CASE("verdict: outliers of other parameters or workloads are not attached") {
  const Json other = {{"dtype", "fp16"}, {"m", 8192}};
  const std::vector<Json> outliers = {
      Json{{"workload", "gemm"}, {"params", other}, {"device", 1}, {"best_device", 0},
           {"deficit", 0.2}},
      Json{{"workload", "allreduce"}, {"params", kGemm}, {"device", 1}, {"best_device", 0},
           {"deficit", 0.2}}};
  const Json v = compute_verdicts({series("gemm", kGemm, {row(1, 100, 1.0, 0),
                                                          row(2, 196, 1.96, 1)})},
                                  {point(0, "gemm", kGemm, 1)}, outliers);
  CHECK(only_text(v) == "gemm: 2 GPUs give 2.0x (98 %).");
  CHECK(v[0].at("anomalies").empty());
}

TEST_CASE("verdict label: only varying parameters, text values first, booleans on/off") {
  const Json a = {{"batch", 64}, {"overlap", true}, {"precision", "bf16"}, {"layers", 8},
                  {"grad_accum", 1}};
  const Json b = {{"batch", 64}, {"overlap", false}, {"precision", "fp16"}, {"layers", 8},
                  {"grad_accum", 4}};
  const std::vector<ScalingSeries> all = {series("train_step", a, {row(1, 1, 1, 0)}),
                                          series("train_step", b, {row(1, 1, 1, 1)}),
                                          series("gemm", kGemm, {row(1, 1, 1, 2)})};
  CHECK(mgbench::verdict_label(all[0], all) == "bf16 grad accum 1 overlap on");
  CHECK(mgbench::verdict_label(all[1], all) == "fp16 grad accum 4 overlap off");
  CHECK(mgbench::verdict_label(all[2], all).empty());
}

TEST_CASE("verdict: malformed outlier rows are ignored") {
  const std::vector<Json> outliers = {Json{{"workload", "gemm"}, {"params", kGemm}},
                                      Json("not an object")};
  const Json v = compute_verdicts({series("gemm", kGemm, {row(1, 100, 1.0, 0),
                                                          row(2, 196, 1.96, 1)})},
                                  {point(0, "gemm", kGemm, 1)}, outliers);
  CHECK(only_text(v) == "gemm: 2 GPUs give 2.0x (98 %).");
}

TEST_CASE("verdict: a point that names its communication and its parts is described in its words") {
  const Json fsdp = {{"model", "llama3-8b"}, {"strategy", "fsdp"}};
  PointResult last = point(1, "transformer_step", fsdp, 8,
                           {{"step_time_s", 0.2}, {"exposed_comm_s", 0.024},
                            {"overlap_ratio", 0.4}});
  last.extra = Json{{"ranks", Json::array({Json{
      {"details",
       {{"communication",
         {{"what", "the FSDP parameter all-gathers and gradient reduce-scatters"},
          {"parts", Json::array({Json{{"label", "parameter all-gathers"}, {"exposed_s", 0.018}},
                                 Json{{"label", "gradient reduce-scatters"},
                                      {"exposed_s", 0.006}}})}}}}}}})}};
  const std::vector<PointResult> points = {point(0, "transformer_step", fsdp, 1), last};
  const Json v = compute_verdicts(
      {series("transformer_step", fsdp, {row(1, 1000, 1.0, 0), row(8, 7000, 7.0, 1)},
              "tokens/s")},
      points, {});
  const std::string text = only_text(v);
  CHECK(text.find("Exposed communication (the FSDP parameter all-gathers and gradient "
                  "reduce-scatters) is 12 % of the step (parameter all-gathers 9 %, gradient "
                  "reduce-scatters 3 %); overlap hides 40 % of its time.") != std::string::npos);
  CHECK(text.find("all-reduce") == std::string::npos);
}
