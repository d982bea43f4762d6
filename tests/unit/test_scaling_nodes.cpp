// Scaling across nodes: the efficiency splits into an intra-node part (1 -> G GPUs on one node)
// and an inter-node part (1 node -> N nodes), and the verdict names the part that loses more.
// Points are placed as the planner places them: 1, 2, 4, 8 GPUs on one node, 16 and 32 GPUs on
// 2 and 4 nodes of 8.
#include <optional>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/scaling.hpp"
#include "mgbench/analysis/verdict.hpp"

using namespace mgbench;

namespace {

std::optional<ThroughputMetric> lookup(const std::string& workload) {
  if (workload == "allreduce") return ThroughputMetric{"busbw_gbps", "GB/s"};
  if (workload == "train") return ThroughputMetric{"samples_per_s", "samples/s"};
  return std::nullopt;
}

PointResult placed(std::size_t index, const std::string& workload, int gpus, double x,
                   int gpus_per_node = 8) {
  PointResult p;
  p.index = index;
  p.workload = workload;
  p.params = mgbench::Params{{"bytes", 1 << 30}};
  p.gpus = gpus;
  p.status = Status::ok;
  p.stats.median = 0.01;
  p.stats.n = 10;
  p.metrics[lookup(workload)->name] = x;
  const int nodes = gpus > gpus_per_node ? gpus / gpus_per_node : 1;
  p.placement.nodes = nodes;
  p.placement.gpus_per_node = gpus / nodes;
  p.placement.process_model = ProcessModel::processes;
  p.placement.launcher = Launcher::srun;
  for (int n = 0; n < nodes; ++n) p.placement.hosts.push_back("node" + std::to_string(n));
  for (int d = 0; d < gpus / nodes; ++d) p.devices.push_back(d);
  return p;
}

// Per-GPU throughput 100 on 1 GPU; `intra` at 8 GPUs; `inter` of that per node at 32 GPUs.
std::vector<PointResult> table(const std::string& workload, double intra, double inter) {
  const double node = 8 * 100.0 * intra;
  return {placed(0, workload, 1, 100.0),         placed(1, workload, 2, 2 * 100.0 * 0.99),
          placed(2, workload, 4, 4 * 100.0 * 0.98), placed(3, workload, 8, node),
          placed(4, workload, 16, 2 * node * (1 + inter) / 2),
          placed(5, workload, 32, 4 * node * inter)};
}

ScalingSeries only_series(const std::vector<PointResult>& points) {
  const auto series = compute_scaling(points, ScalingMode::weak, lookup);
  REQUIRE(series.size() == 1);
  return series[0];
}

RunVerdict only_verdict(const std::vector<PointResult>& points) {
  const auto series = compute_scaling(points, ScalingMode::weak, lookup);
  const auto verdicts = compute_verdicts(series, points, {});
  REQUIRE(verdicts.size() == 1);
  return verdicts[0];
}

}  // namespace

TEST_CASE("rows carry their node count, the split multiplies back to the total efficiency") {
  const ScalingSeries s = only_series(table("allreduce", 0.9, 0.7));
  REQUIRE(s.rows.size() == 6);
  CHECK(s.rows[3].nodes == 1);
  CHECK(s.rows[4].nodes == 2);
  CHECK(s.rows[5].nodes == 4);
  REQUIRE(s.node_split.has_value());
  CHECK(s.node_split->gpus_per_node == 8);
  CHECK(s.node_split->nodes == 4);
  CHECK(s.node_split->intra_efficiency == Approx(0.9));
  CHECK(s.node_split->inter_efficiency == Approx(0.7));
  CHECK(s.node_split->intra_efficiency * s.node_split->inter_efficiency ==
        Approx(s.rows[5].efficiency));
}

TEST_CASE("the verdict names the inter-node part when the network loses more") {
  const RunVerdict v = only_verdict(table("allreduce", 0.95, 0.6));
  CHECK(v.losing_part == kLosingInterNode);
  CHECK(v.text.find("Within a node (1 -> 8 GPUs) efficiency is 95 %; between nodes (1 -> 4 "
                    "nodes) 60 %: most of the loss is between nodes") != std::string::npos);
  CHECK(v.gpus_max == 32);
}

TEST_CASE("the verdict names the intra-node part when one node already loses more") {
  const RunVerdict v = only_verdict(table("train", 0.7, 0.92));
  CHECK(v.losing_part == kLosingIntraNode);
  CHECK(v.text.find("most of the loss is within a node") != std::string::npos);
}

TEST_CASE("both parts within the tolerance: no part is named") {
  const RunVerdict v = only_verdict(table("train", 0.97, 0.96));
  CHECK(v.losing_part.empty());
  CHECK(v.text.find("both parts scale well") != std::string::npos);
}

TEST_CASE("points without node fields (one node) give no split and the verdict of today") {
  std::vector<PointResult> points;
  for (int i = 0; i < 4; ++i) {
    PointResult p = placed(static_cast<std::size_t>(i), "allreduce", 1 << i, 100.0 * (1 << i));
    p.placement = Placement{};  // what reading a file without the fields gives
    p.placement.gpus_per_node = p.gpus;
    points.push_back(p);
  }
  const ScalingSeries s = only_series(points);
  CHECK_FALSE(s.node_split.has_value());
  for (const auto& r : s.rows) CHECK(r.nodes == 1);
  const RunVerdict v = only_verdict(points);
  CHECK(v.losing_part.empty());
  CHECK(v.text.find("node") == std::string::npos);
  const Json row = s.rows[3];
  CHECK_FALSE(row.contains("nodes"));  // files of single-node runs do not change
  CHECK_FALSE(Json(s).contains("node_split"));
}

TEST_CASE("multi-node rows that do not fill nodes of the single-node size give no split") {
  // 1 and 2 GPUs on one node, then 16 GPUs on 2 nodes of 8: no 8-GPU node to compare with.
  const std::vector<PointResult> points{placed(0, "allreduce", 1, 100.0),
                                        placed(1, "allreduce", 2, 190.0),
                                        placed(2, "allreduce", 16, 1200.0)};
  CHECK_FALSE(only_series(points).node_split.has_value());
  // Only multi-node rows besides the baseline: nothing to split either.
  CHECK_FALSE(node_split({}).has_value());
}

TEST_CASE("the split and the row node counts survive the JSON round trip") {
  const ScalingSeries s = only_series(table("allreduce", 0.9, 0.7));
  const ScalingSeries back = Json(s).get<ScalingSeries>();
  REQUIRE(back.node_split.has_value());
  CHECK(back.node_split->inter_efficiency == Approx(0.7));
  CHECK(back.rows[5].nodes == 4);
  const RunVerdict v = only_verdict(table("allreduce", 0.95, 0.6));
  CHECK(Json(v).get<RunVerdict>().losing_part == kLosingInterNode);
}
