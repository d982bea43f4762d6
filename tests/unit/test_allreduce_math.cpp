// All-reduce arithmetic without a GPU: nccl-tests' bandwidths, size lists, point expansion,
// the plateau summary and the verification data.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "collectives/allreduce_math.hpp"
#include "mgbench/bench/dtype.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/allreduce.hpp"
#include "mgbench/model/workload.hpp"

namespace ar = mgbench::bench::allreduce;
using mgbench::Json;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

mgbench::PointResult point(int gpus, const std::string& impl, const std::string& dtype,
                           bool inplace, std::uint64_t bytes, double busbw,
                           mgbench::Status status = mgbench::Status::ok) {
  mgbench::PointResult p;
  p.workload = "allreduce";
  p.gpus = gpus;
  p.status = status;
  p.params = mgbench::Params{{"bytes", bytes},
                             {"count", bytes / 4},
                             {"dtype", dtype},
                             {"impl", impl},
                             {"inplace", inplace}};
  p.metrics = Json{{"time_us", 1.0}, {"algbw_GBps", 1.0}, {"busbw_GBps", busbw}};
  return p;
}

}  // namespace

TEST_CASE("algbw is bytes per second in GB/s", "[allreduce]") {
  // 1 GiB in 10 ms.
  CHECK(ar::algbw_gbps(std::uint64_t{1} << 30, 0.01) == Approx(107.3741824));
}

TEST_CASE("busbw applies nccl-tests' 2(n-1)/n factor", "[allreduce]") {
  CHECK(ar::busbw_factor(2) == Approx(1.0));
  CHECK(ar::busbw_factor(8) == Approx(1.75));
  CHECK(ar::busbw_gbps(std::uint64_t{1} << 30, 0.01, 8) == Approx(107.3741824 * 1.75));
}

TEST_CASE("busbw is absent (undefined, not zero) with one rank while algbw is not", "[allreduce]") {
  const Json m = ar::metrics(1000, 1, 1e-6);
  CHECK_FALSE(m.contains("busbw_GBps"));
  CHECK(ar::metrics(1000, 2, 1e-6)["busbw_GBps"].get<double>() == Approx(1.0));
  CHECK(m["algbw_GBps"].get<double>() == Approx(1.0));
  CHECK(m["time_us"].get<double>() == Approx(1.0));
}

TEST_CASE("size list doubles from 8 B to 1 GiB inclusive", "[allreduce]") {
  const auto sizes = ar::size_list(8, std::uint64_t{1} << 30, 2);
  REQUIRE(sizes.size() == 28);
  CHECK(sizes.front() == 8);
  CHECK(sizes.back() == (std::uint64_t{1} << 30));
  for (std::size_t i = 1; i < sizes.size(); ++i) CHECK(sizes[i] == 2 * sizes[i - 1]);
}

TEST_CASE("size list stops before passing the maximum", "[allreduce]") {
  CHECK(ar::size_list(8, 100, 8) == std::vector<std::uint64_t>{8, 64});
  CHECK_THROWS_AS(ar::size_list(8, 100, 1), mgbench::UsageError);
}

TEST_CASE("quick sizes step by 8 and keep three plateau sizes", "[allreduce]") {
  const auto sizes = ar::default_sizes(mgbench::Profile::quick);
  CHECK(sizes.front() == 8);
  CHECK(sizes.back() == 256 * kMiB);
  CHECK(std::is_sorted(sizes.begin(), sizes.end()));
  const auto plateau = std::count_if(sizes.begin(), sizes.end(),
                                     [](std::uint64_t s) { return s >= ar::kPlateauMinBytes; });
  CHECK(plateau == 3);
  CHECK(sizes.size() < ar::default_sizes(mgbench::Profile::standard).size());
}

TEST_CASE("element count rounds down and rejects unknown dtypes", "[allreduce]") {
  CHECK(ar::element_count(8, "fp32") == 2);
  CHECK(ar::element_count(8, "bf16") == 4);
  CHECK(ar::element_count(2, "int32") == 0);
  CHECK(ar::element_count(6, "fp32") == 1);
  CHECK_THROWS_AS(ar::dtype_size("fp64"), mgbench::UsageError);
}

TEST_CASE("expansion skips sizes below one element and adds count", "[allreduce]") {
  mgbench::AxisValues values;
  values["bytes"] = {2, 8};
  values["dtype"] = {"fp32", "bf16"};
  values["impl"] = {"nccl"};
  values["inplace"] = {false};
  const auto points = ar::expand_points(values);
  REQUIRE(points.size() == 3);
  // dtype is the outer loop, then sizes ascending.
  CHECK(points[0].text("dtype") == "fp32");
  CHECK(points[0].integer("bytes") == 8);
  CHECK(points[0].integer("count") == 2);
  CHECK(points[1].text("dtype") == "bf16");
  CHECK(points[1].integer("bytes") == 2);
  CHECK(points[1].integer("count") == 1);
  CHECK(points[2].integer("count") == 4);
}

TEST_CASE("expansion rounds bytes down to whole elements and removes duplicates",
          "[allreduce]") {
  mgbench::AxisValues values;
  values["bytes"] = {8, 10};
  values["dtype"] = {"fp32"};
  values["impl"] = {"nccl"};
  values["inplace"] = {false};
  const auto points = ar::expand_points(values);
  REQUIRE(points.size() == 1);
  CHECK(points[0].integer("bytes") == 8);
}

TEST_CASE("expansion gives algo to mgbench points only", "[allreduce]") {
  mgbench::AxisValues values;
  values["bytes"] = {1024};
  values["dtype"] = {"fp32"};
  values["impl"] = {"nccl", "mgbench"};
  values["inplace"] = {false};
  values["algo"] = {"one_shot", "two_shot"};
  const auto points = ar::expand_points(values);
  REQUIRE(points.size() == 3);
  CHECK(points[0].text("impl") == "nccl");
  CHECK_FALSE(points[0].contains("algo"));
  CHECK(points[1].text("algo") == "one_shot");
  CHECK(points[2].text("algo") == "two_shot");
}

TEST_CASE("plateau is the median busbw over ok sizes of at least 64 MiB", "[allreduce]") {
  std::vector<mgbench::PointResult> points{
      point(8, "nccl", "fp32", false, 32 * kMiB, 999.0),  // below the plateau
      point(8, "nccl", "fp32", false, 64 * kMiB, 300.0),
      point(8, "nccl", "fp32", false, 128 * kMiB, 320.0),
      point(8, "nccl", "fp32", false, 256 * kMiB, 310.0),
      point(8, "nccl", "fp32", false, 512 * kMiB, 1.0, mgbench::Status::wrong),  // not ok
  };
  const Json rows = ar::plateau_summary(points);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["plateau_busbw_GBps"].get<double>() == Approx(310.0));
  CHECK(rows[0]["sizes"] == Json({64 * kMiB, 128 * kMiB, 256 * kMiB}));
  CHECK(rows[0]["gpus"] == 8);
  CHECK(rows[0]["impl"] == "nccl");
  CHECK(rows[0]["dtype"] == "fp32");
  CHECK(rows[0]["inplace"] == false);
}

TEST_CASE("plateau rows are kept apart per gpus, impl, dtype and inplace", "[allreduce]") {
  std::vector<mgbench::PointResult> points{
      point(2, "nccl", "fp32", false, 64 * kMiB, 100.0),
      point(4, "nccl", "fp32", false, 64 * kMiB, 200.0),
      point(4, "mgbench", "fp32", false, 64 * kMiB, 150.0),
      point(4, "nccl", "bf16", false, 64 * kMiB, 210.0),
      point(4, "nccl", "fp32", true, 64 * kMiB, 190.0),
  };
  const Json rows = ar::plateau_summary(points);
  REQUIRE(rows.size() == 5);
  std::set<double> values;
  for (const auto& row : rows) values.insert(row["plateau_busbw_GBps"].get<double>());
  CHECK(values == std::set<double>{100.0, 200.0, 150.0, 210.0, 190.0});
  CHECK(rows[0]["gpus"] == 2);
}

TEST_CASE("plateau summary is empty without large sizes", "[allreduce]") {
  const Json rows = ar::plateau_summary({point(8, "nccl", "fp32", false, 1024, 5.0)});
  CHECK(rows.is_array());
  CHECK(rows.empty());
}

TEST_CASE("inputs are nonzero small integers that differ by rank", "[allreduce]") {
  std::set<int> seen;
  int differ = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const int v = ar::input_value(0, i, 7);
    CHECK(v >= -2);
    CHECK(v <= 2);
    CHECK(v != 0);
    seen.insert(v);
    if (v != ar::input_value(1, i, 7)) ++differ;
  }
  CHECK(seen.size() == 4);
  CHECK(differ > 500);
}

TEST_CASE("expected value is the exact sum of the inputs over ranks", "[allreduce]") {
  for (int n : {1, 2, 3, 8, mgbench::kernels::kAllreduceMaxRanks}) {
    for (std::uint64_t i : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1023},
                            std::uint64_t{1} << 40}) {
      int sum = 0;
      for (int r = 0; r < n; ++r) sum += ar::input_value(r, i, 42);
      CHECK(ar::expected_value(n, i, 42) == sum);
      // Exact in bf16 (8 significant bits) and fp16: |sum| <= 2n <= 32.
      CHECK(std::abs(sum) <= 2 * n);
    }
  }
}

TEST_CASE("inputs depend on the seed", "[allreduce]") {
  int differ = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    if (ar::input_value(0, i, 1) != ar::input_value(0, i, 2)) ++differ;
  }
  CHECK(differ > 100);
}

TEST_CASE("automatic algorithm is one-shot for small and two-shot for large messages",
          "[allreduce]") {
  using mgbench::kernels::AllreduceAlgo;
  using mgbench::kernels::allreduce_auto_algo;
  CHECK(allreduce_auto_algo(8, 8) == AllreduceAlgo::one_shot);
  CHECK(allreduce_auto_algo(64 * 1024, 8) == AllreduceAlgo::one_shot);
  CHECK(allreduce_auto_algo(256 * kMiB, 8) == AllreduceAlgo::two_shot);
  CHECK(allreduce_auto_algo(256 * kMiB, 1) == AllreduceAlgo::one_shot);
}

TEST_CASE("own all-reduce grid is capped by the group's block limit", "[allreduce]") {
  mgbench::kernels::AllreducePeers peers;
  peers.nranks = 4;
  peers.max_blocks = 10;
  using mgbench::kernels::AllreduceAlgo;
  using mgbench::kernels::DType;
  CHECK(mgbench::kernels::allreduce_grid(peers, AllreduceAlgo::one_shot, 1, DType::fp32) == 1);
  CHECK(mgbench::kernels::allreduce_grid(peers, AllreduceAlgo::one_shot, 1u << 30, DType::fp32) ==
        10);
  // Two-shot sizes the grid by one rank's slice: 4 * 512 packs of 4 fp32 -> 1 block each.
  CHECK(mgbench::kernels::allreduce_grid(peers, AllreduceAlgo::two_shot, 4 * 512 * 4,
                                         DType::fp32) == 1);
}


TEST_CASE("all-reduce dtypes parse into the one dtype enum", "[allreduce]") {
  using mgbench::kernels::DType;
  const std::vector<DType> allowed = {DType::fp32, DType::bf16, DType::fp16, DType::int32};
  for (DType t : allowed) {
    CHECK(mgbench::bench::dtype_from_string(mgbench::kernels::to_string(t), allowed,
                                            "all-reduce") == t);
  }
  try {
    (void)mgbench::bench::dtype_from_string("tf32", allowed, "all-reduce");
    FAIL("tf32 parsed as an all-reduce dtype");
  } catch (const mgbench::UsageError& e) {
    CHECK(std::string(e.what()) ==
          "unknown all-reduce dtype 'tf32' (expected fp32, bf16, fp16 or int32)");
  }
  CHECK_THROWS_AS(mgbench::bench::dtype_from_string("fp32", {}, "x"), mgbench::UsageError);
}

TEST_CASE("a 1-rank in-place all-reduce is waived with its reason, nothing else is", "[allreduce]") {
  CHECK(ar::waiver(1, true).find("moves nothing") != std::string::npos);
  CHECK(ar::waiver(1, false).empty());
  CHECK(ar::waiver(2, true).empty());
}

TEST_CASE("all-reduce points multiply by the chosen timing methods and cache modes", "[allreduce]") {
  mgbench::AxisValues values;
  values["bytes"] = {1024};
  values["timing"] = {"device", "host"};
  values["cache"] = {"cold"};
  const auto points = ar::expand_points(values);
  REQUIRE(points.size() == 2);
  CHECK(points[0].text("timing") == "device");
  CHECK(points[1].text("timing") == "host");
  CHECK(points[1].text("cache") == "cold");
}

TEST_CASE("plateau rows never pool points timed or cached differently", "[allreduce]") {
  auto host = point(2, "nccl", "fp32", false, 256 * kMiB, 300.0);
  host.measured = {mgbench::TimingMethod::host, mgbench::CacheMode::cold};
  auto device = point(2, "nccl", "fp32", false, 256 * kMiB, 400.0);
  device.measured = {mgbench::TimingMethod::device, mgbench::CacheMode::cold};
  const Json rows = ar::plateau_summary({host, device});
  REQUIRE(rows.size() == 2);
  std::set<std::string> measured;
  for (const auto& row : rows) measured.insert(row["measured"].get<std::string>());
  CHECK(measured == std::set<std::string>{"device, cold", "host, cold"});
}
