// The options of a prediction's machine, shared by predict, report and compare (see
// predict_options.hpp).
#include "predict_options.hpp"

#include <string>

#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench {

namespace {

constexpr std::int64_t kMaxGpusPerNode = 1 << 16;

// --nvls: on, off, or auto (nullopt: as the results were measured).
std::optional<bool> parse_on_off_auto(const std::string& text) {
  if (text == "on") return true;
  if (text == "off") return false;
  if (text == "auto") return std::nullopt;
  throw UsageError("invalid --nvls '" + text + "': expected on, off or auto");
}

}  // namespace

std::optional<WorkCost> registry_cost(const PointResult& point) {
  const Workload* workload = find_workload(point.workload);
  if (workload == nullptr || !workload->cost_model()) return std::nullopt;
  return workload->cost_model()(point.params);
}

void add_machine_options(cxxopts::Options& options, const std::string& gpus_per_node_default) {
  // clang-format off
  options.add_options()
      ("gpus-per-node", "GPUs per node: a larger count runs on several nodes (default: " +
       gpus_per_node_default + ")", cxxopts::value<std::string>())
      ("intra", "the link between the GPUs of a node: nvlink3, nvlink4, nvlink5, pcie4, pcie5, "
       "or GB/s per GPU and direction (default: from the results)",
       cxxopts::value<std::string>())
      ("inter", "the link between nodes, per GPU: ib-hdr, ib-ndr, roce-400, eth-100, or Gb/s "
       "(default: ib-ndr, or calibrated on multi-node points of the results)",
       cxxopts::value<std::string>())
      ("nvls", "NVLink SHARP where the intra-node link has it: on, off, or auto (the default: "
       "as the results were measured, from their environment.nccl_nvls)",
       cxxopts::value<std::string>());
  // clang-format on
}

bool read_machine_options(const cxxopts::ParseResult& args, PredictOptions& o) {
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
  return args.count("gpus-per-node") + args.count("intra") + args.count("inter") +
             args.count("nvls") >
         0;
}

}  // namespace mgbench
