#pragma once
// Pieces of `mgbench screen` shared by screen*.cpp: the figures of a launch's point, what a
// node's probe keeps. Private to the run library.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/run/screen.hpp"

namespace mgbench::screen_detail {

// The figures `p` (the point of `launch`) gives: one per GPU (its own time against the point's
// median), one per ordered GPU pair of the p2p matrix (grouped by the topology's path), or one
// for the launch (a node, a pair of nodes: a failed pair is a figure of 0 with its message, or
// every node). None for a point that did not finish otherwise.
std::vector<ScreenFigure> launch_figures(const ScreenLaunch& launch, const PointResult& p,
                                         const std::vector<ScreenNode>& nodes);

// What a node keeps for the evidence: its GPUs, topology and versions, and its doctor checks.
Json node_facts(const Json& environment, const Json& doctor);
// The first GPU's name ("" when unknown).
std::string gpu_model_of(const Json& environment);

}  // namespace mgbench::screen_detail
