#pragma once
// Bounds on what mgbench reads from results files, journals and worker lines. The files come
// from other machines and CI jobs render uploaded ones: a crafted file must fail with one line
// (exit 2) instead of exhausting the stack, memory or time. Real runs stay far below them.
#include <cstddef>

#include "mgbench/core/json_text.hpp"

namespace mgbench::limits {

// A results document: size, depth and string length before parsing.
inline constexpr JsonLimits kResultsFile{std::size_t{64} << 20, 64, std::size_t{1} << 20};
// One worker-protocol or journal line (a point with its samples and telemetry summary).
inline constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;
inline constexpr JsonLimits kLine{kMaxLineBytes, 64, std::size_t{1} << 20};
// Points in one run.
inline constexpr std::size_t kMaxPoints = 20000;
// Distinct parameter names and metric names of one workload across a run: reports make a
// column of each, so P points x K names bounds every table.
inline constexpr std::size_t kMaxParamNames = 64;
inline constexpr std::size_t kMaxMetricNames = 256;
// Entries of each list of a stored presentation (metrics, axes, tables, charts, summaries, and
// each table's columns).
inline constexpr std::size_t kMaxPresentationItems = 64;

}  // namespace mgbench::limits
