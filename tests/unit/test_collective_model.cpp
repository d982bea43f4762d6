// The collective cost model (analysis/collective_model.hpp): the textbook step counts, the
// node-crossing algorithms, the choice of the fastest, and the link presets against figures
// NVIDIA and the nccl-tests project published.
#include <cmath>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/analysis/collective_model.hpp"
#include "mgbench/analysis/links.hpp"
#include "mgbench/core/error.hpp"

using namespace mgbench;

namespace {

Link test_link(double gbps, double hop_us, double nvls = 0, double nvls_us = 0) {
  Link l;
  l.name = "test";
  l.bandwidth_GBps = gbps;
  l.hop_latency_us = hop_us;
  l.nvls_efficiency = nvls;
  l.nvls_latency_us = nvls_us;
  return l;
}

double flat(CollectiveKind kind, CollectiveAlgorithm algorithm, double bytes, int n,
            const Link& link) {
  const auto t = flat_time(kind, algorithm, bytes, n, link);
  REQUIRE(t.has_value());
  return *t;
}

Topology node_topology(int gpus, int per_node, const Link& intra, const Link& inter,
                       bool nvls = false) {
  return Topology{gpus, per_node, intra, inter, nvls};
}

// busbw (nccl-tests) of the fastest algorithm at a plateau size.
double plateau_busbw(CollectiveKind kind, const Topology& t) {
  const double bytes = 8.0 * (1u << 30);
  return bytes / collective_time(kind, bytes, t).seconds * bus_factor(kind, t.gpus) / 1e9;
}

}  // namespace

TEST_CASE("ring all-reduce is 2(n-1)/n S/B + 2(n-1) alpha") {
  const Link link = test_link(100, 2.5);  // 100 GB/s, 2.5 us per hop
  for (int n : {2, 3, 8, 64}) {
    for (double bytes : {8.0, 1e6, 4e9}) {
      const double expected = 2.0 * (n - 1) / n * bytes / 100e9 + 2.0 * (n - 1) * 2.5e-6;
      CHECK(flat(CollectiveKind::all_reduce, CollectiveAlgorithm::ring, bytes, n, link) ==
            Approx(expected).epsilon(1e-12));
    }
  }
}

TEST_CASE("ring all-gather and reduce-scatter are (n-1)/n S/B + (n-1) alpha, broadcast S/B") {
  const Link link = test_link(50, 1.0);
  const double bytes = 1e8;
  for (auto kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    CHECK(flat(kind, CollectiveAlgorithm::ring, bytes, 8, link) ==
          Approx(7.0 / 8 * bytes / 50e9 + 7 * 1e-6).epsilon(1e-12));
  }
  CHECK(flat(CollectiveKind::broadcast, CollectiveAlgorithm::ring, bytes, 8, link) ==
        Approx(bytes / 50e9 + 7 * 1e-6).epsilon(1e-12));
  CHECK(flat(CollectiveKind::reduce, CollectiveAlgorithm::ring, bytes, 4, link) ==
        Approx(bytes / 50e9 + 3 * 1e-6).epsilon(1e-12));
}

TEST_CASE("tree all-reduce is 2 ceil(log2 n) alpha + 2 S/B, and it has no all-gather") {
  const Link link = test_link(100, 2.0);
  const double bytes = 1e7;
  // n = 8: 3 levels; n = 5 and n = 7 round up to 3; n = 9 needs 4.
  for (auto [n, levels] : {std::pair{2, 1}, {5, 3}, {7, 3}, {8, 3}, {9, 4}, {64, 6}}) {
    CHECK(flat(CollectiveKind::all_reduce, CollectiveAlgorithm::tree, bytes, n, link) ==
          Approx(2.0 * levels * 2e-6 + 2 * bytes / 100e9).epsilon(1e-12));
  }
  CHECK(flat(CollectiveKind::broadcast, CollectiveAlgorithm::tree, bytes, 8, link) ==
        Approx(3 * 2e-6 + bytes / 100e9).epsilon(1e-12));
  CHECK_FALSE(flat_time(CollectiveKind::all_gather, CollectiveAlgorithm::tree, bytes, 8, link));
  CHECK_FALSE(flat_time(CollectiveKind::reduce_scatter, CollectiveAlgorithm::tree, bytes, 8, link));
}

TEST_CASE("NVLS moves (n+1)/n S for an all-reduce at the link's NVLS share, S for an all-gather") {
  const Link link = test_link(400, 0.5, 0.8, 20);
  const double bytes = 1e9;
  CHECK(flat(CollectiveKind::all_reduce, CollectiveAlgorithm::nvls, bytes, 8, link) ==
        Approx(20e-6 + 9.0 / 8 * bytes / (400e9 * 0.8)).epsilon(1e-12));
  CHECK(flat(CollectiveKind::all_gather, CollectiveAlgorithm::nvls, bytes, 8, link) ==
        Approx(20e-6 + bytes / (400e9 * 0.8)).epsilon(1e-12));
  CHECK_FALSE(flat_time(CollectiveKind::broadcast, CollectiveAlgorithm::nvls, bytes, 8, link));
  CHECK_FALSE(flat_time(CollectiveKind::all_reduce, CollectiveAlgorithm::nvls, bytes, 8,
                        test_link(400, 0.5)));  // a link without NVLS
}

TEST_CASE("one rank costs nothing, and the bus factors are nccl-tests'") {
  const Link link = test_link(100, 5);
  for (auto algorithm : {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree}) {
    CHECK(flat(CollectiveKind::all_reduce, algorithm, 1e9, 1, link) == 0.0);
  }
  CHECK(bus_factor(CollectiveKind::all_reduce, 8) == Approx(1.75));
  CHECK(bus_factor(CollectiveKind::all_reduce, 1) == 0.0);
  CHECK(bus_factor(CollectiveKind::all_gather, 8) == Approx(0.875));
  CHECK(bus_factor(CollectiveKind::reduce_scatter, 4) == Approx(0.75));
  CHECK(bus_factor(CollectiveKind::broadcast, 8) == 1.0);
}

TEST_CASE("a ring across nodes runs at min(B_intra, g B_inter) with 2(M-1) network hops") {
  const Link intra = test_link(300, 1.0);
  const Link inter = test_link(25, 3.0);
  const double bytes = 1e9;
  // 2 nodes of 8: 8 rails of 25 GB/s = 200 < 300: the network bounds the ring.
  const auto t = collective_time(CollectiveKind::all_reduce, bytes,
                                 node_topology(16, 8, intra, inter), CollectiveAlgorithm::ring);
  REQUIRE(t);
  const double steps = 2.0 * 15, net_steps = 2.0 * 1;
  const double bw_s = 2.0 * 15 / 16 * bytes / 200e9;
  CHECK(t->seconds == Approx(bw_s + (steps - net_steps) * 1e-6 + net_steps * 3e-6));
  CHECK(t->inter_s == Approx(bw_s + net_steps * 3e-6));
  CHECK(t->intra_s == Approx((steps - net_steps) * 1e-6));
  // 4 GPUs per node: 4 x 25 = 100 GB/s.
  const auto t4 = collective_time(CollectiveKind::all_reduce, bytes,
                                  node_topology(16, 4, intra, inter), CollectiveAlgorithm::ring);
  CHECK(t4->seconds == Approx(2.0 * 15 / 16 * bytes / 100e9 + 24 * 1e-6 + 6 * 3e-6));
  // Fast NICs: the intra-node links bound it (attributed to them).
  const auto fast =
      collective_time(CollectiveKind::all_reduce, bytes,
                      node_topology(16, 8, intra, test_link(100, 3.0)), CollectiveAlgorithm::ring);
  CHECK(fast->intra_s == Approx(2.0 * 15 / 16 * bytes / 300e9 + 28e-6));
  // One GPU per node: every hop is a network hop at B_inter.
  const auto one = collective_time(CollectiveKind::all_reduce, bytes,
                                   node_topology(4, 1, intra, inter), CollectiveAlgorithm::ring);
  CHECK(one->seconds == Approx(2.0 * 3 / 4 * bytes / 25e9 + 6 * 3e-6));
  CHECK(one->intra_s == 0.0);
}

TEST_CASE(
    "hierarchical all-reduce is intra reduce-scatter + inter all-reduce of S/g + intra "
    "all-gather") {
  const Link intra = test_link(300, 1.0);
  const Link inter = test_link(25, 3.0);
  const double bytes = 4e8;
  const auto t =
      collective_time(CollectiveKind::all_reduce, bytes, node_topology(32, 8, intra, inter),
                      CollectiveAlgorithm::hierarchical);
  REQUIRE(t);
  const double rs =
      flat(CollectiveKind::reduce_scatter, CollectiveAlgorithm::ring, bytes, 8, intra);
  const double ag = flat(CollectiveKind::all_gather, CollectiveAlgorithm::ring, bytes, 8, intra);
  const double ar =
      std::min(flat(CollectiveKind::all_reduce, CollectiveAlgorithm::ring, bytes / 8, 4, inter),
               flat(CollectiveKind::all_reduce, CollectiveAlgorithm::tree, bytes / 8, 4, inter));
  CHECK(t->intra_s == Approx(rs + ag));
  CHECK(t->inter_s == Approx(ar));
  CHECK(t->seconds == Approx(rs + ag + ar));
  // Not on one node, nor with one GPU per node, nor for a broadcast.
  CHECK_FALSE(collective_time(CollectiveKind::all_reduce, bytes, node_topology(8, 8, intra, inter),
                              CollectiveAlgorithm::hierarchical));
  CHECK_FALSE(collective_time(CollectiveKind::all_reduce, bytes, node_topology(8, 1, intra, inter),
                              CollectiveAlgorithm::hierarchical));
  CHECK_FALSE(collective_time(CollectiveKind::broadcast, bytes, node_topology(32, 8, intra, inter),
                              CollectiveAlgorithm::hierarchical));
}

TEST_CASE("the fastest algorithm: tree for small messages on many ranks, ring for large ones") {
  const Link link = test_link(100, 5.0);
  const Topology t = node_topology(64, 64, link, link);
  CHECK(collective_time(CollectiveKind::all_reduce, 1024, t).algorithm ==
        CollectiveAlgorithm::tree);
  // 2(n-1)/n < 2: the ring wins once the size outweighs its 2(n-1) hops.
  CHECK(collective_time(CollectiveKind::all_reduce, 1e10, t).algorithm ==
        CollectiveAlgorithm::ring);
  // NVLS only where allowed and where the link has it.
  const Link nv = test_link(370, 0.6, 0.85, 25);
  CHECK(collective_time(CollectiveKind::all_reduce, 1e9, node_topology(8, 8, nv, nv, true))
            .algorithm == CollectiveAlgorithm::nvls);
  CHECK(collective_time(CollectiveKind::all_reduce, 1e9, node_topology(8, 8, nv, nv, false))
            .algorithm == CollectiveAlgorithm::ring);
  // One GPU: nothing to do.
  CHECK(collective_time(CollectiveKind::all_reduce, 1e9, node_topology(1, 8, nv, nv)).seconds ==
        0.0);
}

TEST_CASE("links: presets by name and scope, numbers as GB/s inside a node and Gb/s between") {
  const Link nv4 = parse_link("nvlink4", LinkScope::intra_node, "--intra");
  CHECK(nv4.line_GBps == 450.0);
  CHECK(nv4.bandwidth_GBps == Approx(18 * 20.6));
  CHECK(nv4.nvls_efficiency == Approx(0.85));
  CHECK(parse_link("ib-ndr", LinkScope::inter_node, "--inter").bandwidth_GBps == Approx(48.0));
  CHECK(parse_link("eth-100", LinkScope::inter_node, "--inter").bandwidth_GBps == Approx(12.0));
  CHECK(parse_link("pcie5", LinkScope::intra_node, "--intra").bandwidth_GBps == 48.0);
  CHECK(parse_link("200", LinkScope::intra_node, "--intra").bandwidth_GBps == 200.0);
  CHECK(parse_link("200", LinkScope::inter_node, "--inter").bandwidth_GBps == 25.0);
  for (const auto& link : link_presets()) CHECK_FALSE(link.source.empty());
  CHECK_THROWS_AS(parse_link("ib-ndr", LinkScope::intra_node, "--intra"), UsageError);
  CHECK_THROWS_AS(parse_link("nvlink4", LinkScope::inter_node, "--inter"), UsageError);
  for (const char* bad : {"", "nvlink9", "0", "-5", "nan", "inf", "1e400", "1e6", "10GB"}) {
    CHECK_THROWS_AS(parse_link(bad, LinkScope::intra_node, "--intra"), UsageError);
  }
}

// Predicted from the declared links alone, against the plateau bus bandwidths NVIDIA's NCCL
// engineers gave in the nccl-tests and NCCL issue trackers (docs/METHODOLOGY.md, "Prediction"):
//   8 x H100, NVLink4: ring all-reduce and all-gather ~360-370 GB/s (nccl-tests issues 212,
//   2024, and 326, 2025); NVLS all-reduce ~480 GB/s, algbw ~275 GB/s (nccl-tests issue 212,
//   2024; 476 GB/s "in the expected range", nccl-tests issue 290, 2025); NVLS gives all-gather
//   no bandwidth gain (NCCL issue 1506, 2024), so it stays at the ring figure;
//   400 Gb/s InfiniBand: 46-48 GB/s per NIC (nccl-tests issue 290, 2025), and a ring across
//   nodes carries the nodes' NIC bandwidth (nccl-tests issue 160, 2023);
//   DGX A100 with 8 x 200 Gb/s InfiniBand: 192 GB/s all-reduce busbw (NCCL issue 812, 2023).
// Aim: within 15 %.
TEST_CASE("declared links predict the published plateau busbw within 15 %") {
  const Link nvlink4 = link_preset("nvlink4");
  const Link ndr = link_preset("ib-ndr");
  const auto within = [](double predicted, double published) {
    CHECK(std::fabs(predicted / published - 1) <= 0.15);
  };
  const Topology h100 = node_topology(8, 8, nvlink4, ndr, false);
  const Topology h100_nvls = node_topology(8, 8, nvlink4, ndr, true);
  within(plateau_busbw(CollectiveKind::all_reduce, h100), 365.0);
  within(plateau_busbw(CollectiveKind::all_gather, h100), 360.0);
  within(plateau_busbw(CollectiveKind::all_reduce, h100_nvls), 480.0);
  within(plateau_busbw(CollectiveKind::all_gather, h100_nvls), 360.0);
  const double bytes = 8.0 * (1u << 30);
  within(bytes / collective_time(CollectiveKind::all_reduce, bytes, h100_nvls).seconds / 1e9,
         275.0);  // algbw
  for (int nodes : {2, 4, 8, 16}) {
    // One GPU and NIC per node: the ring shows the NIC's figure.
    within(plateau_busbw(CollectiveKind::all_reduce, node_topology(nodes, 1, nvlink4, ndr)), 47.0);
    // 8 GPUs and 8 NICs per node (NCCL_ALGO=RING): per NIC.
    const Topology t = node_topology(8 * nodes, 8, nvlink4, ndr);
    const auto ring =
        collective_time(CollectiveKind::all_reduce, bytes, t, CollectiveAlgorithm::ring);
    within(bytes / ring->seconds * bus_factor(CollectiveKind::all_reduce, t.gpus) / 1e9 / 8, 47.0);
    within(
        plateau_busbw(CollectiveKind::all_reduce,
                      node_topology(8 * nodes, 8, link_preset("nvlink3"), link_preset("ib-hdr"))),
        192.0);
  }
}
