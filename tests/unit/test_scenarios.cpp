// The scenario library (tests/data/scenarios, written by scripts/make_scenarios.py): realistic
// multi-GPU result sets, analysed as `mgbench report` analyses a results file
// (refresh_derived). Every expected verdict below is written by hand from the scenario's numbers
// (tests/data/scenarios/README.md gives them); none is produced by the code under test.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/verdict.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/sweep.hpp"

using mgbench::Json;
using mgbench::RunResult;
using mgbench::RunVerdict;

namespace {

const std::string kDir = std::string(MGBENCH_SOURCE_DIR) + "/tests/data/scenarios/";

RunResult analysed(const std::string& name) {
  RunResult run = mgbench::load_results(kDir + name + ".json");
  REQUIRE(run.verdicts.empty());  // the fixtures carry points only: the verdicts are derived
  mgbench::refresh_derived(run);
  return run;
}

// The one verdict of `workload` whose parameters contain `params`.
const RunVerdict& verdict(const RunResult& run, const std::string& workload,
                          const Json& params = Json::object()) {
  const RunVerdict* found = nullptr;
  for (const RunVerdict& v : run.verdicts) {
    if (v.workload != workload) continue;
    bool match = true;
    for (const auto& [key, value] : params.items()) {
      match = match && v.params.contains(key) && v.params.at(key) == value;
    }
    if (!match) continue;
    REQUIRE(found == nullptr);  // exactly one
    found = &v;
  }
  REQUIRE(found != nullptr);
  return *found;
}

bool has(const std::vector<std::string>& codes, const std::string& code) {
  for (const auto& c : codes) {
    if (c == code) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("scenario: a power-capped GPU 5 is named as the straggler, with its cause and the "
          "efficiency without it", "[scenarios]") {
  const RunResult run = analysed("gemm-straggler-gpu5");
  const RunVerdict& v = verdict(run, "gemm");
  // Baseline: the median of the 8 GPUs alone (upper middle: GPU 3, 0.20056 ms); 8 GPUs: slowest
  // rank GPU 5 at 0.2420 ms: E = 0.20056 / 0.2420 = 82.9 %. Typical rank 0.20615 ms: +17.4 %.
  // Without GPU 5 the next-slowest rank (0.2064 ms) sets the pace: 82.9 % x 0.2420 / 0.2064 =
  // 97.2 %. Lost 41.4 us: waiting for GPU 5 35.6 us (86 %), compute growth 5.6 us (13 %), the
  // rest 1 %.
  CHECK(v.text ==
        "gemm: 8 GPUs give 6.6x (83 %). Baseline: the median of 8 GPUs measured alone (GPU 3). "
        "Waits for GPU 5: of the 41 us lost per op at 8 GPUs (242 us against an ideal 201 us), "
        "compute growth 13 %, waiting for GPU 5 86 % and the rest 1 %. GPU 5 is the slowest "
        "rank at 8 GPUs: 17 % above the typical GPU (power-capped at 500 W (default 700 W) and "
        "SM clock 1320 MHz against 1550 MHz on the others); without it 97 %. GPU 5 is 15 % slower "
        "than the best GPU (GPU 0). Next: restore GPU 5's power limit or leave it out "
        "(--devices 0-4,6,7).");
  CHECK(v.binding == mgbench::kBindingStraggler);
  REQUIRE(v.straggler.has_value());
  CHECK(v.straggler->device == 5);
  CHECK(v.straggler->excess == Approx(0.2420 / 0.20615 - 1));
  CHECK(v.straggler->efficiency_without == Approx(0.20056 / 0.2064));
  CHECK_FALSE(v.straggler->baseline_gpu);
  CHECK(has(v.anomalies, mgbench::kAnomalySlowGpu));
  CHECK(v.efficiency == Approx(0.20056 / 0.2420));
}

TEST_CASE("scenario: a slow GPU 0 under the default baseline is named, with the efficiency "
          "against a typical GPU", "[scenarios]") {
  const RunResult run = analysed("gemm-straggler-gpu0");
  const RunVerdict& v = verdict(run, "gemm");
  // E = 0.2360 / 0.2432 = 97.0 % against GPU 0 alone; GPU 0 is 18.0 % above the typical rank
  // (0.20615 ms), so against a typical GPU: 97.0 % / 1.180 = 82.3 %.
  CHECK(v.text ==
        "gemm: 8 GPUs give 7.8x (97 %). Waits for GPU 0. GPU 0, the GPU of the 1-GPU baseline, "
        "is itself the slowest rank at 8 GPUs: 18 % above the typical GPU (power-capped at 500 W "
        "(default 700 W) and SM clock 1320 MHz against 1550 MHz on the others). Every group with "
        "it runs at its pace, so against a typical GPU 8 GPUs give 82 %, not 97 %. Next: "
        "restore GPU 0's power limit or leave it out (--devices 1-7).");
  REQUIRE(v.straggler.has_value());
  CHECK(v.straggler->baseline_gpu);
  CHECK(v.straggler->efficiency_without == Approx(0.2360 / 0.2432 / (0.2432 / 0.20615)));
  CHECK_FALSE(v.loss.has_value());  // against the straggler itself there is no loss to split
}

TEST_CASE("scenario: with --baseline each, a slow GPU 0 is not the baseline, and the verdict "
          "says it would have been", "[scenarios]") {
  const RunResult run = analysed("gemm-straggler-gpu0-each");
  const RunVerdict& v = verdict(run, "gemm");
  // Median GPU alone: GPU 4 (0.20058 ms); E = 0.20058 / 0.2432 = 82.5 %; without GPU 0:
  // 82.5 % x 0.2432 / 0.2064 = 97.2 %. GPU 0 alone (0.2360 ms) against the best (GPU 1,
  // 0.20052 ms): 15 % slower; against it every efficiency reads 0.2360 / 0.20058 = 1.18x.
  CHECK(v.text ==
        "gemm: 8 GPUs give 6.6x (82 %). Baseline: the median of 8 GPUs measured alone (GPU 4). "
        "Waits for GPU 0: of the 43 us lost per op at 8 GPUs (243 us against an ideal 201 us), "
        "compute growth 13 %, waiting for GPU 0 86 % and the rest 1 %. GPU 0 is the slowest "
        "rank at 8 GPUs: 18 % above the typical GPU (power-capped at 500 W (default 700 W) and "
        "SM clock 1320 MHz against 1550 MHz on the others); without it 97 %. GPU 0 is 15 % slower "
        "than the best GPU (GPU 1). It is the baseline of a sweep without --baseline each: "
        "against it every efficiency would read 1.18x higher. Next: restore GPU 0's power limit "
        "or leave it out (--devices 1-7).");
  REQUIRE(v.straggler.has_value());
  CHECK_FALSE(v.straggler->baseline_gpu);  // the baseline ran on GPU 4
}

TEST_CASE("scenario: a communication-bound step over PCIe, overlap on against off",
          "[scenarios]") {
  const RunResult run = analysed("pcie-weak");
  // Overlap on: step 2.410 + 1.590 (exposed) = 4.000 ms against 2.400 ms: 60 %; of the 1.600 ms
  // lost, 1.590 is exposed communication (99 %), 0.010 compute growth (1 %).
  const RunVerdict& on = verdict(run, "train_step", {{"overlap", true}});
  CHECK(on.text ==
        "train_step overlap on: 8 GPUs give 4.8x (60 %). Exposed communication is 40 % of the "
        "step; overlap hides 28 % of all-reduce time. Communication-bound: of the 1.60 ms lost "
        "per step at 8 GPUs (4.00 ms against an ideal 2.40 ms), exposed communication 99 %, "
        "compute growth 1 % and the rest 0 %. With overlap off, 8 GPUs give 52 % (4.61 ms per "
        "step): overlap saves 0.61 ms per step. Next: more compute per byte exchanged (a larger "
        "per-GPU batch), larger all-reduce buckets, or a faster link between the GPUs.");
  CHECK(on.binding == mgbench::kBindingCommunication);
  REQUIRE(on.loss.has_value());
  CHECK(on.loss->comm_s == Approx(1.5899e-3).epsilon(1e-3));
  // Overlap off: step 2.410 + 2.202 = 4.612 ms: 52 %; the next step is to turn overlap on.
  const RunVerdict& off = verdict(run, "train_step", {{"overlap", false}});
  CHECK(off.text ==
        "train_step overlap off: 8 GPUs give 4.2x (52 %). Exposed communication is 48 % of the "
        "step; overlap hides 0 % of all-reduce time. Communication-bound: of the 2.21 ms lost "
        "per step at 8 GPUs (4.61 ms against an ideal 2.40 ms), exposed communication 100 %, "
        "compute growth 0 % and the rest 0 %. With overlap on, 8 GPUs give 60 % (4.00 ms per "
        "step): overlap saves 0.61 ms per step. Next: turn overlap on (the all-reduce then runs "
        "during the backward pass).");
}

TEST_CASE("scenario: all-reduce over PCIe is judged against the PCIe link", "[scenarios]") {
  const RunResult run = analysed("pcie-weak");
  // busbw at 1 GiB = plateau x 2^30 / (2^30 + 2^22): 23.91, 21.91, 19.92 GB/s; PCIe Gen5 x16 =
  // 16 x 3.938 = 63.02 GB/s: 19.92 / 63.02 = 32 %; 19.92 / 23.91 = 0.83: falls by 17 %.
  const RunVerdict& v = verdict(run, "allreduce");
  CHECK(v.text ==
        "allreduce: bus bandwidth (best over message sizes, GB/s) 2 GPUs 23.91, 4 GPUs 21.91 and "
        "8 GPUs 19.92. At 8 GPUs that is 32 % of the PCIe Gen5 x16 link's 63.02 GB/s per GPU: "
        "the path between the GPUs binds, not the link's speed. It falls by 17 % from 2 to 8 "
        "GPUs (23.91 -> 19.92 GB/s). Next: check the topology and the links (mgbench doctor): "
        "GPUs under one PCIe switch or on NVLink, every link up, peer-to-peer enabled.");
  CHECK(v.kind == "link");
  CHECK(v.binding == mgbench::kBindingLinkPath);
  REQUIRE(v.plateaus.size() == 3);
  CHECK(v.plateaus[2].gpus == 8);
  CHECK(v.plateaus[2].link == "PCIe");
  CHECK(v.plateaus[2].fraction.value() == Approx(19.9222 / 63.0154).epsilon(1e-3));
}

TEST_CASE("scenario: a healthy NVLink machine: no binding part, the all-reduce at NVLink's limit",
          "[scenarios]") {
  const RunResult run = analysed("hgx-nvlink");
  // step 2.534 + 0.1016 = 2.6356 ms against 2.528 ms: 95.9 % (no part named above 95 %).
  const RunVerdict& train = verdict(run, "train_step");
  CHECK(train.text ==
        "train_step: 8 GPUs give 7.7x (96 %). Exposed communication is 4 % of the step; overlap "
        "hides 92 % of all-reduce time.");
  CHECK(train.binding.empty());
  CHECK(train.next_step.empty());
  // 368.6 / (18 links x 25 GB/s = 450) = 82 %: at least 70 %, so NVLink binds.
  const RunVerdict& ar = verdict(run, "allreduce");
  CHECK(ar.text ==
        "allreduce: bus bandwidth (best over message sizes, GB/s) 2 GPUs 350.6, 4 GPUs 360.6 and "
        "8 GPUs 368.6. At 8 GPUs that is 82 % of NVLink's 450.0 GB/s per GPU (18 links x 25 "
        "GB/s): NVLink binds. It holds from 2 to 8 GPUs (350.6 -> 368.6 GB/s).");
  CHECK(ar.binding == mgbench::kBindingLink);
}

TEST_CASE("scenario: strong scaling at 256 per GPU names the small batch, compute and the "
          "optimizer that do not shrink", "[scenarios]") {
  const RunResult run = analysed("nvlink-strong");
  // T(1) 5.050 ms, T(8) 1.794 ms: S 2.81, E 35.2 %. Ideal 5.050 / 8 = 0.631 ms; lost 1.163 ms:
  // exposed communication 0.450 (39 %), compute growth 1.344 - 0.631 = 0.713 (61 %).
  const RunVerdict& v = verdict(run, "train_step");
  CHECK(v.text ==
        "train_step: 8 GPUs give 2.8x (35 %) at a fixed global batch of 2048 (256 per GPU). "
        "Exposed communication is 25 % of the step; overlap hides 65 % of all-reduce time. "
        "Per-GPU batch 256 too small: of the 1.16 ms lost per step at 8 GPUs (1.79 ms against "
        "an ideal 0.63 ms), exposed communication 39 %, compute growth 61 % and the rest 0 %. "
        "Compute per GPU shrinks only 3.8x for 8x less work per GPU. The optimizer does not "
        "shrink (766 us on 1 GPU, 766 us on 8 GPUs): every GPU updates all the weights. "
        "Anomaly: scaling collapses at 8 GPUs (35 %): less than half of the GPUs' combined "
        "capacity is used. Next: a larger global batch.");
  CHECK(v.binding == mgbench::kBindingSmallBatch);
  CHECK(v.mode == "strong");
  // Karp-Flatt, the strong-scaling serial fraction: (1/2.815 - 1/8) / (1 - 1/8) = 0.263.
  REQUIRE(run.scaling.size() == 1);
  CHECK(run.scaling[0].rows.back().karp_flatt.value() == Approx(0.26314).epsilon(1e-3));
  CHECK_FALSE(run.scaling[0].rows.back().gustafson.has_value());
}

TEST_CASE("scenario: strong scaling over PCIe falls from 4 to 8 GPUs: the best count is named",
          "[scenarios]") {
  const RunResult run = analysed("pcie-strong");
  // X = 16384 / step: 4 GPUs 6687347, 8 GPUs 6425098 samples/s. Lost at 8: 2.55 - 0.60 = 1.95 ms,
  // exposed communication 1.85 (95 %), compute growth 0.10 (5 %).
  const RunVerdict& v = verdict(run, "train_step");
  CHECK(v.text ==
        "train_step: 8 GPUs give 1.9x (24 %) at a fixed global batch of 16384 (2048 per GPU). "
        "Exposed communication is 73 % of the step; overlap hides 16 % of all-reduce time. The "
        "most throughput is at 4 GPUs (6687347 samples/s). Communication-bound at a per-GPU "
        "batch of 2048: of the 1.95 ms lost per step at 8 GPUs (2.55 ms against an ideal 0.60 "
        "ms), exposed communication 95 %, compute growth 5 % and the rest 0 %. Anomaly: scaling "
        "collapses at 4 GPUs (49 %) and 8 GPUs (24 %): less than half of the GPUs' combined "
        "capacity is used. Anomaly: throughput falls from 4 to 8 GPUs (6687347 -> 6425098 "
        "samples/s). Next: fewer GPUs (4 GPUs give the most, 6687347 samples/s) or a larger "
        "global batch.");
  CHECK(has(v.anomalies, mgbench::kAnomalyNonMonotonic));
}

TEST_CASE("scenario: GEMM strong scaling forms a series, super-linear with clean telemetry "
          "points at the cache, the negative Karp-Flatt is explained", "[scenarios]") {
  const RunResult run = analysed("gemm-strong-superlinear");
  REQUIRE(run.scaling.size() == 1);
  CHECK(run.scaling[0].params.integer("global_batch") == 8192);
  CHECK(run.scaling[0].rows.size() == 4);
  // S(2) = 0.800 / 0.3636 = 2.2002: 110 %; Karp-Flatt (1/2.2002 - 1/2) / (1/2) = -9.1 %.
  // S(8) = 0.800 / 0.1090 = 7.34: 92 %, lost 109 - 100 = 9.0 us, all in the ranks' own time.
  const RunVerdict& v = verdict(run, "gemm");
  CHECK(v.text ==
        "gemm: 8 GPUs give 7.3x (92 %) at a fixed global batch of 8192 (1024 per GPU). Per-GPU "
        "batch 1024 too small: of the 9.0 us lost per op at 8 GPUs (109 us against an ideal 100 "
        "us), compute growth 100 % and the rest 0 %. Anomaly: super-linear efficiency at 2 GPUs "
        "(110 %): the 1-GPU baseline ran at full clocks (SM 1550 MHz) with a certain median, so "
        "the likely cause is the smaller share of the fixed work per GPU: it may now fit in "
        "cache. At 2 GPUs the Karp-Flatt serial fraction is negative (-9.1 %): the GPUs did more "
        "together than their share alone, so no serial part can be read from it. Next: a larger "
        "global batch.");
  CHECK(has(v.anomalies, mgbench::kAnomalySuperLinear));
}

TEST_CASE("scenario: super-linear weak scaling over a throttled baseline says the baseline was "
          "slowed, Gustafson's serial fraction is negative", "[scenarios]") {
  const RunResult run = analysed("gemm-weak-throttled-baseline");
  // E(2) = 0.2306 / 0.2012 = 114.6 %, S = 2.292; Gustafson (2 - 2.292) / (2 - 1) = -29.2 %.
  const RunVerdict& v = verdict(run, "gemm");
  CHECK(v.text ==
        "gemm: 2 GPUs give 2.3x (115 %). Anomaly: super-linear efficiency at 2 GPUs (115 %): the "
        "1-GPU baseline was slowed: it was held by temperature and its SM clock was 1350 MHz "
        "against 1550 MHz at 2 GPUs; measure it again. At 2 GPUs the Gustafson serial fraction "
        "is negative (-29.2 %): the GPUs did more together than their share alone, so no serial "
        "part can be read from it.");
  REQUIRE(run.scaling.size() == 1);
  CHECK(run.scaling[0].rows[1].gustafson.value() == Approx(-0.29225).epsilon(1e-3));
  CHECK_FALSE(run.scaling[0].rows[1].karp_flatt.has_value());  // weak: Karp-Flatt does not fit
}

TEST_CASE("scenario: two nodes over InfiniBand: the all-reduce between nodes against the NIC",
          "[scenarios]") {
  const RunResult run = analysed("two-node-ib");
  // 16 GPUs on 2 nodes: 47 x 2^30 / (2^30 + 2^24) = 46.28 GB/s; 400 Gb/s = 50 GB/s: 93 %;
  // 46.28 / 368.56 = 13 % of one node's plateau.
  const RunVerdict& v = verdict(run, "allreduce");
  CHECK(v.text ==
        "allreduce: bus bandwidth (best over message sizes, GB/s) 2 GPUs 350.6, 4 GPUs 360.6, 8 "
        "GPUs 368.6 and 16 GPUs on 2 nodes 46.28. At 8 GPUs that is 82 % of NVLink's 450.0 GB/s "
        "per GPU (18 links x 25 GB/s): NVLink binds. It holds from 2 to 8 GPUs (350.6 -> 368.6 "
        "GB/s). Between nodes 46.28 GB/s at 16 GPUs on 2 nodes, 93 % of the network's 50.00 "
        "GB/s per GPU (400 Gb/s InfiniBand), 13 % of one node's: the network binds. Next: a "
        "faster network between the nodes (one NIC per GPU, GPUDirect RDMA).");
  CHECK(v.binding == mgbench::kBindingNetwork);
  REQUIRE(v.plateaus.size() == 4);
  CHECK(v.plateaus[3].nodes == 2);
  CHECK(v.plateaus[3].link == "the network");
}

TEST_CASE("scenario: two nodes over Ethernet: the step is network-bound", "[scenarios]") {
  const RunResult run = analysed("two-node-ethernet");
  // E(8) = 2.400 / 2.422 = 99.1 %; E(16) = 2.400 / 5.612 = 42.8 %: between nodes 43.2 %.
  // X = 8192 N / step: 8 GPUs 27058629, 16 GPUs 23355666 samples/s: 16 give less than 8.
  const RunVerdict& v = verdict(run, "train_step");
  CHECK(v.text ==
        "train_step: 16 GPUs give 6.8x (43 %). Exposed communication is 57 % of the step; "
        "overlap hides 32 % of all-reduce time. The most throughput is at 8 GPUs (27058629 "
        "samples/s). Network-bound: of the 3.21 ms lost per step at "
        "16 GPUs (5.61 ms against an ideal 2.40 ms), exposed communication 100 %, compute growth "
        "0 % and the rest 0 %. Within a node (1 -> 8 GPUs) efficiency is 99 %; between nodes "
        "(1 -> 2 nodes) 43 %: most of the loss is between nodes (the network). Anomaly: scaling "
        "collapses at 16 GPUs (43 %): less than half of the GPUs' combined capacity is used. "
        "Anomaly: throughput falls from 8 to 16 GPUs (27058629 -> 23355666 samples/s). Next: a "
        "faster network between the nodes (one NIC per GPU, GPUDirect RDMA), or one node: 8 GPUs "
        "there give 99 %.");
  CHECK(v.binding == mgbench::kBindingNetwork);
  CHECK(v.losing_part == mgbench::kLosingInterNode);
  const RunVerdict& ar = verdict(run, "allreduce");
  CHECK(ar.text ==
        "allreduce: bus bandwidth (best over message sizes, GB/s) 8 GPUs 368.6 and 16 GPUs on 2 "
        "nodes 10.04. At 8 GPUs that is 82 % of NVLink's 450.0 GB/s per GPU (18 links x 25 "
        "GB/s): NVLink binds. Between nodes 10.04 GB/s at 16 GPUs on 2 nodes, 3 % of one node's: "
        "the network binds (its rate is not recorded in this run). Next: a faster network "
        "between the nodes (one NIC per GPU, GPUDirect RDMA).");
}

TEST_CASE("scenario: a failed 1-GPU baseline: the series scales against 2 GPUs and says why",
          "[scenarios]") {
  const RunResult run = analysed("failed-baseline");
  REQUIRE(run.scaling.size() == 1);
  CHECK(run.scaling[0].baseline_gpus == 2);
  CHECK(run.scaling[0].no_baseline == "the 1-GPU point failed");
  CHECK(run.scaling[0].rows.front().gpus == 2);
  // X(n) = 1024 n / step: step(2) = 2.529 + 0.061 ms, step(8) = 2.532 + 0.1016 ms;
  // S = 4 x 2.5900 / 2.6336 = 3.93: 98 % of 4x.
  const RunVerdict& v = verdict(run, "train_step");
  CHECK(v.text ==
        "train_step: no baseline: the 1-GPU point failed, so 2 GPUs are the baseline. 8 GPUs "
        "give 3.9x the throughput of 2 GPUs (98 % of 4x). Exposed communication is 4 % of the "
        "step; overlap hides 92 % of all-reduce time.");
}
