#pragma once
// JSON has no NaN or infinity: a point carrying one is rejected where points are made.
#include "mgbench/model/results.hpp"

namespace mgbench {

// A point with a non-finite sample, statistic, rank timing or metric becomes `failed` with the
// reason; the non-finite values are dropped. Called by the worker before a point goes on the
// pipe and by the orchestrator for every point it records.
void reject_non_finite(PointResult& point);

}  // namespace mgbench
