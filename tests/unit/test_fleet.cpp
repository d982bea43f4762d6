// Fleet outliers (`mgbench screen`): the robust standings among peers (no false alarm over many
// seeds, a 10 % and a 30 % slowdown found, half a fleet slow, the threshold's and the noise
// rule's boundaries), the blame of slow pairs, stage 3's pair schedule, and the findings of a
// whole screen section with their evidence.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/fleet.hpp"
#include "mgbench/run/screen.hpp"

using mgbench::FleetThresholds;
using mgbench::PairBlame;
using mgbench::PeerStanding;
using mgbench::ScreenFigure;
using mgbench::ScreenFinding;
using mgbench::ScreenNode;
using mgbench::ScreenSection;

namespace {

// `n` healthy figures around 1 with the selftest's ripple (uniform +-1 %), seeded.
std::vector<double> healthy(std::size_t n, unsigned seed, double spread = 0.01) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> ripple(-spread, spread);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(1.0 + ripple(random));
  return v;
}

std::vector<std::size_t> flagged(const std::vector<PeerStanding>& standings) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < standings.size(); ++i) {
    if (standings[i].outlier) out.push_back(i);
  }
  return out;
}

}  // namespace

TEST_CASE("fleet: 16 healthy GPUs are never flagged, over 20 seeds and two kinds of noise") {
  for (unsigned seed = 0; seed < 20; ++seed) {
    INFO("seed " << seed);
    CHECK(flagged(mgbench::peer_standings(healthy(16, seed), {})).empty());
    // Gaussian noise of 1 %: a fleet whose GPUs differ by a percent or two.
    std::mt19937_64 random(seed + 1000);
    std::normal_distribution<double> noise(1.0, 0.01);
    std::vector<double> v;
    for (int i = 0; i < 16; ++i) v.push_back(noise(random));
    CHECK(flagged(mgbench::peer_standings(v, {})).empty());
  }
}

TEST_CASE("fleet: one GPU 10 % or 30 % slower is flagged, and nothing else, over 20 seeds") {
  for (double slowdown : {0.10, 0.30}) {
    for (unsigned seed = 0; seed < 20; ++seed) {
      INFO("slowdown " << slowdown << ", seed " << seed);
      std::vector<double> v = healthy(16, seed);
      const std::size_t slow = seed % 16;
      v[slow] /= 1.0 + slowdown;
      const auto st = mgbench::peer_standings(v, {});
      CHECK(flagged(st) == std::vector<std::size_t>{slow});
      CHECK(st[slow].gap > slowdown / (1 + slowdown) - 0.02);
      CHECK(st[slow].gap < slowdown / (1 + slowdown) + 0.02);
    }
  }
}

TEST_CASE("fleet: one slow node of two (half the GPUs) is flagged, the other half is not") {
  for (unsigned seed = 0; seed < 20; ++seed) {
    std::vector<double> v = healthy(16, seed);
    for (std::size_t i = 8; i < 16; ++i) v[i] /= 1.1;
    std::vector<std::size_t> want;
    for (std::size_t i = 8; i < 16; ++i) want.push_back(i);
    INFO("seed " << seed);
    CHECK(flagged(mgbench::peer_standings(v, {})) == want);
  }
}

TEST_CASE("fleet: the gap must be above the threshold, not at it") {
  FleetThresholds t;
  t.gap = 0.25;
  // 3 / 4 is exact: a gap of exactly 0.25 is not above the threshold.
  auto st = mgbench::peer_standings({4, 4, 4, 3}, t);
  CHECK(st[3].gap == 0.25);
  CHECK_FALSE(st[3].outlier);
  st = mgbench::peer_standings({4, 4, 4, 2.99}, t);
  CHECK(st[3].outlier);
  CHECK(flagged(st) == std::vector<std::size_t>{3});
}

TEST_CASE("fleet: a gap within the metric's own noise is not flagged (both rules must hold)") {
  // Better half 1.2, 1.15, 1.1, 1.05: reference 1.125, robust deviation 1.4826 x 0.05.
  const std::vector<double> noisy = {1.2, 1.1, 1.0, 0.9, 0.8, 1.15, 1.05, 0.95};
  const auto st = mgbench::peer_standings(noisy, {});
  CHECK(st[4].reference == Approx(1.125));
  CHECK(st[4].gap > 0.25);                 // far above the 5 % threshold...
  CHECK(st[4].z == Approx(0.325 / (1.4826 * 0.05)));
  CHECK_FALSE(st[4].outlier);              // ...but under 5 robust deviations
  std::vector<double> worse = noisy;
  worse[4] = 0.7;                          // 5.7 deviations below
  CHECK(flagged(mgbench::peer_standings(worse, {})) == std::vector<std::size_t>{4});
}

TEST_CASE("fleet: two figures compare with the better one, one figure has no peer") {
  auto st = mgbench::peer_standings({1.0, 0.8}, {});
  CHECK(st[0].reference == 1.0);
  CHECK(flagged(st) == std::vector<std::size_t>{1});
  CHECK(flagged(mgbench::peer_standings({1.0, 0.97}, {})).empty());
  st = mgbench::peer_standings({0.5}, {});
  CHECK(st[0].reference == 0);
  CHECK_FALSE(st[0].outlier);
  CHECK(mgbench::peer_standings({}, {}).empty());
}

TEST_CASE("pair blame: a slow node, a slow link, a known slow node, a pair nobody can tell") {
  // Eight nodes, three rounds of the hypercube.
  const auto rounds = mgbench::pair_schedule(8);
  std::vector<std::pair<int, int>> pairs;
  for (const auto& r : rounds) pairs.insert(pairs.end(), r.begin(), r.end());
  REQUIRE(pairs.size() == 12);
  auto standing = [&](const std::set<std::size_t>& slow) {
    std::vector<PeerStanding> st(pairs.size());
    for (std::size_t i = 0; i < st.size(); ++i) st[i].outlier = slow.count(i) != 0;
    return st;
  };
  std::set<std::size_t> of_node_5;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].first == 5 || pairs[i].second == 5) of_node_5.insert(i);
  }
  REQUIRE(of_node_5.size() == 3);
  auto blame = mgbench::judge_pairs(pairs, standing(of_node_5), {});
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    INFO("pair " << pairs[i].first << "-" << pairs[i].second);
    if (of_node_5.count(i) == 0) {
      CHECK(blame[i] == PairBlame::none);
    } else {
      CHECK(blame[i] == (pairs[i].first == 5 ? PairBlame::first : PairBlame::second));
    }
  }
  const std::size_t one = *of_node_5.begin();  // only this pair: the link between them
  blame = mgbench::judge_pairs(pairs, standing({one}), {});
  CHECK(blame[one] == PairBlame::link);
  blame = mgbench::judge_pairs(pairs, standing({one}), {pairs[one].first});
  CHECK(blame[one] == PairBlame::first);
  // Two nodes: one pair, nothing to tell the link from either node.
  blame = mgbench::judge_pairs({{0, 1}}, standing({0}), {});
  CHECK(blame[0] == PairBlame::unclear);
}

TEST_CASE("pair schedule: every node meets several others in about log2(N) rounds") {
  CHECK(mgbench::pair_schedule(0).empty());
  CHECK(mgbench::pair_schedule(1).empty());
  for (int n = 2; n <= 64; ++n) {
    INFO(n << " nodes");
    const auto rounds = mgbench::pair_schedule(n);
    const int log2n = static_cast<int>(std::ceil(std::log2(n)));
    CHECK(static_cast<int>(rounds.size()) >= log2n);
    CHECK(static_cast<int>(rounds.size()) <= log2n + 2);
    std::vector<std::set<int>> met(static_cast<std::size_t>(n));
    std::set<std::pair<int, int>> seen;
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (const auto& [a, b] : round) {
        CHECK(a < b);
        CHECK(a >= 0);
        CHECK(b < n);
        CHECK(busy.insert(a).second);  // no node twice in a round
        CHECK(busy.insert(b).second);
        CHECK(seen.insert({a, b}).second);  // no pair twice
        met[static_cast<std::size_t>(a)].insert(b);
        met[static_cast<std::size_t>(b)].insert(a);
      }
    }
    const std::size_t want = static_cast<std::size_t>(std::min(2, n - 1));
    for (const auto& m : met) CHECK(m.size() >= want);
    // Connected: a slow link never hides behind a part of the fleet no pair reaches.
    std::set<int> reached{0};
    for (bool grew = true; grew;) {
      grew = false;
      for (int i = 0; i < n; ++i) {
        if (reached.count(i) == 0) continue;
        for (int j : met[static_cast<std::size_t>(i)]) grew = reached.insert(j).second || grew;
      }
    }
    CHECK(static_cast<int>(reached.size()) == n);
    if ((n & (n - 1)) == 0) {  // a power of two: the hypercube, log2 N rounds and partners
      CHECK(static_cast<int>(rounds.size()) == log2n);
      for (const auto& m : met) CHECK(static_cast<int>(m.size()) == log2n);
    }
  }
}

namespace {

ScreenSection fleet_of(int nodes, int gpus) {
  ScreenSection s;
  s.gpus_per_node = gpus;
  for (int n = 0; n < nodes; ++n) {
    ScreenNode node;
    node.host = "node" + std::to_string(n);
    node.gpus = gpus;
    node.gpu_model = "H200";
    s.nodes.push_back(node);
  }
  return s;
}

// Stage 1 "gemm" figures of every GPU, `slow(node, gpu)` times slower.
template <typename Slow>
void add_gpu_figures(ScreenSection& s, unsigned seed, Slow slow) {
  const auto v = healthy(s.nodes.size() * static_cast<std::size_t>(s.gpus_per_node), seed);
  std::size_t k = 0;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    for (int g = 0; g < s.gpus_per_node; ++g) {
      ScreenFigure f;
      f.metric = "gemm";
      f.unit = "TFLOP/s";
      f.node = n;
      f.gpu = g;
      f.group = "H200";
      f.point = static_cast<std::size_t>(n);
      f.value = 600 * v[k++] / slow(n, g);
      s.figures.push_back(f);
    }
  }
}

std::vector<std::string> subjects(const ScreenSection& s, const std::vector<ScreenFinding>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(x.kind + " " + mgbench::finding_subject(s, x));
  return out;
}

}  // namespace

TEST_CASE("screen findings: 16 GPUs on 2 nodes name exactly the slow GPU, or the slow node") {
  for (unsigned seed = 0; seed < 20; ++seed) {
    INFO("seed " << seed);
    ScreenSection s = fleet_of(2, 8);
    add_gpu_figures(s, seed, [](int n, int g) { return n == 1 && g == 3 ? 1.1 : 1.0; });
    const auto gpu = mgbench::find_fleet_outliers(s, {});
    CHECK(subjects(s, gpu) == std::vector<std::string>{"gpu node1 GPU 3"});
    ScreenSection h = fleet_of(2, 8);
    add_gpu_figures(h, seed, [](int n, int) { return n == 0 ? 1.3 : 1.0; });
    const auto node = mgbench::find_fleet_outliers(h, {});
    CHECK(subjects(h, node) == std::vector<std::string>{"node node0"});
    REQUIRE(node.size() == 1);
    CHECK(node[0].gap == Approx(1 - 1 / 1.3).margin(0.02));
    ScreenSection none = fleet_of(2, 8);
    add_gpu_figures(none, seed, [](int, int) { return 1.0; });
    CHECK(mgbench::find_fleet_outliers(none, {}).empty());
  }
}

TEST_CASE("screen findings: a failed node comes first and its figures are not judged") {
  ScreenSection s = fleet_of(3, 2);
  add_gpu_figures(s, 1, [](int n, int) { return n == 2 ? 2.0 : 1.0; });
  s.nodes[2].status = "failed";
  s.nodes[2].message = "stage 1 (gemm): timeout: rank 0 made no progress";
  add_gpu_figures(s, 2, [](int n, int g) { return n == 0 && g == 1 ? 1.3 : 1.0; });
  const auto f = mgbench::find_fleet_outliers(s, {});
  REQUIRE(f.size() >= 2);
  CHECK(f[0].kind == mgbench::kFindingNodeFailed);
  CHECK(f[0].node == 2);
  CHECK(f[0].text.find("timeout") != std::string::npos);
  for (std::size_t i = 1; i < f.size(); ++i) CHECK(f[i].node != 2);
  CHECK(std::any_of(f.begin(), f.end(), [](const ScreenFinding& x) {
    return x.kind == mgbench::kFindingGpu && x.node == 0 && x.gpu == 1;
  }));
}

namespace {

// Stage 3 pair figures over the schedule of `nodes`, `slow(a, b)` times slower.
template <typename Slow>
ScreenSection pairs_of(int nodes, Slow slow) {
  ScreenSection s = fleet_of(nodes, 2);
  s.rounds = mgbench::pair_schedule(nodes);
  unsigned k = 0;
  for (const auto& round : s.rounds) {
    for (const auto& [a, b] : round) {
      ScreenFigure f;
      f.stage = 3;
      f.metric = "pair allreduce";
      f.node = a;
      f.peer = b;
      f.value = 40 * healthy(1, k++)[0] / slow(a, b);
      s.figures.push_back(f);
    }
  }
  return s;
}

}  // namespace

TEST_CASE("screen findings: a slow pair is a link, a node slow with every partner its network") {
  const auto link = pairs_of(8, [](int a, int b) { return a == 2 && b == 3 ? 1.3 : 1.0; });
  CHECK(subjects(link, mgbench::find_fleet_outliers(link, {})) ==
        std::vector<std::string>{"node_link node2 - node3"});
  const auto node = pairs_of(8, [](int a, int b) { return a == 6 || b == 6 ? 1.3 : 1.0; });
  CHECK(subjects(node, mgbench::find_fleet_outliers(node, {})) ==
        std::vector<std::string>{"node_network node6"});
  // A node already found slow in stage 1 takes the blame for its slow pairs: nothing new.
  auto known = node;
  add_gpu_figures(known, 3, [](int n, int) { return n == 6 ? 1.3 : 1.0; });
  CHECK(subjects(known, mgbench::find_fleet_outliers(known, {})) ==
        std::vector<std::string>{"node node6"});
}

TEST_CASE("screen findings: a p2p matrix tells one slow link from a GPU slow to every peer") {
  auto matrix = [](auto slow) {
    ScreenSection s = fleet_of(1, 4);
    unsigned k = 0;
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        if (i == j) continue;
        ScreenFigure f;
        f.stage = 2;
        f.metric = "p2p";
        f.gpu = i;
        f.peer = j;
        f.group = "NV18";
        f.value = 100 * healthy(1, k++)[0] / slow(i, j);
        s.figures.push_back(f);
      }
    }
    return s;
  };
  const auto link = matrix([](int i, int j) { return (i == 1 && j == 2) || (i == 2 && j == 1) ? 1.5 : 1.0; });
  const auto found = subjects(link, mgbench::find_fleet_outliers(link, {}));
  CHECK(std::set<std::string>(found.begin(), found.end()) ==
        std::set<std::string>{"gpu_link GPU 1 -> GPU 2 on node0",
                              "gpu_link GPU 2 -> GPU 1 on node0"});
  CHECK(found.size() == 2);
  const auto gpu = matrix([](int i, int j) { return i == 3 || j == 3 ? 1.5 : 1.0; });
  CHECK(subjects(gpu, mgbench::find_fleet_outliers(gpu, {})) ==
        std::vector<std::string>{"gpu node0 GPU 3"});
}

TEST_CASE("screen evidence: the node's facts and telemetry explain a slow GPU") {
  ScreenSection s = fleet_of(1, 4);
  s.nodes[0].facts = mgbench::Json::parse(R"({
    "environment": {"gpus": [
      {"index": 0, "name": "NVIDIA H200", "power_limit_w": {"enforced": 700, "default": 700}},
      {"index": 1, "name": "NVIDIA H200", "power_limit_w": {"enforced": 500, "default": 700},
       "nvlink": {"links_total": 18, "links_up": 16}}]},
    "doctor": {"checks": [
      {"name": "ecc_errors", "status": "warn", "finding": "GPU 1: 3 uncorrected ECC errors"},
      {"name": "driver_cuda", "status": "warn", "finding": "not a cause"}]}})");
  mgbench::PointResult p;
  p.index = 7;
  p.telemetry = mgbench::Json::parse(R"({"gpus": [
    {"device": 0, "sm_clock_mhz": {"median": 1980}, "throttle_reasons": []},
    {"device": 1, "sm_clock_mhz": {"median": 1500}, "throttle_reasons": ["sw_thermal"],
     "temp_c": {"max": 91}},
    {"device": 2, "sm_clock_mhz": {"median": 1980}, "throttle_reasons": []}]})");
  add_gpu_figures(s, 4, [](int, int g) { return g == 1 ? 1.3 : 1.0; });
  for (auto& f : s.figures) f.point = 7;
  const auto found = mgbench::find_fleet_outliers(s, {p});
  REQUIRE(found.size() == 1);
  const auto& e = found[0].evidence;
  INFO(mgbench::Json(e).dump());
  auto has = [&](const std::string& text) {
    return std::any_of(e.begin(), e.end(),
                       [&](const std::string& x) { return x.find(text) != std::string::npos; });
  };
  CHECK(has("power limit 500 W, below the default 700 W"));
  CHECK(has("held by temperature"));
  CHECK(has("SM clock 1500 MHz against 1980 MHz on the others"));
  CHECK(has("doctor: GPU 1: 3 uncorrected ECC errors"));
  CHECK_FALSE(has("not a cause"));
  CHECK_FALSE(has("NVLink"));  // gemm is not link-bound
  CHECK(mgbench::link_evidence(s.nodes[0], 0, 1) ==
        std::vector<std::string>{"GPU 1: NVLink 16 of 18 links up"});
}

TEST_CASE("screen section: written and read back the same") {
  ScreenSection s = pairs_of(4, [](int a, int) { return a == 0 ? 1.3 : 1.0; });
  s.stages = {1, 3};
  s.nodes[1].status = "failed";
  s.nodes[1].message = "probe: no answer";
  s.findings = mgbench::find_fleet_outliers(s, {});
  s.notes = {"a note"};
  s.estimated_s = 12;
  const mgbench::Json j = s;
  const auto back = j.get<ScreenSection>();
  CHECK(mgbench::Json(back) == j);
  CHECK(back.rounds == s.rounds);
  CHECK(back.nodes[1].status == "failed");
}
