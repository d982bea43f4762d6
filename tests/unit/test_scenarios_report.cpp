// The report over the scenario library (tests/data/scenarios): the summary's batch in strong
// mode, a collective's verdict in the summary, a failed 1-GPU point's series, a GPU alone that
// is not the baseline, and the SM clock of the slowest GPU. Expected values by hand.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/sections.hpp"
#include "mgbench/reports/summary.hpp"
#include "mgbench/run/sweep.hpp"

using mgbench::RunResult;
using mgbench::reports::Table;

namespace {

RunResult analysed(const std::string& name) {
  RunResult run =
      mgbench::load_results(std::string(MGBENCH_SOURCE_DIR) + "/tests/data/scenarios/" + name +
                            ".json");
  mgbench::refresh_derived(run);
  return run;
}

const Table& table_of(const std::vector<Table>& tables, const std::string& title) {
  for (const Table& t : tables) {
    if (t.title == title) return t;
  }
  FAIL("no table " << title);
  throw std::logic_error("unreachable");
}

std::size_t column(const Table& t, const std::string& header) {
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].header == header) return i;
  }
  FAIL("no column " << header);
  throw std::logic_error("unreachable");
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("report scenario: in strong mode the summary shows the global batch",
          "[scenarios][reports]") {
  const RunResult run = analysed("nvlink-strong");
  const auto summary = mgbench::reports::run_summary(run);
  const Table& t = table_of(summary.tables, "train_step");
  REQUIRE(t.rows.size() == 1);
  // The best samples/s is the 8-GPU point: 256 per GPU of the global batch 2048.
  CHECK(t.rows[0].at(column(t, "at")) == "global batch 2048 (256 per GPU), 8 GPUs");
  CHECK(starts_with(t.rows[0].at(column(t, "verdict")),
                    "8 GPUs give 2.8x (35 %) at a fixed global batch of 2048 (256 per GPU)."));
}

TEST_CASE("report scenario: a collective's summary row carries its link verdict, not 'no 1-GPU "
          "point'", "[scenarios][reports]") {
  const RunResult run = analysed("hgx-nvlink");
  const auto summary = mgbench::reports::run_summary(run);
  const Table& t = table_of(summary.tables, "allreduce");
  REQUIRE(t.rows.size() == 1);
  CHECK(starts_with(t.rows[0].at(column(t, "verdict")),
                    "bus bandwidth (best over message sizes, GB/s) 2 GPUs 350.6"));
  for (const std::string& note : t.notes) {
    CHECK(note.find("without a 1-GPU point") == std::string::npos);
  }
}

TEST_CASE("report scenario: a failed 1-GPU point: the summary says there is no baseline",
          "[scenarios][reports]") {
  const RunResult run = analysed("failed-baseline");
  const auto summary = mgbench::reports::run_summary(run);
  const Table& t = table_of(summary.tables, "train_step");
  REQUIRE(t.rows.size() == 1);
  CHECK(starts_with(t.rows[0].at(column(t, "verdict")),
                    "no baseline: the 1-GPU point failed, so 2 GPUs are the baseline."));
  CHECK(t.rows[0].at(column(t, "scaling efficiency")) == "98 % at 8 GPUs");
}

TEST_CASE("report scenario: a GPU alone that is not the baseline shows no borrowed 1.00x, the "
          "SM clock names the slowest GPU", "[scenarios][reports]") {
  const RunResult run = analysed("gemm-straggler-gpu5");
  const auto tables = mgbench::reports::workload_tables(run, "gemm");
  REQUIRE_FALSE(tables.empty());
  const Table& t = tables.front();
  const std::size_t gpus = column(t, "GPUs"), devices = column(t, "devices");
  const std::size_t speedup = column(t, "speedup"), clock = column(t, "SM MHz");
  int alone = 0;
  for (const auto& row : t.rows) {
    if (row.at(gpus) == "1") {
      ++alone;
      // The baseline is the median GPU alone, GPU 3: only its row is 1.00x.
      CHECK(row.at(speedup) == (row.at(devices) == "3" ? "1.00x" : ""));
    }
    if (row.at(gpus) == "8") CHECK(row.at(clock) == "1550 (GPU 5: 1320)");
  }
  CHECK(alone == 8);
}

TEST_CASE("report scenario: in strong mode a series' rows run from 1 to 8 GPUs",
          "[scenarios][reports]") {
  // Per-GPU batches 2048, 1024, 512, 256 on 1, 2, 4, 8 GPUs: ordered by the per-GPU batch the
  // rows would run 8, 4, 2, 1 GPUs; by the global batch (one series) they run 1 to 8.
  const RunResult run = analysed("nvlink-strong");
  const auto tables = mgbench::reports::workload_tables(run, "train_step");
  const Table& t = table_of(tables, "train_step");
  REQUIRE(t.rows.size() == 4);
  const std::size_t gpus = column(t, "GPUs");
  CHECK(t.rows.front().at(gpus) == "1");
  CHECK(t.rows[1].at(gpus) == "2");
  CHECK(t.rows[2].at(gpus) == "4");
  CHECK(t.rows.back().at(gpus) == "8");
  // Weak mode keeps the parameters' order: the same file read as weak runs 8 GPUs first.
  RunResult weak = run;
  weak.settings["scaling"] = "weak";
  const auto weak_tables = mgbench::reports::workload_tables(weak, "train_step");
  const Table& w = table_of(weak_tables, "train_step");
  CHECK(w.rows.front().at(column(w, "GPUs")) == "8");
}
