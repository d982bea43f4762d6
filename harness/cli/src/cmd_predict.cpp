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
#include "mgbench/model/workload.hpp"
#include "mgbench/reports/prediction_table.hpp"
#include "mgbench/run/plan.hpp"

namespace mgbench {

namespace {

constexpr std::int64_t kMaxGpusPerNode = 1 << 16;

// The workload's own cost model, from the registry of this build.
std::optional<WorkCost> registry_cost(const PointResult& point) {
  const Workload* workload = find_workload(point.workload);
  if (workload == nullptr || !workload->cost_model()) return std::nullopt;
  return workload->cost_model()(point.params);
}

// --nvls: on, off, or auto (nullopt: as the results were measured).
std::optional<bool> parse_on_off_auto(const std::string& text) {
  if (text == "on") return true;
  if (text == "off") return false;
  if (text == "auto") return std::nullopt;
  throw UsageError("invalid --nvls '" + text + "': expected on, off or auto");
}

PredictOptions options_from(const cxxopts::ParseResult& args) {
  PredictOptions o;
  if (args.count("gpus")) o.gpu_counts = parse_gpu_counts(args["gpus"].as<std::string>(), -1);
  if (args.count("gpus-per-node")) {
    const std::int64_t g =
        parse_positive_int(args["gpus-per-node"].as<std::string>(), "--gpus-per-node");
    if (g > kMaxGpusPerNode) {
      throw UsageError("invalid --gpus-per-node: at most " + std::to_string(kMaxGpusPerNode));
    }
    o.gpus_per_node = static_cast<int>(g);
  }
  if (args.count("intra")) {
    o.intra = parse_link(args["intra"].as<std::string>(), LinkScope::intra_node, "--intra");
  }
  if (args.count("inter")) {
    o.inter = parse_link(args["inter"].as<std::string>(), LinkScope::inter_node, "--inter");
  }
  if (args.count("nvls")) o.nvls = parse_on_off_auto(args["nvls"].as<std::string>());
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
  // clang-format off
  options.add_options()
      ("gpus", "GPU counts to predict, e.g. 1,2,4,8,16,64 (the default)",
       cxxopts::value<std::string>())
      ("gpus-per-node", "GPUs per node: a larger count runs on several nodes (default 8)",
       cxxopts::value<std::string>())
      ("intra", "the link between the GPUs of a node: nvlink3, nvlink4, nvlink5, pcie4, pcie5, "
       "or GB/s per GPU and direction (default: from the results)",
       cxxopts::value<std::string>())
      ("inter", "the link between nodes, per GPU: ib-hdr, ib-ndr, roce-400, eth-100, or Gb/s "
       "(default: ib-ndr, or calibrated on multi-node points of the results)",
       cxxopts::value<std::string>())
      ("nvls", "NVLink SHARP where the intra-node link has it: on, off, or auto (the default: "
       "as the results were measured, from their environment.nccl_nvls)",
       cxxopts::value<std::string>())
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
