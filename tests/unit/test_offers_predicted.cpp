// `compare --predict-gpus`: the offer table's predicted row per parameter set (analysis/offers.cpp)
// from each offer's prediction: its place after the measured rows, per dollar, best and ties as
// in the measured rows, and an offer without a prediction.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/analysis/prediction.hpp"
#include "mgbench/reports/compare_report.hpp"

using namespace mgbench;

namespace {

PointResult point(int size, int gpus, double tflops) {
  PointResult p;
  p.index = static_cast<std::size_t>(size + gpus);
  p.workload = "synthetic";
  p.params = mgbench::Params{{"size", size}};
  p.gpus = gpus;
  p.samples = {1e-3, 1e-3, 1e-3};
  p.stats.n = 3;
  p.stats.median = 1e-3;
  p.metrics = Json{{"tflops", tflops}};
  return p;
}

// Two parameter sets (size 1 and 2), each on 1 and 8 GPUs.
RunResult offer_run(double x1) {
  RunResult run;
  for (int size : {1, 2}) {
    run.points.push_back(point(size, 1, x1));
    run.points.push_back(point(size, 8, 8 * x1));
  }
  return run;
}

// A prediction of both parameter sets on `gpus` GPUs: throughput x(size) in TFLOP/s.
Prediction predicted(int gpus, double x_size1, double x_size2, const std::string& metric) {
  Prediction p;
  for (auto [size, x] : {std::pair<int, double>{1, x_size1}, {2, x_size2}}) {
    PredictedSeries s;
    s.workload = "synthetic";
    s.params = mgbench::Params{{"size", size}};
    s.metric = metric;
    PredictedRow r;
    r.gpus = gpus;
    r.time_s = 2e-3;
    r.throughput = x;
    r.efficiency = 0.9;
    s.rows.push_back(r);
    p.series.push_back(s);
  }
  return p;
}

CompareOptions tflops() {
  CompareOptions options;
  options.metrics["synthetic"] = "tflops";
  return options;
}

}  // namespace

TEST_CASE("offers --predict-gpus: a predicted row after each parameter set's measured rows",
          "[offers][predict]") {
  const RunResult a = offer_run(100), b = offer_run(100);
  const Prediction pa = predicted(16, 1000, 1500, "tflops");
  const Prediction pb = predicted(16, 1200, 1400, "tflops");
  const std::vector<Offer> offers = {{"a", "a.json", &a, 2.0}, {"b", "b.json", &b, 3.0}};
  const auto cmp = compare_offers(offers, tflops(), {{16, &pa, ""}, {16, &pb, ""}});
  REQUIRE(cmp.predicted_gpus == 16);
  CHECK(cmp.not_predicted.empty());
  REQUIRE(cmp.tables.size() == 1);
  const auto& rows = cmp.tables[0].rows;
  REQUIRE(rows.size() == 6);  // per size: 1, 8, 16 predicted
  CHECK_FALSE(rows[1].predicted);
  CHECK(rows[1].gpus == 8);
  REQUIRE(rows[2].predicted);  // first set
  CHECK(rows[2].gpus == 16);
  CHECK(rows[2].params == mgbench::Params{{"size", 1}});
  CHECK(*rows[2].cells[0].throughput == Approx(1000));
  CHECK(*rows[2].cells[0].per_dollar == Approx(1000 / (2.0 * 16)));
  CHECK(*rows[2].cells[1].per_dollar == Approx(1200 / (3.0 * 16)));
  CHECK(*rows[2].cells[0].efficiency == Approx(0.9));
  CHECK_FALSE(rows[2].cells[0].per_watt);
  CHECK(rows[2].best_throughput.offer == 1);
  CHECK(rows[2].best_per_dollar.offer == 0);  // 31.25 against 25 per $/h
  CHECK_FALSE(rows[3].predicted);
  REQUIRE(rows[5].predicted);  // last set
  CHECK(rows[5].params == mgbench::Params{{"size", 2}});
  CHECK(*rows[5].cells[1].throughput == Approx(1400));
  CHECK(rows[5].best_throughput.offer == 0);
  CHECK_FALSE(rows[5].best_throughput.tie());
}

TEST_CASE("offers --predict-gpus: predictions within the threshold tie, as measured ones do",
          "[offers][predict]") {
  const RunResult a = offer_run(100), b = offer_run(100);
  // Size 1: 1000 against 1025 (2.4 % apart): a tie. Size 2: 1000 against 1035 (3.4 %): b.
  const Prediction pa = predicted(16, 1000, 1000, "tflops");
  const Prediction pb = predicted(16, 1025, 1035, "tflops");
  const std::vector<Offer> offers = {{"a", "a.json", &a, std::nullopt},
                                     {"b", "b.json", &b, std::nullopt}};
  const auto cmp = compare_offers(offers, tflops(), {{16, &pa, ""}, {16, &pb, ""}});
  const auto& rows = cmp.tables[0].rows;
  REQUIRE(rows[2].predicted);
  CHECK(rows[2].best_throughput.tie());
  CHECK(rows[2].best_throughput.tied == std::vector<int>{1, 0});
  CHECK_FALSE(rows[2].cells[0].per_dollar);  // no price
  REQUIRE(rows[5].predicted);
  CHECK_FALSE(rows[5].best_throughput.tie());
  CHECK(rows[5].best_throughput.offer == 1);
}

TEST_CASE("offers --predict-gpus: an offer without a prediction is n/a and says why",
          "[offers][predict]") {
  const RunResult a = offer_run(100), b = offer_run(100), c = offer_run(100);
  const Prediction pa = predicted(16, 1000, 1000, "tflops");
  const Prediction pc = predicted(16, 1000, 1000, "other_metric");
  const std::vector<Offer> offers = {{"a", "a.json", &a, 2.0},
                                     {"b", "b.json", &b, 2.0},
                                     {"c", "c.json", &c, 2.0}};
  const auto cmp = compare_offers(
      offers, tflops(), {{16, &pa, ""}, {16, nullptr, "no link"}, {16, &pc, ""}});
  REQUIRE(cmp.not_predicted == std::vector<std::string>{"b: no link"});
  const auto& row = cmp.tables[0].rows[2];
  REQUIRE(row.predicted);
  CHECK(row.cells[0].present);
  CHECK_FALSE(row.cells[1].present);  // n/a
  CHECK(row.cells[2].present);        // predicted, but in another metric than the table's
  CHECK_FALSE(row.cells[2].throughput);
  CHECK(row.best_throughput.offer == -1);  // one value only: no best
  // Without predictions: the measured rows alone.
  CHECK(compare_offers(offers, tflops()).tables[0].rows.size() == 4);
}

TEST_CASE("offers --predict-gpus: the report's efficiency chart draws measured rows only",
          "[offers][predict]") {
  const RunResult a = offer_run(100), b = offer_run(90);
  // Predicted at a measured count (8), with an efficiency no measured row has (12.5 %).
  Prediction pa = predicted(8, 100, 100, "tflops"), pb = predicted(8, 100, 100, "tflops");
  for (auto* p : {&pa, &pb}) {
    for (auto& s : p->series) s.rows[0].efficiency = 0.125;
  }
  const std::vector<Offer> offers = {{"a", "a.json", &a, 2.0}, {"b", "b.json", &b, 2.0}};
  const auto with = compare_offers(offers, tflops(), {{8, &pa, ""}, {8, &pb, ""}});
  const auto without = compare_offers(offers, tflops());
  REQUIRE(with.tables[0].rows[2].predicted);
  const auto chart = [&](const OfferComparison& cmp) {
    const std::string html =
        reports::render_compare_html(reports::CompareReportInput(cmp, {&a, &b}, {"a", "b"}));
    const auto at = html.find("synthetic: scaling efficiency");
    REQUIRE(at != std::string::npos);
    return html.substr(at, html.find("</svg>", at) - at);
  };
  CHECK(chart(with) == chart(without));
}
