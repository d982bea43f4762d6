// "% of peak" for each kind of peak, the expected range's verdict (below, not within), its
// causes from the telemetry and the doctor, the unknown-model path, and the shares in
// results.json, the report tables, the flags and `compare`.
#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/analysis/peaks.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/compare_render.hpp"
#include "mgbench/reports/markdown.hpp"
#include "mgbench/reports/peaks.hpp"
#include "mgbench/reports/sections.hpp"
#include "mgbench/reports/summary.hpp"

namespace {

using mgbench::Json;
using mgbench::MetricSpec;
using mgbench::PeakSpec;
using mgbench::PointResult;
using mgbench::Presentation;
using mgbench::RunResult;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The environment of an HGX H200 as the fingerprint records it: `n` GPUs, PCIe gen5 x16 to the
// host, 18 NVLink links up, 700 W power limit (the default).
Json h200_env(int n, const std::string& name = "NVIDIA H200") {
  Json gpus = Json::array(), devices = Json::array();
  for (int i = 0; i < n; ++i) {
    gpus.push_back(Json{{"index", i},
                        {"name", name},
                        {"memory_bytes", 150109880320ull},
                        {"compute_capability", "9.0"},
                        {"pcie", {{"gen_current", 5}, {"gen_max", 5}, {"gen_gpu_max", 5},
                                  {"width_current", 16}, {"width_max", 16}}},
                        {"nvlink", {{"links_total", 18}, {"links_up", 18}}},
                        {"power_limit_w", {{"enforced", 700.0}, {"default", 700.0}}},
                        {"clocks_mhz", {{"sm_max", 1980}, {"mem_max", 3201}}}});
    devices.push_back(Json{{"index", i}, {"mem_bus_width", 6016}, {"mem_clock_khz", 3201000}});
  }
  return Json{{"gpus", gpus}, {"inventory", {{"devices", devices}}}};
}

// The presentations as the workloads declare them (only the metrics with a peak matter here).
void add_presentations(RunResult& run) {
  run.presentation["gemm"] =
      Presentation()
          .metric(MetricSpec("tflops_per_gpu", "TFLOP/s per GPU", "TFLOP/s")
                      .of_peak(PeakSpec::tflops("dtype")))
          .metric(MetricSpec("tflops_aggregate", "aggregate TFLOP/s", "TFLOP/s")
                      .of_peak(PeakSpec::same_as("tflops_per_gpu")))
          .headline("tflops_aggregate", "TFLOP/s");
  run.presentation["membw"] =
      Presentation().metric(MetricSpec("GBps_per_gpu", "GB/s per GPU", "GB/s").of_peak(PeakSpec::hbm()));
  run.presentation["h2d"] = Presentation().metric(
      MetricSpec("GBps_per_gpu", "GB/s per GPU", "GB/s").of_peak(PeakSpec::host_link("direction")));
  run.presentation["allreduce"] = Presentation().metric(
      MetricSpec("busbw_GBps", "busbw", "GB/s").of_peak(PeakSpec::peer_link()));
  run.presentation["train_step"] =
      Presentation()
          .metric(MetricSpec("samples_per_s", "samples/s", "samples/s")
                      .of_peak(PeakSpec::same_as("model_tflops_per_gpu")))
          .metric(MetricSpec("model_tflops_per_gpu", "model TFLOP/s per GPU", "TFLOP/s")
                      .of_peak(PeakSpec::tflops("dtype")));
}

PointResult point(std::size_t index, const std::string& workload, mgbench::Params params, int gpus,
                  Json metrics) {
  PointResult p;
  p.index = index;
  p.workload = workload;
  p.params = std::move(params);
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  p.metrics = std::move(metrics);
  return p;
}

Json gemm_params(const std::string& dtype, int size) {
  return Json{{"impl", "cublas"}, {"dtype", dtype}, {"timing", "host"}, {"cache", "cold"},
              {"m", size}, {"n", size}, {"k", size}, {"shape", "square"}};
}

// One point of each kind on an HGX H200.
RunResult h200_run() {
  RunResult run;
  run.environment = h200_env(2);
  add_presentations(run);
  run.points.push_back(point(0, "gemm", gemm_params("bf16", 4096), 1,
                             Json{{"tflops_per_gpu", 685.2}, {"tflops_aggregate", 685.2}}));
  run.points.push_back(point(1, "gemm", gemm_params("bf16", 4096), 2,
                             Json{{"tflops_per_gpu", 500.0}, {"tflops_aggregate", 1000.0}}));
  run.points.push_back(point(2, "membw", mgbench::Params{{"impl", "copy"}, {"bytes", 1073741824}},
                             1, Json{{"GBps_per_gpu", 3919.0}}));
  run.points.push_back(
      point(3, "h2d", mgbench::Params{{"direction", "h2d"}}, 1, Json{{"GBps_per_gpu", 55.0}}));
  run.points.push_back(
      point(4, "h2d", mgbench::Params{{"direction", "bidir"}}, 1, Json{{"GBps_per_gpu", 100.0}}));
  run.points.push_back(
      point(5, "allreduce", mgbench::Params{{"bytes", 1 << 28}}, 2, Json{{"busbw_GBps", 360.0}}));
  run.points.push_back(point(6, "train_step", mgbench::Params{{"dtype", "bf16"}}, 1,
                             Json{{"samples_per_s", 4000.0}, {"model_tflops_per_gpu", 312.8}}));
  return run;
}

double fraction(const mgbench::PeakReport& r, std::size_t point, const std::string& metric) {
  const mgbench::PeakShare* s = r.find(point, metric);
  REQUIRE(s != nullptr);
  return s->fraction();
}

}  // namespace

TEST_CASE("% of peak for each kind: TFLOP/s, HBM, host link, GPU link, MFU, aggregates",
          "[peaks]") {
  const mgbench::PeakReport r = mgbench::compute_peaks(h200_run());
  CHECK(r.gpu == "NVIDIA H200, 140 GiB");
  REQUIRE(r.gpu_model.is_object());
  CHECK(r.gpu_model["id"] == "H200 SXM 141GB");
  CHECK(fraction(r, 0, "tflops_per_gpu") == Approx(685.2 / 989.4));
  CHECK(fraction(r, 1, "tflops_aggregate") == Approx(500.0 / 989.4));  // 1000 of 2 x 989.4
  CHECK(r.find(1, "tflops_aggregate")->peak == Approx(2 * 989.4));
  CHECK(fraction(r, 2, "GBps_per_gpu") == Approx(3919.0 / 4800.0));  // the datasheet's 4.8 TB/s
  CHECK(fraction(r, 3, "GBps_per_gpu") == Approx(55.0 / 63.015).epsilon(1e-3));  // gen5 x16
  CHECK(fraction(r, 4, "GBps_per_gpu") == Approx(100.0 / 126.03).epsilon(1e-3));  // both ways
  CHECK(fraction(r, 5, "busbw_GBps") == Approx(360.0 / 450.0));  // 18 NVLink 4 links
  CHECK(fraction(r, 6, "model_tflops_per_gpu") == Approx(312.8 / 989.4));  // MFU
  CHECK(fraction(r, 6, "samples_per_s") == Approx(312.8 / 989.4));
  CHECK(contains(r.find(0, "tflops_per_gpu")->peak_what, "bf16 dense datasheet peak"));
  CHECK(mgbench::share_text(r.find(0, "tflops_per_gpu")) == "69 %");
  CHECK(mgbench::share_text(nullptr).empty());
}

TEST_CASE("no share for a point that is not ok, a flagged value, a missing dtype or a link "
          "the environment does not know",
          "[peaks]") {
  RunResult run = h200_run();
  run.points[0].status = mgbench::Status::failed;
  run.points[2].flags = {{"impossible", "GBps_per_gpu", ""}};
  run.points[6].params = mgbench::Params{{"dtype", "int4"}};
  run.environment["gpus"][0]["pcie"] = Json::object();
  const mgbench::PeakReport r = mgbench::compute_peaks(run);
  CHECK(r.find(0, "tflops_per_gpu") == nullptr);
  CHECK(r.find(2, "GBps_per_gpu") == nullptr);
  CHECK(r.find(6, "model_tflops_per_gpu") == nullptr);
  CHECK(r.find(6, "samples_per_s") == nullptr);  // its per-GPU metric has none
  CHECK(r.find(3, "GBps_per_gpu") == nullptr);
  CHECK(r.find(1, "tflops_per_gpu") != nullptr);
}

TEST_CASE("below the expected range: the verdict with the causes, at or above its low end: none",
          "[peaks]") {
  RunResult run = h200_run();
  const auto share = [&](double tflops) {
    run.points[0].metrics["tflops_per_gpu"] = tflops;
    return *mgbench::compute_peaks(run).find(0, "tflops_per_gpu");
  };
  const auto within = share(685.2);
  REQUIRE(within.has_range());
  CHECK(within.low == Approx(0.85 * 685.2));
  CHECK_FALSE(within.below);
  CHECK_FALSE(share(0.85 * 685.2).below);  // the low end itself is usual
  const auto below = share(0.85 * 685.2 - 0.5);
  CHECK(below.below);
  CHECK(below.causes.empty());  // nothing recorded explains it
  const std::string text = mgbench::below_text(below, "TFLOP/s");
  CHECK(contains(text, "below what this GPU model usually reaches"));
  CHECK(contains(text, "cuBLAS bf16 GEMM"));
  CHECK(contains(text, "H200 SXM 141GB"));
  CHECK(contains(text, "reports/examples/h200-1gpu"));
  CHECK(contains(text, "nothing in the telemetry"));
  CHECK(mgbench::below_text(within, "TFLOP/s").empty());
  // A point outside every range (the own kernel) has no verdict either way.
  run.points[0].params.set("impl", "mgbench");
  CHECK_FALSE(mgbench::compute_peaks(run).find(0, "tflops_per_gpu")->has_range());
}

TEST_CASE("the causes of a low value are only those the run recorded", "[peaks]") {
  RunResult run = h200_run();
  run.points[3].metrics["GBps_per_gpu"] = 30.0;  // far below the 55.5 GB/s of an H200 host
  run.points[3].params =
      mgbench::Params{{"direction", "h2d"}, {"memory", "pinned"}, {"numa", "local"},
                      {"timing", "device"}, {"cache", "cold"},    {"bytes", 1073741824}};
  run.environment["gpus"][0]["power_limit_w"]["enforced"] = 500.0;
  run.environment["gpus"][0]["pcie"]["gen_max"] = 4;  // the slot trained gen4
  run.points[3].telemetry = Json{{"gpus", Json::array({Json{
      {"device", 0}, {"throttle_reasons", Json::array({"sw_thermal"})},
      {"sm_clock_mhz", {{"max", 1980.0}}}}})}};
  const mgbench::PeakShare s = *mgbench::compute_peaks(run).find(3, "GBps_per_gpu");
  REQUIRE(s.below);
  std::string all;
  for (const auto& c : s.causes) all += c + "\n";
  CHECK(contains(all, "power limit 500 W, below the default 700 W"));
  CHECK(contains(all, "PCIe link gen4 x16, below the GPU's gen5 x16"));
  CHECK(contains(all, "thermal slowdown"));
  // With the doctor's checks recorded, its findings name the power limit and the link instead,
  // and other processes on the GPU count too.
  run.doctor = Json{{"checks", Json::array({
      Json{{"name", "power_limit"}, {"status", "warn"}, {"finding", "GPU 0 limited to 500 W"}},
      Json{{"name", "pcie_link"}, {"status", "pass"}, {"finding", "all at gen5"}},
      Json{{"name", "other_processes"}, {"status", "warn"}, {"finding", "pid 42 on GPU 0"}}})}};
  const auto causes = mgbench::compute_peaks(run).find(3, "GBps_per_gpu")->causes;
  all.clear();
  for (const auto& c : causes) all += c + "\n";
  CHECK(contains(all, "doctor: GPU 0 limited to 500 W"));
  CHECK(contains(all, "doctor: pid 42 on GPU 0"));
  CHECK_FALSE(contains(all, "power limit 500 W"));
  CHECK_FALSE(contains(all, "PCIe link gen4"));  // the doctor checked the link and passed it
  CHECK_FALSE(contains(all, "all at gen5"));
}

TEST_CASE("an unknown GPU model keeps the link and memory percentages, loses the others",
          "[peaks]") {
  RunResult run = h200_run();
  run.environment = h200_env(2, "NVIDIA Future GPU");
  const mgbench::PeakReport r = mgbench::compute_peaks(run);
  CHECK(r.gpu_model.is_null());
  CHECK(r.gpu == "NVIDIA Future GPU, 140 GiB");
  CHECK(r.find(0, "tflops_per_gpu") == nullptr);
  CHECK(r.find(6, "model_tflops_per_gpu") == nullptr);
  // HBM from bus width x clock: 6016 bits x 3201 MHz x 2 = 4815 GB/s.
  CHECK(fraction(r, 2, "GBps_per_gpu") == Approx(3919.0 / 4815.0).epsilon(1e-3));
  CHECK(fraction(r, 3, "GBps_per_gpu") == Approx(55.0 / 63.015).epsilon(1e-3));
  CHECK(fraction(r, 5, "busbw_GBps") == Approx(0.8));  // NVLink 4 by compute capability
  for (const auto& s : r.shares) CHECK_FALSE(s.has_range());
  run.peaks = r;
  const std::string note = mgbench::reports::gpu_model_note(run);
  CHECK(contains(note, "GPU model unknown (NVIDIA Future GPU, 140 GiB)"));
  // No environment at all: nothing, and nothing to say.
  run.environment = Json::object();
  run.peaks = mgbench::compute_peaks(run);
  CHECK(run.peaks.empty());
  CHECK(mgbench::reports::gpu_model_note(run).empty());
}

TEST_CASE("the shares round-trip through results.json and reach the report's tables and flags",
          "[peaks][reports]") {
  RunResult run = h200_run();
  run.points[0].metrics["tflops_per_gpu"] = 400.0;  // below the range
  run.points[0].metrics["tflops_aggregate"] = 400.0;
  run.peaks = mgbench::compute_peaks(run);
  const RunResult loaded = Json(run).get<RunResult>();
  REQUIRE(loaded.peaks.shares.size() == run.peaks.shares.size());
  CHECK(loaded.peaks.find(0, "tflops_per_gpu")->below);
  CHECK(loaded.peaks.find(0, "tflops_per_gpu")->low == Approx(0.85 * 685.2));
  CHECK(loaded.peaks.gpu_model["id"] == "H200 SXM 141GB");

  const auto summary = mgbench::reports::run_summary(loaded).tables;
  const auto gemm = std::find_if(summary.begin(), summary.end(),
                                 [](const auto& t) { return t.title == "gemm"; });
  REQUIRE(gemm != summary.end());
  CHECK(gemm->columns.at(2).header == "% of peak");
  CHECK(gemm->rows.at(0).at(2) == "51 %");  // the best aggregate: 1000 of 2 x 989.4
  const auto flags = mgbench::reports::run_flags(loaded);
  const auto below = std::find_if(flags.begin(), flags.end(), [](const auto& g) {
    return g.title == "Below what this GPU model usually reaches";
  });
  REQUIRE(below != flags.end());
  REQUIRE(below->lines.size() == 2);  // #0 at 400 and #1 at 500 TFLOP/s per GPU
  CHECK(contains(below->lines[0], "gemm #0"));
  CHECK(contains(below->lines[0], "400 TFLOP/s against 582.4 to 685.2 TFLOP/s"));
  CHECK(contains(below->lines[1], "gemm #1"));
  const std::string md = mgbench::reports::render_markdown_report(loaded, "charts");
  CHECK(contains(md, "% of peak against the H200 SXM 141GB datasheet row"));
}

TEST_CASE("point tables show % of peak after the first metric column that has a peak",
          "[peaks][reports]") {
  RunResult run = h200_run();
  run.presentation["gemm"].table(mgbench::TableSpec()
                                     .column(mgbench::ColumnSpec::gpus())
                                     .column(mgbench::ColumnSpec::metric("tflops_per_gpu", "TFLOP/s/GPU"))
                                     .column(mgbench::ColumnSpec::metric("tflops_aggregate", "TFLOP/s total")));
  run.peaks = mgbench::compute_peaks(run);
  const auto tables = mgbench::reports::workload_tables(run, "gemm");
  REQUIRE(!tables.empty());
  const auto& t = tables.front();
  REQUIRE(t.columns.size() == 4);
  CHECK(t.columns[1].header == "TFLOP/s/GPU");
  CHECK(t.columns[2].header == "% of peak");
  CHECK(t.columns[3].header == "TFLOP/s total");
  CHECK(t.rows.at(0).at(2) == "69 %");
  CHECK(t.rows.at(1).at(2) == "51 %");
  // Without shares (an unknown model) the column is dropped, not left empty.
  run.peaks = mgbench::PeakReport{};
  CHECK(mgbench::reports::workload_tables(run, "gemm").front().columns.size() == 3);
}

TEST_CASE("compare shows each side's % of peak beside the compared values", "[peaks][compare]") {
  RunResult base = h200_run();
  RunResult next = h200_run();
  next.points[0].metrics["tflops_per_gpu"] = 600.0;
  next.points[0].metrics["tflops_aggregate"] = 600.0;
  for (RunResult* r : {&base, &next}) {
    for (auto& p : r->points) {
      p.stats.n = 3;
      p.stats.median = 1e-3;
      p.samples = {1e-3, 1e-3, 1e-3};
    }
  }
  const mgbench::Comparison cmp = mgbench::compare_runs(base, next);
  const auto pc = std::find_if(cmp.points.begin(), cmp.points.end(), [](const auto& p) {
    return p.workload == "gemm" && p.gpus == 1;
  });
  REQUIRE(pc != cmp.points.end());
  REQUIRE(pc->base_of_peak);
  CHECK(*pc->base_of_peak == Approx(685.2 / 989.4));
  CHECK(*pc->new_of_peak == Approx(600.0 / 989.4));
  std::ostringstream out;
  mgbench::reports::render_comparison(out, cmp);
  CHECK(contains(out.str(), "(69 % of peak)"));
  CHECK(contains(out.str(), "(61 % of peak)"));
  const Json j = mgbench::comparison_to_json(cmp);
  bool found = false;
  for (const Json& p : j["points"]) found = found || (p["base_of_peak"].is_number());
  CHECK(found);
}
