// The offer comparison: per-watt and per-dollar math, efficiency, best offer per row, and the
// fingerprint summary of each offer.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/model/results.hpp"

namespace {

using mgbench::Json;
using mgbench::PointResult;
using mgbench::RunResult;

PointResult tp_point(int gpus, double throughput, Json telemetry = nullptr) {
  PointResult p;
  p.index = static_cast<std::size_t>(gpus);
  p.workload = "synthetic";
  p.params = mgbench::Params{{"size", 8192}};
  p.gpus = gpus;
  p.samples = {1e-3, 1e-3, 1e-3};
  p.stats.n = 3;
  p.stats.median = 1e-3;
  p.metrics = Json{{"tflops", throughput}};
  p.telemetry = std::move(telemetry);
  return p;
}

// 1, 2 and 8 GPUs with the given 1-GPU throughput and per-GPU scaling factor.
RunResult offer_run(double x1, double eff8) {
  RunResult run;
  run.host = "host";
  run.points.push_back(tp_point(1, x1));
  run.points.push_back(tp_point(8, x1 * 8 * eff8));
  return run;
}

mgbench::CompareOptions tflops() {
  mgbench::CompareOptions options;
  options.metrics["synthetic"] = "tflops";
  return options;
}

const mgbench::OfferRow& row_for(const mgbench::OfferComparison& cmp, int gpus) {
  REQUIRE(cmp.tables.size() == 1);
  for (const auto& row : cmp.tables[0].rows) {
    if (row.gpus == gpus) return row;
  }
  FAIL("no row for " << gpus << " GPUs");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("offers: throughput per dollar is throughput / (price per GPU-hour x GPUs)", "[offers]") {
  const RunResult a = offer_run(100, 1.0);  // 8 GPUs: 800 TFLOP/s
  const std::vector<mgbench::Offer> offers = {{"a", "a.json", &a, 2.5}};
  const auto cmp = mgbench::compare_offers(offers, tflops());
  const auto& cell = row_for(cmp, 8).cells[0];
  REQUIRE(cell.per_dollar.has_value());
  CHECK(*cell.per_dollar == Approx(800.0 / (2.5 * 8)));
  CHECK(*row_for(cmp, 1).cells[0].per_dollar == Approx(100.0 / 2.5));
}

TEST_CASE("offers: no price, no per-dollar figure", "[offers]") {
  const RunResult a = offer_run(100, 1.0);
  const auto cmp = mgbench::compare_offers({{"a", "a.json", &a, std::nullopt}}, tflops());
  CHECK_FALSE(row_for(cmp, 8).cells[0].per_dollar.has_value());
}

TEST_CASE("offers: per watt from the sum of the GPUs' average power", "[offers]") {
  RunResult a;
  a.points.push_back(tp_point(
      2, 700,
      Json{{"gpus", Json::array({Json{{"avg_power_w", 300.0}}, Json{{"avg_power_w", 400.0}}})}}));
  const auto cmp = mgbench::compare_offers({{"a", "a.json", &a, std::nullopt}}, tflops());
  REQUIRE(row_for(cmp, 2).cells[0].per_watt.has_value());
  CHECK(*row_for(cmp, 2).cells[0].per_watt == Approx(1.0));
}

TEST_CASE("offers: per watt prefers the point's <metric>_per_watt", "[offers]") {
  RunResult a;
  a.points.push_back(tp_point(1, 700, Json{{"gpus", Json::array({Json{{"avg_power_w", 700.0}}})}}));
  a.points[0].metrics["tflops_per_watt"] = 1.25;
  const auto cmp = mgbench::compare_offers({{"a", "a.json", &a, std::nullopt}}, tflops());
  CHECK(*row_for(cmp, 1).cells[0].per_watt == Approx(1.25));
}

TEST_CASE("offers: efficiency is X(N) / (N X(1)) without scaling rows", "[offers]") {
  const RunResult a = offer_run(100, 0.9);
  const auto cmp = mgbench::compare_offers({{"a", "a.json", &a, std::nullopt}}, tflops());
  REQUIRE(row_for(cmp, 8).cells[0].efficiency.has_value());
  CHECK(*row_for(cmp, 8).cells[0].efficiency == Approx(0.9));
}

TEST_CASE("offers: the best offer per row, by throughput and per dollar", "[offers]") {
  const RunResult a = offer_run(100, 1.0), b = offer_run(90, 1.0), c = offer_run(110, 0.8);
  const std::vector<mgbench::Offer> offers = {
      {"a", "a.json", &a, 2.49}, {"b", "b.json", &b, 1.80}, {"c", "c.json", &c, 3.10}};
  const auto cmp = mgbench::compare_offers(offers, tflops());
  const auto& one = row_for(cmp, 1);
  CHECK(one.best_throughput.offer == 2);  // c: 110
  CHECK(one.best_per_dollar.offer == 1);  // b: 90 / 1.80 = 50 per $/h
  const auto& eight = row_for(cmp, 8);
  CHECK(eight.best_throughput.offer == 0);  // a: 800 > b: 720 > c: 704
  const auto json = mgbench::offers_to_json(cmp);
  CHECK(json.at("tables").at(0).at("rows").at(0).at("best_per_dollar") == "b");
}

TEST_CASE("offers: a point missing from an offer is a cell without values", "[offers]") {
  RunResult a = offer_run(100, 1.0), b;
  b.points.push_back(tp_point(1, 90));
  const auto cmp = mgbench::compare_offers({{"a", "a", &a, 1.0}, {"b", "b", &b, 1.0}}, tflops());
  const auto& eight = row_for(cmp, 8);
  CHECK_FALSE(eight.cells[1].present);
  CHECK(eight.best_throughput.offer == -1);  // one offer only: no "best"
}

TEST_CASE("offers: a failed point shows its status and no figure", "[offers]") {
  RunResult a = offer_run(100, 1.0);
  a.points[1].status = mgbench::Status::oom;
  const auto cmp = mgbench::compare_offers({{"a", "a", &a, 1.0}}, tflops());
  const auto& cell = row_for(cmp, 8).cells[0];
  CHECK(cell.present);
  CHECK(cell.status == mgbench::Status::oom);
  CHECK_FALSE(cell.throughput.has_value());
}

TEST_CASE("offers: fingerprint summary of an NVLink VM", "[offers]") {
  RunResult run;
  run.host = "cloud-a";
  Json gpu = {{"name", "NVIDIA H200"},
              {"nvlink", {{"links_total", 18}, {"links_up", 18}}},
              {"pcie", {{"gen_max", 5}, {"width_max", 16}}}};
  run.environment = {
      {"versions", {{"driver", "580.65.06"}, {"cuda_driver", "13.0"}, {"nccl_loaded", "2.28.9"}}},
      {"gpus", Json::array({gpu, gpu, gpu, gpu})},
      {"host", {{"hypervisor_flag", true}, {"virtualization", "Amazon EC2"}}}};
  const auto s = mgbench::summarize_offer({"a", "a.json", &run, std::nullopt});
  CHECK(s.gpu_model == "NVIDIA H200");
  CHECK(s.gpu_count == 4);
  CHECK(s.interconnect == "NVLink (18 links/GPU)");
  CHECK(s.driver == "580.65.06");
  CHECK(s.cuda == "13.0");
  CHECK(s.nccl == "2.28.9");
  CHECK(s.platform == "VM (Amazon EC2)");
}

TEST_CASE("offers: fingerprint summary of a PCIe bare-metal box", "[offers]") {
  RunResult run;
  Json gpu = {{"name", "NVIDIA H200 NVL"},
              {"nvlink", {{"links_total", 18}, {"links_up", 0}}},
              {"pcie", {{"gen_max", 5}, {"width_max", 16}}}};
  run.environment = {{"gpus", Json::array({gpu, gpu})},
                     {"host", {{"hypervisor_flag", false}, {"virtualization", nullptr}}}};
  const auto s = mgbench::summarize_offer({"b", "b.json", &run, std::nullopt});
  CHECK(s.interconnect == "PCIe Gen5 x16");
  CHECK(s.platform == "bare metal");
  CHECK(s.gpu_count == 2);
}
