#pragma once
// What `predict`, `report --predict` and `compare --predict-gpus` share: the workloads' own cost
// models from this build's registry, and the options that describe the machine a prediction is
// for (--gpus-per-node, --intra, --inter, --nvls), spelled and read in one place.
#include <optional>

#include <cxxopts.hpp>

#include "mgbench/analysis/prediction.hpp"

namespace mgbench {

// The workload's own cost model, from the registry of this build.
std::optional<WorkCost> registry_cost(const PointResult& point);

// Adds --gpus-per-node, --intra, --inter and --nvls; `gpus_per_node_default` says in the help
// what --gpus-per-node is without it.
void add_machine_options(cxxopts::Options& options, const std::string& gpus_per_node_default);

// Reads the options add_machine_options added into `o`; true when any was given.
bool read_machine_options(const cxxopts::ParseResult& args, PredictOptions& o);

}  // namespace mgbench
