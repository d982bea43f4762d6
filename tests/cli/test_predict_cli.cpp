// `mgbench predict` through the real binary on the committed H200 results: the table, --json,
// and the measured 1-GPU point beside its prediction. Bad options: tests/cli/test_bad_input.cpp.
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "catch_compat.hpp"
#include "support.hpp"

using mgbench::test::run_mgbench;

namespace {

const std::string kH200 =
    std::string(MGBENCH_SOURCE_DIR) + "/reports/examples/h200-1gpu/results.json";

}  // namespace

TEST_CASE("predict prints the links, a table per point and the one-GPU compute check") {
  const auto r = run_mgbench("predict " + kH200 + " --workload train_step,gemm --gpus 1,8,16");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("intra-node: pcie5") != std::string::npos);  // from the results
  CHECK(r.out.find("inter-node: ib-ndr") != std::string::npos);
  CHECK(r.out.find("train_step") != std::string::npos);
  CHECK(r.out.find("measured / predicted") != std::string::npos);
  CHECK(r.out.find("One GPU: compute composed") != std::string::npos);
  CHECK(r.out.find("allreduce") == std::string::npos);  // not asked for
}

TEST_CASE("predict --json: series with rows per GPU count, the measured point, the check") {
  const auto r = run_mgbench("predict " + kH200 +
                             " --workload train_step --gpus 1,8,16 --intra nvlink4 --inter 200 "
                             "--nvls on --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["intra"]["name"] == "nvlink4");
  CHECK(j["intra"]["origin"] == "declared");
  CHECK(j["inter"]["bandwidth_GBps"].get<double>() == Approx(25.0));
  CHECK(j["nvls"] == true);
  REQUIRE(j["series"].size() == 1);
  const auto& rows = j["series"][0]["rows"];
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["gpus"] == 1);
  CHECK(rows[0]["measured"]["ratio"].get<double>() == Approx(1.0));
  CHECK(rows[1]["measured"].is_null());
  CHECK(rows[2]["nodes"] == 2);
  CHECK(rows[2]["efficiency"].get<double>() < rows[1]["efficiency"].get<double>());
  REQUIRE(j["compute_checks"].size() == 1);
  CHECK(std::fabs(j["compute_checks"][0]["error"].get<double>()) <= 0.10);
}
