// `mgbench compare` over the scenario library (tests/data/scenarios): which part of a training
// step changed, one unit heading per compared quantity, the device of 1-GPU rows; the offer
// table's ties, per-device rows, GPU counts across nodes and no per-dollar for bus bandwidth.
// Expected values are written by hand from the scenarios' numbers.
#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/compare_render.hpp"

using mgbench::Json;
using mgbench::RunResult;

namespace {

const std::string kDir = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/scenarios/";

RunResult load(const std::string& name) { return mgbench::load_results(kDir + name + ".json"); }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const mgbench::OfferTable& table_of(const mgbench::OfferComparison& cmp, const std::string& w) {
  for (const auto& t : cmp.tables) {
    if (t.workload == w) return t;
  }
  FAIL("no table for " << w);
  throw std::logic_error("unreachable");
}

// The row of `gpus` GPUs (and `devices` for per-device 1-GPU rows).
const mgbench::OfferRow& row_of(const mgbench::OfferTable& t, int gpus,
                                std::vector<int> devices = {}) {
  for (const auto& r : t.rows) {
    if (r.gpus == gpus && r.devices == devices) {
      return r;
    }
  }
  FAIL("no row for " << gpus << " GPUs");
  throw std::logic_error("unreachable");
}

struct Offers {
  RunResult hgx = load("offer-hgx"), cloud = load("offer-cloud"), two = load("offer-two-nodes");
  std::vector<mgbench::Offer> list() const {
    return {{"hgx", "offer-hgx.json", &hgx, 2.50},
            {"cloud", "offer-cloud.json", &cloud, 2.00},
            {"two", "offer-two-nodes.json", &two, 1.50}};
  }
};

}  // namespace

TEST_CASE("compare scenario: the training step's change is in exposed communication",
          "[scenarios][compare]") {
  const RunResult base = load("compare-base"), next = load("compare-new");
  const mgbench::Comparison cmp = mgbench::compare_runs(base, next);
  const mgbench::PointComparison* step8 = nullptr;
  for (const auto& p : cmp.points) {
    if (p.workload == "train_step" && p.gpus == 8) step8 = &p;
  }
  REQUIRE(step8 != nullptr);
  CHECK(step8->verdict == mgbench::Verdict::slower);
  // Exposed communication 0.100 -> 0.600 ms; compute (the remainder: 2.534 - 0.313 - 0.766 -
  // exposed) 1.455 ms in both; copies 0.313 and the optimizer 0.766 ms unchanged. Step 2.634 ->
  // 3.134 ms: +0.50 ms, +19.0 %.
  CHECK(mgbench::parts_change_text(*step8) ==
        "step +0.50 ms (+19.0 %): host-to-device copy +0.00 ms, optimizer +0.00 ms, exposed "
        "communication +0.50 ms, compute +0.00 ms; most of the change is in exposed "
        "communication");
  std::ostringstream out;
  mgbench::reports::render_comparison(out, cmp);
  const std::string text = out.str();
  CHECK(contains(text, "most of the change is in exposed communication"));
  // The all-reduce: 1-GPU points compared on time, 8-GPU points on busbw, each under its own
  // heading (not one "median time per op" heading over a busbw table).
  CHECK(contains(text, "allreduce: median time per op (lower is better)\n"));
  CHECK(contains(text, "allreduce: busbw_GBps [GB/s] (higher is better)\n"));
  // GEMM on every GPU alone: the rows say which GPU.
  CHECK(contains(text, "1 (GPU 5)"));
  CHECK(contains(text, "1 (GPU 0)"));
}

TEST_CASE("offer scenario: offers within 3 % tie, no best is named", "[scenarios][offers]") {
  const Offers o;
  const auto cmp = mgbench::compare_offers(o.list());
  // GEMM on 8 GPUs: hgx 0.2060 ms, cloud 1 % slower (tie), two nodes 8 % slower (out).
  const auto& gemm8 = row_of(table_of(cmp, "gemm"), 8);
  CHECK(gemm8.best_throughput.tie());
  CHECK(gemm8.best_throughput.tied == std::vector<int>{0, 1});
  const Json json = mgbench::offers_to_json(cmp);
  bool found = false;
  for (const Json& t : json.at("tables")) {
    if (t.at("workload") != "gemm") continue;
    for (const Json& r : t.at("rows")) {
      if (r.at("gpus") != 8) continue;
      found = true;
      CHECK(r.at("best_throughput").is_null());
      CHECK(r.at("tie_throughput") == Json::array({"hgx", "cloud"}));
    }
  }
  CHECK(found);
  std::ostringstream out;
  mgbench::reports::render_offers(out, cmp);
  CHECK(contains(out.str(), "tie: hgx, cloud"));
}

TEST_CASE("offer scenario: every GPU alone keeps its row, the slow GPU 5 of one offer shows",
          "[scenarios][offers]") {
  const Offers o;
  const auto cmp = mgbench::compare_offers(o.list());
  const auto& gemm = table_of(cmp, "gemm");
  int per_device = 0;
  for (const auto& r : gemm.rows) per_device += r.gpus == 1 && r.devices.size() == 1 ? 1 : 0;
  CHECK(per_device == 8);
  // GPU 5: hgx 0.2360 ms (15 % slower), cloud 0.2005 x 1.01 ms: cloud is best, no tie.
  const auto& gpu5 = row_of(gemm, 1, {5});
  REQUIRE(gpu5.cells[0].throughput.has_value());
  REQUIRE(gpu5.cells[1].throughput.has_value());
  CHECK(*gpu5.cells[0].throughput < 0.86 * *gpu5.cells[1].throughput);
  CHECK(gpu5.best_throughput.offer == 1);
  CHECK_FALSE(gpu5.best_throughput.tie());
  CHECK_FALSE(gpu5.cells[2].present);  // the two-node offer measured GPU 0 alone only
  CHECK(row_of(gemm, 1, {0}).cells[2].present);
}

TEST_CASE("offer scenario: bus bandwidth gets no per-watt or per-dollar figure",
          "[scenarios][offers]") {
  const Offers o;
  const auto cmp = mgbench::compare_offers(o.list());
  const auto& ar = table_of(cmp, "allreduce");
  CHECK(ar.per_gpu_quantity);
  for (const auto& r : ar.rows) {
    for (const auto& c : r.cells) {
      CHECK_FALSE(c.per_watt.has_value());
      CHECK_FALSE(c.per_dollar.has_value());
    }
  }
  // GEMM's aggregate TFLOP/s adds across GPUs: per dollar = X / (price x GPUs).
  const auto& gemm = table_of(cmp, "gemm");
  CHECK_FALSE(gemm.per_gpu_quantity);
  const auto& cell = row_of(gemm, 8).cells[0];
  REQUIRE(cell.per_dollar.has_value());
  CHECK(*cell.per_dollar == Approx(*cell.throughput / (2.50 * 8)));
  std::ostringstream out;
  mgbench::reports::render_offers(out, cmp);
  CHECK(contains(out.str(), mgbench::reports::kPerGpuQuantityNote));
}

TEST_CASE("offer scenario: a two-node offer counts the GPUs of both nodes",
          "[scenarios][offers]") {
  const Offers o;
  const auto cmp = mgbench::compare_offers(o.list());
  REQUIRE(cmp.offers.size() == 3);
  CHECK(cmp.offers[0].gpu_count == 8);
  CHECK(cmp.offers[0].nodes == 1);
  CHECK(cmp.offers[2].gpu_count == 8);  // the submitting host lists 4
  CHECK(cmp.offers[2].nodes == 2);
  std::ostringstream out;
  mgbench::reports::render_offers(out, cmp);
  CHECK(contains(out.str(), "8 (2 nodes)"));
}
