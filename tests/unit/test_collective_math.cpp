// The collectives' arithmetic without a GPU: nccl-tests' sizes and factors, what one rank means,
// every rank's buffers and expected output checked against a host model of each collective as
// NCCL defines it, point expansion per GPU count, the NCCL variables and the plateau summary.
#include <cstdint>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "collectives/collective_math.hpp"
#include "mgbench/bench/nccl_stretches.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/collective_check.hpp"
#include "mgbench/model/group.hpp"

namespace co = mgbench::bench::collective;
using co::Kind;
using mgbench::Json;
using mgbench::kernels::collective_expected_value;
using mgbench::kernels::collective_input_value;

namespace {

constexpr std::uint32_t kSeed = 7;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
const std::vector<Kind> kAll{Kind::allreduce, Kind::allgather, Kind::reducescatter,
                             Kind::alltoall,  Kind::broadcast, Kind::reduce,
                             Kind::sendrecv};

using Buffer = std::vector<int>;

// What rank r's send buffer holds, from its layout.
Buffer input_of(const co::RankLayout& l) {
  Buffer in(l.send_count);
  for (std::uint64_t i = 0; i < l.send_count; ++i) {
    in[i] = collective_input_value(l.input.range, l.input.rank, l.input.first_index + i, kSeed);
  }
  return in;
}

// Each collective as NCCL defines it, on the ranks' inputs: rank r's output (empty where NCCL
// writes none).
Buffer reference_output(Kind kind, const std::vector<Buffer>& in, int r, std::uint64_t c,
                        int root) {
  const int n = static_cast<int>(in.size());
  const auto sum = [&](std::uint64_t index) {
    int s = 0;
    for (const Buffer& b : in) s += b[index];
    return s;
  };
  Buffer out;
  switch (kind) {
    case Kind::allreduce:
      for (std::uint64_t i = 0; i < c; ++i) out.push_back(sum(i));
      break;
    case Kind::allgather:
      for (int s = 0; s < n; ++s) out.insert(out.end(), in[s].begin(), in[s].end());
      break;
    case Kind::reducescatter:
      for (std::uint64_t i = 0; i < c; ++i) out.push_back(sum(static_cast<std::uint64_t>(r) * c + i));
      break;
    case Kind::alltoall:
      for (int s = 0; s < n; ++s) {
        for (std::uint64_t i = 0; i < c; ++i) out.push_back(in[s][static_cast<std::uint64_t>(r) * c + i]);
      }
      break;
    case Kind::broadcast: out = in[root]; break;
    case Kind::reduce:
      if (r == root) {
        for (std::uint64_t i = 0; i < c; ++i) out.push_back(sum(i));
      }
      break;
    case Kind::sendrecv: out = in[(r + n - 1) % n]; break;
  }
  return out;
}

mgbench::PointResult plateau_point(int gpus, std::uint64_t bytes, double busbw, int root) {
  mgbench::PointResult p;
  p.workload = "broadcast";
  p.gpus = gpus;
  p.status = mgbench::Status::ok;
  p.params = mgbench::Params{{"bytes", bytes}, {"dtype", "fp32"},   {"inplace", false},
                             {"root", root},   {"algo", "default"}, {"proto", "default"}};
  p.metrics = Json{{"busbw_GBps", busbw}};
  return p;
}

}  // namespace

TEST_CASE("busbw factors are nccl-tests' per collective, and none on one rank", "[collective]") {
  CHECK(co::busbw_factor(Kind::allreduce, 8) == Approx(1.75));
  for (Kind k : {Kind::allgather, Kind::reducescatter, Kind::alltoall}) {
    CHECK(co::busbw_factor(k, 4) == Approx(0.75));
    CHECK(co::busbw_factor(k, 2) == Approx(0.5));
  }
  for (Kind k : {Kind::broadcast, Kind::reduce, Kind::sendrecv}) {
    CHECK(co::busbw_factor(k, 2) == Approx(1.0));
    CHECK(co::busbw_factor(k, 8) == Approx(1.0));
  }
  for (Kind k : kAll) CHECK(co::busbw_factor(k, 1) == 0.0);
}

TEST_CASE("sizes are nccl-tests' totals: split over ranks where the collective splits",
          "[collective]") {
  // 1 MiB of fp32 on 4 ranks: all-gather's count is what one rank contributes.
  CHECK(co::nccl_count(Kind::allgather, kMiB, 4, 4) == kMiB / 16);
  CHECK(co::moved_bytes(Kind::allgather, kMiB / 16, 4, 4) == kMiB);
  CHECK(co::nccl_count(Kind::broadcast, kMiB, 4, 4) == kMiB / 4);
  CHECK(co::moved_bytes(Kind::broadcast, kMiB / 4, 4, 4) == kMiB);
  // 100 bytes of fp32 on 3 ranks: 8 elements per rank, 96 bytes moved (whole elements per rank).
  CHECK(co::nccl_count(Kind::reducescatter, 100, 4, 3) == 8);
  CHECK(co::moved_bytes(Kind::reducescatter, 8, 4, 3) == 96);
  CHECK(co::nccl_count(Kind::alltoall, 12, 4, 4) == 0);  // less than one element per rank
  CHECK(co::nccl_count(Kind::sendrecv, 12, 4, 4) == 3);
}

TEST_CASE("metrics: algbw on the bytes moved, busbw absent on one rank, the size when it differs",
          "[collective]") {
  const Json one = co::metrics(Kind::allgather, 1000, "fp32", 1, 1e-6);
  CHECK_FALSE(one.contains("busbw_GBps"));
  CHECK(one["algbw_GBps"].get<double>() == Approx(1.0));
  CHECK(one["count"] == 250);
  CHECK_FALSE(one.contains("size_bytes"));
  const Json three = co::metrics(Kind::allgather, 1000, "fp32", 3, 1e-6);
  CHECK(three["count"] == 83);
  CHECK(three["size_bytes"] == 996);
  CHECK(three["algbw_GBps"].get<double>() == Approx(0.996));
  CHECK(three["busbw_GBps"].get<double>() == Approx(0.996 * 2.0 / 3.0));
  CHECK(co::metrics(Kind::broadcast, 1000, "bf16", 2, 1e-6)["busbw_GBps"].get<double>() ==
        Approx(1.0));
}

TEST_CASE("one rank in place is waived for every collective that has an in-place variant",
          "[collective]") {
  for (Kind k : kAll) {
    INFO(co::to_string(k));
    CHECK(co::waiver(k, 2, true).empty());
    CHECK(co::waiver(k, 1, false).empty());
    CHECK(co::waiver(k, 1, true).empty() == !co::has_inplace(k));
  }
  CHECK(co::waiver(Kind::allgather, 1, true).find("in-place all-gather") != std::string::npos);
  CHECK_FALSE(co::has_inplace(Kind::alltoall));
  CHECK_FALSE(co::has_inplace(Kind::sendrecv));
}

TEST_CASE("every rank's expected output is the collective's output on the ranks' inputs",
          "[collective]") {
  for (Kind kind : kAll) {
    for (int n : {1, 2, 3, 4}) {
      for (std::uint64_t c : {std::uint64_t{1}, std::uint64_t{5}}) {
        for (int root : {0, n - 1}) {
          std::vector<Buffer> in;
          std::vector<co::RankLayout> layouts;
          for (int r = 0; r < n; ++r) {
            layouts.push_back(co::rank_layout(kind, r, n, c, root));
            in.push_back(input_of(layouts.back()));
          }
          for (int r = 0; r < n; ++r) {
            INFO(co::to_string(kind) << " n=" << n << " count=" << c << " root=" << root
                                     << " rank " << r);
            const co::RankLayout& l = layouts[static_cast<std::size_t>(r)];
            const Buffer want = reference_output(kind, in, r, c, root);
            REQUIRE(l.checked == !want.empty());
            if (!l.checked) continue;
            REQUIRE(l.recv_count == want.size());
            for (std::uint64_t i = 0; i < l.recv_count; ++i) {
              CHECK(collective_expected_value(l.expected, i, kSeed) == want[i]);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("in place, the send and receive buffers sit where NCCL puts them", "[collective]") {
  // All-gather: rank r's input is its slot of the output.
  const co::RankLayout ag = co::rank_layout(Kind::allgather, 2, 4, 10, 0);
  CHECK(ag.send_offset == 20);
  CHECK(ag.recv_offset == 0);
  CHECK(ag.recv_count == 40);
  // Reduce-scatter: rank r's output is its slot of the input.
  const co::RankLayout rs = co::rank_layout(Kind::reducescatter, 3, 4, 10, 0);
  CHECK(rs.send_offset == 0);
  CHECK(rs.recv_offset == 30);
  CHECK(rs.send_count == 40);
  // Broadcast: only the root's input is read; reduce: only the root's output is written.
  CHECK(co::rank_layout(Kind::broadcast, 1, 2, 4, 1).input_used);
  CHECK_FALSE(co::rank_layout(Kind::broadcast, 0, 2, 4, 1).input_used);
  CHECK_FALSE(co::rank_layout(Kind::reduce, 0, 2, 4, 1).checked);
  // Moved data takes 128 values, sums the narrow ones (exact in bf16).
  CHECK(co::rank_layout(Kind::alltoall, 0, 2, 4, 0).input.range ==
        mgbench::kernels::ValueRange::wide);
  CHECK(co::rank_layout(Kind::reduce, 0, 2, 4, 0).input.range ==
        mgbench::kernels::ValueRange::narrow);
}

TEST_CASE("input values are never zero, narrow ones within 2, wide ones span 128 values",
          "[collective]") {
  std::vector<int> seen(129, 0);
  for (std::uint64_t i = 0; i < 20000; ++i) {
    const int narrow = collective_input_value(mgbench::kernels::ValueRange::narrow, 3, i, kSeed);
    CHECK((narrow != 0 && narrow >= -2 && narrow <= 2));
    const int wide = collective_input_value(mgbench::kernels::ValueRange::wide, 3, i, kSeed);
    REQUIRE((wide != 0 && wide >= -64 && wide <= 64));
    seen[static_cast<std::size_t>(wide + 64)] = 1;
  }
  int distinct = 0;
  for (int s : seen) distinct += s;
  CHECK(distinct == 128);
}

TEST_CASE("roots: a rank of the group, every rank for 'all', nothing beyond the group",
          "[collective]") {
  CHECK(co::roots_of("all", 3) == std::vector<int>{0, 1, 2});
  CHECK(co::roots_of("2", 4) == std::vector<int>{2});
  CHECK(co::roots_of(2, 4) == std::vector<int>{2});
  CHECK(co::roots_of("4", 4).empty());
  CHECK_THROWS_AS(co::roots_of("-1", 4), mgbench::UsageError);
  CHECK_THROWS_AS(co::roots_of("first", 4), mgbench::UsageError);
}

TEST_CASE("expansion per GPU count: roots of the group, no size below one element per rank",
          "[collective]") {
  mgbench::AxisValues values;
  values["bytes"] = {8, 64};
  values["dtype"] = {"fp32"};
  values["inplace"] = {false};
  values["root"] = {"all"};
  values["algo"] = {"default"};
  values["proto"] = {"default"};
  const auto on4 = co::expand_points(Kind::broadcast, values, 4);
  REQUIRE(on4.size() == 8);  // two sizes x four roots
  CHECK(on4.front().integer("root") == 0);
  CHECK(on4.back().integer("root") == 3);
  CHECK_FALSE(on4.front().contains("count"));
  // All-gather of 8 bytes of fp32 on 4 GPUs: less than one element per rank.
  values.erase("root");
  const auto ag = co::expand_points(Kind::allgather, values, 4);
  REQUIRE(ag.size() == 1);
  CHECK(ag[0].integer("bytes") == 64);
  CHECK(co::expand_points(Kind::allgather, values, 2).size() == 2);
  // All-to-all has no in-place variant: the axis adds nothing.
  values["inplace"] = {false, true};
  for (const auto& p : co::expand_points(Kind::alltoall, values, 1)) {
    CHECK_FALSE(p.contains("inplace"));
  }
}

TEST_CASE("expansion keeps points of one NCCL environment together", "[collective]") {
  mgbench::AxisValues values;
  values["bytes"] = {1024, 2048};
  values["dtype"] = {"fp32", "bf16"};
  values["inplace"] = {false};
  values["algo"] = {"default", "ring"};
  values["proto"] = {"default"};
  const auto points = co::expand_points(Kind::allgather, values, 2);
  REQUIRE(points.size() == 8);
  for (std::size_t i = 0; i < points.size(); ++i) {
    CHECK(points[i].text("algo") == (i < 4 ? "default" : "ring"));
  }
  mgbench::GroupSpec spec;
  for (std::size_t i = 0; i < points.size(); ++i) spec.points.push_back({i, points[i]});
  const auto stretches = mgbench::bench::nccl_stretches(spec, co::nccl_env);
  REQUIRE(stretches.size() == 2);
  CHECK(stretches[0].begin == 0);
  CHECK(stretches[0].end == 4);
  CHECK(stretches[0].variables.empty());
  CHECK(stretches[1].begin == 4);
  CHECK(stretches[1].end == 8);
  CHECK(stretches[1].variables == mgbench::bench::NcclVariables{{"NCCL_ALGO", "ring"}});
}

TEST_CASE("NCCL variables: NCCL_ALGO and NCCL_PROTO unless NCCL's default", "[collective]") {
  CHECK(co::nccl_env(Json{{"algo", "default"}, {"proto", "default"}}).empty());
  CHECK(co::nccl_env(Json{{"bytes", 8}}).empty());
  const auto both = co::nccl_env(Json{{"algo", "nvls"}, {"proto", "simple"}});
  REQUIRE(both.size() == 2);
  CHECK(both[0] == std::pair<std::string, std::string>{"NCCL_ALGO", "nvls"});
  CHECK(both[1] == std::pair<std::string, std::string>{"NCCL_PROTO", "simple"});
}

TEST_CASE("stretches: without a variables function the whole group is one, rounds included",
          "[collective]") {
  mgbench::GroupSpec spec;
  spec.points.push_back({0, Json{{"algo", "ring"}}});
  spec.points.push_back({1, Json{{"algo", "default"}}});
  spec.rounds = 3;
  const auto one = mgbench::bench::nccl_stretches(spec, {});
  REQUIRE(one.size() == 1);
  CHECK(one[0].end == 6);
  // Alternating variables: one stretch per point, first and last included.
  const auto each = mgbench::bench::nccl_stretches(spec, co::nccl_env);
  REQUIRE(each.size() == 6);
  CHECK(each.front().variables.size() == 1);
  CHECK(each.back().variables.empty());
  CHECK(each.back().begin == 5);
  mgbench::GroupSpec empty;
  CHECK(mgbench::bench::nccl_stretches(empty, co::nccl_env).empty());
}

TEST_CASE("plateau summary: per GPU count and root, the NCCL defaults left out of the rows",
          "[collective]") {
  std::vector<mgbench::PointResult> points{
      plateau_point(2, 64 * kMiB, 10.0, 0), plateau_point(2, 128 * kMiB, 30.0, 0),
      plateau_point(2, 256 * kMiB, 20.0, 0), plateau_point(2, 256 * kMiB, 5.0, 1),
      plateau_point(2, 32 * kMiB, 99.0, 0)};
  const Json rows = co::plateau_summary(
      "broadcast", {{"dtype", ""}, {"inplace", ""}, {"root", ""}, {"algo", "default"}}, points);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["root"] == 0);
  CHECK(rows[0]["plateau_busbw_GBps"].get<double>() == Approx(20.0));  // 32 MiB left out
  CHECK(rows[0]["sizes"].size() == 3);
  CHECK_FALSE(rows[0].contains("algo"));
  CHECK(rows[1]["root"] == 1);
  CHECK(rows[1]["plateau_busbw_GBps"].get<double>() == Approx(5.0));
  CHECK(co::plateau_summary("reduce", {{"dtype", ""}}, points).empty());
}
