// `mgbench predict RESULTS.json [--gpus 1,2,4,8,16,64] [--gpus-per-node 8] [--intra LINK]
// [--inter LINK] [--nvls on|off|auto] [--workload W,...] [--json]`: the time, throughput and scaling
// efficiency the points of a results file would have on other GPU counts, nodes and links
// (analysis/prediction.hpp, docs/METHODOLOGY.md "Prediction"). Parsing here; the model in the
// analysis layer; the table in reports/.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "mgbench/analysis/prediction.hpp"
#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/prediction_table.hpp"
#include "mgbench/run/plan.hpp"
#include "predict_options.hpp"

namespace mgbench {

namespace {

PredictOptions options_from(const cxxopts::ParseResult& args) {
  PredictOptions o;
  if (args.count("gpus")) o.gpu_counts = parse_gpu_counts(args["gpus"].as<std::string>(), -1);
  read_machine_options(args, o);
  if (args.count("workload")) {
    o.workloads = split_list(args["workload"].as<std::string>(), "--workload");
  }
  validate(o);
  return o;
}

}  // namespace

int cmd_predict(int argc, char** argv) {
  cxxopts::Options options(
      "mgbench predict",
      "The time, throughput and scaling efficiency of the points of a results file on other GPU "
      "counts, nodes and links, from what was measured and what the links are "
      "(docs/METHODOLOGY.md, \"Prediction\"). Where the file has a GPU count asked for, the "
      "measured point is shown beside the prediction.");
  options.positional_help("RESULTS.json");
  options.add_options()("gpus", "GPU counts to predict, e.g. 1,2,4,8,16,64 (the default)",
                         cxxopts::value<std::string>());
  add_machine_options(options, "8");
  // clang-format off
  options.add_options()
      ("workload", "only these workloads, e.g. train_step,allreduce", cxxopts::value<std::string>())
      ("json", "print the prediction as JSON")
      ("results", "results JSON file", cxxopts::value<std::vector<std::string>>())
      ("h,help", "show this help");
  // clang-format on
  options.parse_positional({"results"});
  const cxxopts::ParseResult args = parse_command_line(options, argc, argv);
  if (!args.count("results")) throw UsageError("missing RESULTS.json argument");
  const auto inputs = args["results"].as<std::vector<std::string>>();
  if (inputs.size() != 1) {
    throw UsageError("expected one results file, got " + std::to_string(inputs.size()));
  }
  const PredictOptions predict_options = options_from(args);
  if (parse_only()) return 0;

  const RunResult run = load_results(inputs.front());
  const Prediction prediction = predict(run, predict_options, registry_cost);
  if (args.count("json")) {
    std::cout << dump_json(Json(prediction), 2) << '\n';
  } else {
    reports::render_prediction(prediction, std::cout);
  }
  return 0;
}

}  // namespace mgbench
