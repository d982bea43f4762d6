// The prediction where results are read: `report --predict` (the predicted efficiency, dashed, on
// the efficiency chart) and `compare --offers --predict-gpus N` (a predicted row per parameter
// set), through the real binary on the scenario library, each checked against `mgbench predict`
// on the same file. Bad values: tests/cli/test_bad_input.cpp.
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "catch_compat.hpp"
#include "support.hpp"

using mgbench::test::run_mgbench;
using Json = nlohmann::json;

namespace {

std::string scenario(const std::string& name) {
  return std::string(MGBENCH_SOURCE_DIR) + "/tests/data/scenarios/" + name + ".json";
}

// `mgbench predict FILE ARGS --json`.
Json predict_json(const std::string& file, const std::string& args) {
  const auto r = run_mgbench("predict " + file + " " + args + " --json");
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

const Json& predicted_row(const Json& table) {
  for (const Json& row : table.at("rows")) {
    if (row.value("predicted", false)) return row;
  }
  FAIL("no predicted row in " << table.at("workload"));
  throw std::logic_error("unreachable");
}

// The row of predict's series of `workload` with `params` (its only GPU count asked for).
const Json& predict_row(const Json& prediction, const std::string& workload, const Json& params) {
  for (const Json& s : prediction.at("series")) {
    if (s.at("workload") == workload && s.at("params") == params) return s.at("rows").at(0);
  }
  FAIL("predict has no series of " << workload << " " << params.dump());
  throw std::logic_error("unreachable");
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", fraction * 100.0);
  return text;
}

}  // namespace

TEST_CASE("compare --offers --predict-gpus: each offer's row is predict's, per dollar with --price",
          "[cli][compare][predict]") {
  const auto r = run_mgbench("compare " + scenario("offer-hgx") + " " + scenario("offer-cloud") +
                             " " + scenario("offer-two-nodes") +
                             " --predict-gpus 16 --price offer-hgx=2.5 --price offer-two-nodes=3 "
                             "--json");
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j.at("predicted_gpus") == 16);
  CHECK(j.at("not_predicted").empty());
  // The offer of 2 nodes x 4 GPUs is predicted on 4 nodes of its own size.
  const Json p = predict_json(scenario("offer-two-nodes"), "--gpus 16 --gpus-per-node 4");
  REQUIRE(j.at("tables").size() == 2);
  const Json& allreduce = j.at("tables").front();  // first table: its first parameter set
  REQUIRE(allreduce.at("workload") == "allreduce");
  const Json& first = predicted_row(allreduce);
  CHECK(first.at("gpus") == 16);
  CHECK(first.at("params").at("bytes") == 1048576);
  CHECK(first.at("cells").at(2).at("throughput").get<double>() ==
        Approx(predict_row(p, "allreduce", first.at("params")).at("throughput").get<double>()));
  CHECK(first.at("cells").at(2).at("per_dollar").is_null());  // bus bandwidth: per GPU
  const Json& gemm = j.at("tables").back();  // last table
  REQUIRE(gemm.at("workload") == "gemm");
  const Json& last = predicted_row(gemm);
  const Json& gemm_row = predict_row(p, "gemm", last.at("params"));
  const double x = last.at("cells").at(2).at("throughput").get<double>();
  CHECK(x == Approx(gemm_row.at("throughput").get<double>()));
  CHECK(last.at("cells").at(2).at("per_dollar").get<double>() == Approx(x / (3.0 * 16)));
  CHECK(last.at("cells").at(1).at("per_dollar").is_null());  // offer-cloud has no price
  // The best of the two prices, more than the 3 % threshold ahead, as in a measured row.
  CHECK(last.at("cells").at(0).at("per_dollar").get<double>() > 1.03 * x / (3.0 * 16));
  CHECK(last.at("best_per_dollar") == "offer-hgx");
}

TEST_CASE("report --predict: the dashed 'predicted' series holds predict's efficiencies",
          "[cli][report][predict]") {
  const std::string dir = mgbench::test::temp_dir("report-predict");
  const auto with = run_mgbench("report " + scenario("hgx-nvlink") + " --predict -o " + dir +
                                "/p.html");
  REQUIRE(with.exit_code == 0);
  const std::string html = mgbench::test::read_text(dir + "/p.html");
  CHECK(html.find("data-name=\"weak (predicted)\"") != std::string::npos);
  const Json p = predict_json(scenario("hgx-nvlink"), "--gpus 1,2,4,8,16 --workload train_step");
  const Json& rows = p.at("series").at(0).at("rows");
  CHECK(html.find("weak (predicted): 1 GPU, " + percent(rows.front().at("efficiency"))) !=
        std::string::npos);
  CHECK(html.find("weak (predicted): 16 GPUs, " + percent(rows.back().at("efficiency"))) !=
        std::string::npos);
  const auto without = run_mgbench("report " + scenario("hgx-nvlink") + " -o " + dir + "/n.html");
  REQUIRE(without.exit_code == 0);
  CHECK(mgbench::test::read_text(dir + "/n.html").find("predicted") == std::string::npos);
  std::filesystem::remove_all(dir);
}
