// Data-path arithmetic without a GPU: bytes counting of membw, h2d and p2p, the PCIe link rates,
// the h2d bottleneck verdict and its run summary, the NUMA node list parser, the p2p pairing,
// the latency chase chain and the pair-matrix summary.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "datapath/datapath_math.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/datapath.hpp"

namespace dp = mgbench::bench::datapath;
using mgbench::Json;

namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

mgbench::PointResult h2d_point(int gpus, const std::string& numa, double per_gpu,
                               double link = 63.0) {
  mgbench::PointResult p;
  p.workload = "h2d";
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  p.params =
      mgbench::Params{{"direction", "h2d"}, {"memory", "pinned"}, {"numa", numa}, {"bytes", kGiB}};
  p.metrics = Json{{"GBps_per_gpu", per_gpu}, {"link_GBps", link}};
  return p;
}

}  // namespace

TEST_CASE("gbps is bytes per second in units of 1e9", "[datapath]") {
  CHECK(dp::gbps(2e9, 0.5) == Approx(4.0));
  CHECK(dp::gbps(1e9, 0.0) == 0.0);
}

TEST_CASE("membw counts read + write: 2x for copy and memcpy, 3x for triad", "[datapath]") {
  const std::uint64_t words = dp::membw_words(1024);
  CHECK(words == 256);
  CHECK(dp::membw_words(1027) == 256);  // rounded down to whole words
  CHECK(dp::membw_bytes_moved("copy", words) == Approx(2048.0));
  CHECK(dp::membw_bytes_moved("memcpy", words) == Approx(2048.0));
  CHECK(dp::membw_bytes_moved("triad", words) == Approx(3072.0));
  CHECK_THROWS_AS(dp::membw_bytes_moved("scale", words), mgbench::UsageError);
  CHECK_THROWS_AS(dp::membw_words(8), mgbench::UsageError);
}

TEST_CASE("membw metrics: 1 GiB copied in 0.5 ms is 4.29 TB/s per GPU", "[datapath]") {
  const Json m = dp::membw_metrics(Json{{"impl", "copy"}, {"bytes", kGiB}}, 4, 0.5e-3);
  CHECK(m["GBps_per_gpu"].get<double>() == Approx(2.0 * 1073741824.0 / 0.5e-3 / 1e9));
  CHECK(m["GBps_aggregate"].get<double>() == Approx(4 * m["GBps_per_gpu"].get<double>()));
  CHECK(m["time_ms"].get<double>() == Approx(0.5));
}

TEST_CASE("h2d moves bytes each way, twice for bidir", "[datapath]") {
  CHECK(dp::h2d_bytes_moved("h2d", 100) == Approx(100.0));
  CHECK(dp::h2d_bytes_moved("d2h", 100) == Approx(100.0));
  CHECK(dp::h2d_bytes_moved("bidir", 100) == Approx(200.0));
  CHECK_THROWS_AS(dp::h2d_bytes_moved("up", 100), mgbench::UsageError);
  const Json m = dp::h2d_metrics(Json{{"direction", "bidir"}, {"bytes", 1000000000}}, 2, 0.04);
  CHECK(m["GBps_per_gpu"].get<double>() == Approx(50.0));
  CHECK(m["GBps_aggregate"].get<double>() == Approx(100.0));
}

TEST_CASE("h2d verdict names each bottleneck and nothing on a healthy point", "[datapath]") {
  dp::H2dFacts healthy{"pinned", "local", 1, 55.0, 0, 63.0, 0};
  CHECK(dp::h2d_verdict(healthy) == "none");

  dp::H2dFacts slow_link = healthy;
  slow_link.per_gpu_gbps = 25.0;  // gen5 x16 running like gen4
  CHECK(dp::h2d_verdict(slow_link).rfind("link:", 0) == 0);

  dp::H2dFacts pageable = slow_link;
  pageable.memory = "pageable";  // pageable copies are CPU-bound: no link verdict
  CHECK(dp::h2d_verdict(pageable) == "none");

  dp::H2dFacts shared{"pinned", "local", 4, 27.0, 55.0, 63.0, 0};
  const std::string contention = dp::h2d_verdict(shared);
  CHECK(contention.rfind("contention:", 0) == 0);
  CHECK(contention.find("4 GPUs") != std::string::npos);

  dp::H2dFacts remote{"pinned", "remote", 1, 40.0, 0, 63.0, 55.0};
  CHECK(dp::h2d_verdict(remote).rfind("NUMA:", 0) == 0);
  remote.per_gpu_gbps = 54.0;  // within 15 % of local
  CHECK(dp::h2d_verdict(remote) == "none");

  dp::H2dFacts all{"pinned", "remote", 2, 10.0, 20.0, 63.0, 30.0};
  const std::string three = dp::h2d_verdict(all);
  CHECK(three.find("link:") != std::string::npos);
  CHECK(three.find("; contention:") != std::string::npos);
  CHECK(three.find("; NUMA:") != std::string::npos);
}

TEST_CASE("h2d summary relates each point to alone, link and local memory", "[datapath]") {
  std::vector<mgbench::PointResult> points{h2d_point(1, "local", 55.0), h2d_point(4, "local", 27.5),
                                           h2d_point(1, "remote", 44.0)};
  mgbench::PointResult waived = h2d_point(8, "local", 1.0);
  waived.status = mgbench::Status::waived;
  points.push_back(waived);
  const Json rows = dp::h2d_summary(points);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["verdict"] == "none");
  CHECK(rows[0]["link_efficiency"].get<double>() == Approx(55.0 / 63.0));
  CHECK(rows[0]["shared_ratio"].get<double>() == Approx(1.0));
  CHECK(rows[1]["shared_ratio"].get<double>() == Approx(0.5));
  CHECK(rows[1]["alone_GBps"].get<double>() == Approx(55.0));
  CHECK(rows[1]["verdict"].get<std::string>().rfind("contention:", 0) == 0);
  CHECK(rows[2]["numa_ratio"].get<double>() == Approx(0.8));
  CHECK(rows[2]["verdict"].get<std::string>().rfind("NUMA:", 0) == 0);
  CHECK(rows[0]["numa_ratio"].is_null());
}

TEST_CASE("NUMA node lists parse like sysfs writes them", "[datapath]") {
  CHECK(dp::parse_node_list("0\n") == std::vector<int>{0});
  CHECK(dp::parse_node_list("0-1,3") == std::vector<int>{0, 1, 3});
  CHECK(dp::parse_node_list("").empty());
  CHECK_THROWS_AS(dp::parse_node_list("1-a"), mgbench::UsageError);
  CHECK_THROWS_AS(dp::parse_node_list("3-1"), mgbench::UsageError);
}

TEST_CASE("p2p pairs: even ranks send with uni, both with bidir, odd last rank idles",
          "[datapath]") {
  using Pairs = std::vector<std::pair<int, int>>;
  CHECK(dp::p2p_pairs(1, "uni").empty());
  CHECK(dp::p2p_pairs(2, "uni") == Pairs{{0, 1}});
  CHECK(dp::p2p_pairs(2, "bidir") == Pairs{{0, 1}, {1, 0}});
  CHECK(dp::p2p_pairs(5, "uni") == Pairs{{0, 1}, {2, 3}});
  CHECK_THROWS_AS(dp::p2p_pairs(2, "both"), mgbench::UsageError);
  const Json m = dp::p2p_metrics(Json{{"direction", "bidir"}, {"bytes", 1000000000}}, 4, 0.01);
  CHECK(m["GBps_per_pair"].get<double>() == Approx(200.0));
  CHECK(m["GBps_aggregate"].get<double>() == Approx(400.0));
}

TEST_CASE("p2p refuses timing=graph with the copy engine between two GPUs, nothing else",
          "[datapath]") {
  const std::string waiver = dp::p2p_graph_waiver({0, 1}, false, true);
  CHECK(waiver.find("timing=graph with engine=ce between two GPUs is not verified") == 0);
  CHECK(dp::p2p_graph_waiver({2, 2, 2, 3}, false, true) == waiver);  // the last GPU differs
  CHECK(dp::p2p_graph_waiver({0, 0}, false, true).empty());  // ranks sharing a GPU: proven
  CHECK(dp::p2p_graph_waiver({0, 1}, true, true).empty());   // the own kernel: a kernel node
  CHECK(dp::p2p_graph_waiver({0, 1}, false, false).empty());  // timing=device or host
}

TEST_CASE("chase chain is one cycle through every slot", "[datapath]") {
  const std::uint32_t slots = 1000, stride = 64;
  const auto chain = dp::chase_chain(slots, stride, 42);
  REQUIRE(chain.size() == std::size_t{slots} * stride);
  std::set<std::uint32_t> seen;
  std::uint32_t j = 0;
  for (std::uint32_t s = 0; s < slots; ++s) {
    CHECK(j % stride == 0);
    seen.insert(j);
    j = chain[j];
  }
  CHECK(j == 0);  // back at the start after exactly `slots` loads
  CHECK(seen.size() == slots);
  CHECK(dp::chase_end(chain, slots) == 0);
  CHECK(dp::chase_end(chain, 1) == chain[0]);
  CHECK(dp::chase_chain(slots, stride, 42) == chain);
  CHECK(dp::chase_chain(slots, stride, 43) != chain);
}

TEST_CASE("pattern words differ by index and seed", "[datapath]") {
  using mgbench::kernels::pattern_word;
  std::set<std::uint32_t> words;
  for (std::uint64_t i = 0; i < 4096; ++i) words.insert(pattern_word(i, 1));
  CHECK(words.size() > 4090);
  CHECK(pattern_word(7, 1) != pattern_word(7, 2));
  CHECK(mgbench::kernels::triad_b(5, 1) <= 65535.0f);
  CHECK(mgbench::kernels::triad_c(5, 1) <= 255.0f);
}

TEST_CASE("matrix stats skip the diagonal and nulls, and the p2p summary takes the largest group",
          "[datapath]") {
  const Json matrix = Json::array({Json::array({nullptr, 10.0, 30.0}),
                                   Json::array({20.0, nullptr, nullptr}),
                                   Json::array({40.0, 50.0, 99.0})});
  const Json s = dp::matrix_stats(matrix);
  CHECK(s["min"].get<double>() == Approx(10.0));
  CHECK(s["median"].get<double>() == Approx(30.0));
  CHECK(s["max"].get<double>() == Approx(50.0));
  CHECK(dp::matrix_stats(Json::array())["median"].is_null());

  auto point = [](int gpus) {
    mgbench::PointResult p;
    p.gpus = gpus;
    for (int d = 0; d < gpus; ++d) p.devices.push_back(d + 4);
    p.params = mgbench::Params{{"engine", "ce"}, {"direction", "uni"}, {"bytes", 64}};
    Json bw = Json::array(), lat = Json::array();
    for (int i = 0; i < gpus; ++i) {
      Json row = Json::array(), lrow = Json::array();
      for (int j = 0; j < gpus; ++j) {
        row.push_back(i == j ? Json(nullptr) : Json(100.0 * i + j));
        lrow.push_back(i == j ? Json(nullptr) : Json(2.0));
      }
      bw.push_back(row);
      lat.push_back(lrow);
    }
    p.extra["ranks"] = Json::array(
        {Json{{"details", Json{{"bw_matrix_GBps", bw}, {"latency_matrix_us", lat}}}}});
    return p;
  };
  const Json rows = dp::p2p_summary({point(2), point(3)});
  REQUIRE(rows.size() == 6);  // 3 x 2 ordered pairs of the 3-GPU point only
  CHECK(rows[0]["src"] == 4);
  CHECK(rows[0]["dst"] == 5);
  CHECK(rows[5]["GBps"].get<double>() == Approx(201.0));
  CHECK(rows[5]["latency_us"].get<double>() == Approx(2.0));
}
