#pragma once
// The answer first: what a report opens with. One table per workload (its best figure, the
// scaling efficiency at the largest GPU count and the verdict, a row per configuration), then
// the flags a reader must know before trusting a number: throttling, noise, impossible values
// and doctor warnings. Built from the results model and each workload's presentation only.
#include <string>
#include <vector>

#include "mgbench/model/results.hpp"
#include "mgbench/reports/table.hpp"

namespace mgbench::reports {

// One table per workload, titled with the workload. A row per configuration: the values of the
// text and on/off parameters that vary between the workload's points ("bf16 · cublas");
// numeric parameters (sizes, batches) and GPU counts are folded into the row's best figure,
// which the "at" column locates. The figure is the headline metric, else the first declared
// metric with a positive value (busbw is 0 on one GPU); flagged (impossible) values never count
// as best. Rows measured on one GPU show "—" for efficiency and verdict, and one sentence says
// why: `note` when the whole run is on one GPU, else a note under each table concerned.
struct Summary {
  std::vector<Table> tables;
  std::string note;
};
Summary run_summary(const RunResult& run);

// One kind of flag and its lines (already in words, one per finding).
struct FlagGroup {
  std::string title;  // "Throttling", "Noise", "Impossible values", "Doctor warnings", ...
  std::vector<std::string> lines;
};
// The flags of the run, only groups that hold something.
std::vector<FlagGroup> run_flags(const RunResult& run);

}  // namespace mgbench::reports
