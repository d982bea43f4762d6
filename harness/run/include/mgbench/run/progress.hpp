#pragma once
// The sweep's progress: which point of how many, the time left and the last headline figure.
// On a terminal one line is rewritten in place as each point starts; otherwise (a log file, a CI
// job) one plain line is written as each point finishes.
#include <cstddef>
#include <string>

#include "mgbench/model/results.hpp"

namespace mgbench {

struct ProgressState {
  std::size_t position = 0;  // 1-based: the point starting (terminal) or just finished (plain)
  std::size_t total = 0;
  std::string what;          // e.g. "gemm x2 dtype=bf16 m=8192"
  double eta_s = -1;         // time left; < 0 when unknown
  std::string last_figure;   // the last finished point's headline, e.g. "612.3 TFLOP/s"
};

// Time left at the rate so far: `done` points took `elapsed_s` and `left` remain. Before any
// point finished: `estimate_s` (the plan's estimate of what is left).
double progress_eta_s(double elapsed_s, std::size_t done, std::size_t left, double estimate_s);
// The point's headline figure with its unit (its workload's throughput metric), e.g.
// "612.3 TFLOP/s"; its status instead when it did not finish ok; empty when it has neither.
std::string headline_figure(const PointResult& point);
// "45 s", "12 min", "1 h 05 min".
std::string format_duration(double seconds);
// One line, no line end: "[3/12] gemm x2 dtype=bf16  ETA 40 s  last 612.3 TFLOP/s".
std::string progress_line(const ProgressState& state);

}  // namespace mgbench
