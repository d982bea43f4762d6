#pragma once
// Pieces of the plain-words verdicts shared by verdict*.cpp: number words, the loss split and
// the straggler of a series' largest GPU count, the explanation sentences. Private to the
// analysis library.
#include <optional>
#include <string>
#include <vector>

#include "mgbench/analysis/verdict.hpp"
#include "mgbench/model/point_view.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench::verdict_detail {

// ---- words ----------------------------------------------------------------------------------

std::string fixed(double value, int decimals);
std::string percent(double fraction);  // "89 %" from 0.887
std::string number(double value);      // 23457, 812.3, 45.67, 0.0123
// "1.60 ms", "85 us", "1.20 s"; in the unit `scale` (seconds) would take when given, so that
// the times of one sentence share a unit ("1.79 ms against an ideal 0.63 ms").
std::string duration(double seconds, double scale = 0);
std::string gpus_text(int n);          // "1 GPU", "8 GPUs"
std::string join_words(const std::vector<std::string>& items);  // "a, b and c"
std::optional<double> metric(const PointResult* point, const char* name);
// The row with the most throughput (the first of equals); the series must have rows.
const ScalingRow& best_row(const ScalingSeries& series);
// A thermal or hardware-slowdown clock reason (a power cap alone is a GPU's normal state).
bool held_by_temperature(const GpuTelemetry& gpu);

// ---- what one series lost at its largest GPU count --------------------------------------------

// A series with the points behind its baseline row and its largest-N row.
struct SeriesPoints {
  const ScalingSeries& series;
  const PointResult* base = nullptr;
  const PointResult* last = nullptr;
  const Json& environment;
};

// The slowest rank of the largest-N point when its own work (compute without communication when
// every rank records it, else its median time) is more than kStragglerExcess above the typical
// (median) rank's; at least three ranks. The cause comes from the telemetry and the environment.
std::optional<Straggler> find_straggler(const SeriesPoints& sp);
// lost = T(N) - T_ideal split into parts (LossSplit); nullopt when nothing is lost or neither a
// step-time breakdown nor per-rank times exist.
std::optional<LossSplit> split_loss(const SeriesPoints& sp, const std::optional<Straggler>& s);
// The binding part as a kBinding* code ("" when the series scales well).
std::string binding_of(const SeriesPoints& sp, const RunVerdict& v);

// ---- sentences ------------------------------------------------------------------------------

// "Communication-bound: of the 1.60 ms lost per step at 8 GPUs (...), exposed communication is
// 100 % ..." plus, at a small per-GPU batch, how compute and the optimizer shrink.
std::string binding_text(const SeriesPoints& sp, const RunVerdict& v);
std::string straggler_text(const ScalingSeries& s, const Straggler& straggler);
std::string next_step_text(const SeriesPoints& sp, const RunVerdict& v);
// Why an efficiency above 105 % may be: the baseline slowed (from its telemetry and noise), or,
// with clean telemetry, the mode's usual cause.
std::string super_linear_cause(const SeriesPoints& sp);
// "At 2 GPUs the Karp-Flatt serial fraction is negative (-9.1 %): ..." ("" when none is).
std::string negative_serial_text(const ScalingSeries& s);
// The sibling series with the boolean "overlap" flipped, at the same largest GPU count.
std::string overlap_contrast(const ScalingSeries& s, const std::vector<ScalingSeries>& all);

}  // namespace mgbench::verdict_detail
