// Data-path workloads on the GPU: the copy, triad, pattern, mismatch and chase kernels against
// host references (odd sizes, guard words past the end), and membw, h2d and p2p through their
// registered workloads (every point verified, metrics present, waivers with their reasons;
// p2p also with two ranks sharing GPU 0 so that its pair machinery runs on one GPU), and h2d
// and p2p under every timing method and cache mode (recorded, rotated, every set verified).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "datapath/datapath_math.hpp"
#include "mgbench/kernels/datapath.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/workload.hpp"
#include "workload_runner.hpp"

using mgbench::Json;
using mgbench::Params;
using mgbench::Status;
namespace k = mgbench::kernels;

namespace {

#define CUDA_REQUIRE(expr) REQUIRE((expr) == cudaSuccess)

constexpr std::size_t kGuard = 8;  // words after every buffer that must stay untouched
constexpr std::uint32_t kGuardWord = 0xa5a5a5a5u;

class Words {
 public:
  explicit Words(std::size_t words) : words_(words) {
    CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&ptr_), (words + kGuard) * 4));
    CUDA_REQUIRE(cudaMemset(ptr_, 0xa5, (words + kGuard) * 4));
  }
  ~Words() { (void)cudaFree(ptr_); }
  Words(const Words&) = delete;
  Words& operator=(const Words&) = delete;
  std::uint32_t* get() const { return ptr_; }
  std::vector<std::uint32_t> to_host() const {  // the words and the guard after them
    std::vector<std::uint32_t> host(words_ + kGuard);
    CUDA_REQUIRE(cudaMemcpy(host.data(), ptr_, host.size() * 4, cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  std::uint32_t* ptr_ = nullptr;
  std::size_t words_;
};

std::uint64_t mismatches(const Words& w, std::size_t words, std::uint32_t seed) {
  unsigned long long* counter = nullptr;
  CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&counter), sizeof *counter));
  CUDA_REQUIRE(k::count_pattern_mismatch(w.get(), words, seed, counter, nullptr));
  unsigned long long n = 0;
  CUDA_REQUIRE(cudaMemcpy(&n, counter, sizeof n, cudaMemcpyDeviceToHost));
  CUDA_REQUIRE(cudaFree(counter));
  return n;
}

void require_ok(const std::vector<mgbench::PointResult>& results, std::size_t expected) {
  REQUIRE(results.size() == expected);
  for (const auto& r : results) {
    CAPTURE(r.params.dump(), mgbench::to_string(r.status), r.message, r.verification.dump());
    REQUIRE(r.status == Status::ok);
    CHECK(r.verification.value("ok", false));
    CHECK(r.verification.value("wrong", std::uint64_t{1}) == 0);
    CHECK(r.verification.value("checked", std::uint64_t{0}) > 0);
    REQUIRE(r.metrics.contains("GBps_aggregate"));
    CHECK(r.metrics["GBps_aggregate"].get<double>() > 0);
  }
}

}  // namespace

TEST_CASE("copy_words copies odd word counts exactly and writes nothing past the end",
          "[datapath][gpu]") {
  for (std::size_t words : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{1023},
                            (std::size_t{1} << 22) + 5}) {
    CAPTURE(words);
    Words src(words), dst(words);
    CUDA_REQUIRE(k::fill_pattern(src.get(), words, 7, nullptr));
    CUDA_REQUIRE(k::copy_words(dst.get(), src.get(), words, nullptr));
    CUDA_REQUIRE(cudaDeviceSynchronize());
    const auto host = dst.to_host();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < words; ++i) wrong += host[i] != k::pattern_word(i, 7) ? 1 : 0;
    CHECK(wrong == 0);
    for (std::size_t g = 0; g < kGuard; ++g) CHECK(host[words + g] == kGuardWord);
    CHECK(mismatches(dst, words, 7) == 0);
    CHECK(mismatches(dst, words, 8) > 0);
  }
  Words a(64), b(64);
  CHECK(k::copy_words(a.get() + 1, b.get(), 8, nullptr) == cudaErrorMisalignedAddress);
}

TEST_CASE("count_pattern_mismatch counts exactly the corrupted words", "[datapath][gpu]") {
  const std::size_t words = 100003;
  Words w(words);
  CUDA_REQUIRE(k::fill_pattern(w.get(), words, 3, nullptr));
  const std::uint32_t bad = 0;
  for (std::size_t i : {std::size_t{0}, std::size_t{4097}, words - 1}) {
    CUDA_REQUIRE(cudaMemcpy(w.get() + i, &bad, 4, cudaMemcpyHostToDevice));
  }
  CHECK(mismatches(w, words, 3) == 3);
}

TEST_CASE("triad is exact on odd counts", "[datapath][gpu]") {
  for (std::size_t n : {std::size_t{1}, std::size_t{6}, std::size_t{65541}}) {
    CAPTURE(n);
    Words a(n), b(n), c(n);
    auto* fa = reinterpret_cast<float*>(a.get());
    auto* fb = reinterpret_cast<float*>(b.get());
    auto* fc = reinterpret_cast<float*>(c.get());
    CUDA_REQUIRE(k::triad_fill(fb, fc, n, 11, nullptr));
    CUDA_REQUIRE(k::triad(fa, fb, fc, 3.0f, n, nullptr));
    unsigned long long* counter = nullptr;
    CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&counter), sizeof *counter));
    CUDA_REQUIRE(k::count_triad_mismatch(fa, n, 11, 3.0f, counter, nullptr));
    unsigned long long wrong = 1;
    CUDA_REQUIRE(cudaMemcpy(&wrong, counter, sizeof wrong, cudaMemcpyDeviceToHost));
    CUDA_REQUIRE(cudaFree(counter));
    CHECK(wrong == 0);
    const auto host = a.to_host();
    for (std::size_t i = 0; i < n; i += 997) {
      float v = 0;
      static_assert(sizeof v == 4);
      std::memcpy(&v, &host[i], 4);
      CHECK(v == k::triad_b(i, 11) + 3.0f * k::triad_c(i, 11));
    }
    CHECK(host[n] == kGuardWord);
  }
}

TEST_CASE("chase ends where the host walk of the chain ends", "[datapath][gpu]") {
  const auto chain = mgbench::bench::datapath::chase_chain(512, 64, 5);
  Words d(chain.size()), end(1);
  CUDA_REQUIRE(cudaMemcpy(d.get(), chain.data(), chain.size() * 4, cudaMemcpyHostToDevice));
  for (std::uint32_t steps : {1u, 100u, 513u}) {
    CUDA_REQUIRE(k::chase(d.get(), steps, end.get(), nullptr));
    std::uint32_t got = 0;
    CUDA_REQUIRE(cudaMemcpy(&got, end.get(), 4, cudaMemcpyDeviceToHost));
    CHECK(got == mgbench::bench::datapath::chase_end(chain, steps));
  }
}

TEST_CASE("membw: copy, triad and memcpy verify, and copy reports its ratio to memcpy",
          "[datapath][gpu]") {
  std::vector<Params> points;
  for (const char* impl : {"copy", "triad", "memcpy"}) {
    points.push_back(Params{{"impl", impl}, {"bytes", (std::int64_t{64} << 20) + 12}});
  }
  const auto results = mgbench::test::run_workload("membw", {0}, points);
  require_ok(results, 3);
  REQUIRE(results[0].metrics.contains("copy_vs_memcpy"));
  CHECK(results[0].metrics["copy_vs_memcpy"].get<double>() > 0.3);
  CHECK(results[0].metrics["memcpy_GBps"].get<double>() > 0);
  CHECK_FALSE(results[2].metrics.contains("copy_vs_memcpy"));
}

TEST_CASE("h2d: every direction and memory verifies, and remote placement runs or is waived",
          "[datapath][gpu]") {
  std::vector<Params> points;
  for (const char* direction : {"h2d", "d2h", "bidir"}) {
    for (const char* memory : {"pinned", "pageable"}) {
      points.push_back(Params{{"direction", direction}, {"memory", memory}, {"numa", "local"},
                              {"bytes", (std::int64_t{16} << 20) + 4}});
    }
  }
  require_ok(mgbench::test::run_workload("h2d", {0}, points), 6);
  const auto remote = mgbench::test::run_workload(
      "h2d", {0}, {Params{{"direction", "h2d"}, {"memory", "pinned"}, {"numa", "remote"},
                          {"bytes", std::int64_t{1} << 20}}});
  REQUIRE(remote.size() == 1);
  CAPTURE(remote[0].message);
  if (remote[0].status == Status::waived) {
    CHECK_FALSE(remote[0].message.empty());
  } else {
    require_ok(remote, 1);
  }
}

TEST_CASE("p2p: two ranks sharing GPU 0 fill the 2 x 2 matrix and verify", "[datapath][gpu]") {
  std::vector<Params> points;
  for (const char* engine : {"ce", "sm"}) {
    for (const char* direction : {"uni", "bidir"}) {
      points.push_back(Params{{"engine", engine}, {"direction", direction},
                              {"bytes", (std::int64_t{8} << 20) + 4}});
    }
  }
  const auto results = mgbench::test::run_workload("p2p", {0, 0}, points);
  require_ok(results, 4);
  for (const auto& r : results) {
    const Json& d = r.extra.at("ranks").at(0).at("details");
    REQUIRE(d.at("bw_matrix_GBps").size() == 2);
    CHECK(d["bw_matrix_GBps"][0][0].is_null());
    CHECK(d["bw_matrix_GBps"][0][1].get<double>() > 0);
    CHECK(d["latency_matrix_us"][1][0].get<double>() > 0);
    CHECK(r.metrics.contains("matrix_median_GBps"));
    CHECK(r.verification.value("chase_wrong", std::uint64_t{1}) == 0);
  }
}

TEST_CASE("p2p and h2d count every rank's checked words, not rank 0's",
          "[datapath][gpu]") {
  // Hot cache: one buffer set per rank, so the counts scale with the ranks alone.
  const Params p2p{{"engine", "ce"}, {"direction", "uni"}, {"bytes", std::int64_t{1} << 20},
                   {"cache", "hot"}};
  const auto two = mgbench::test::run_workload("p2p", {0, 0}, {p2p});
  const auto three = mgbench::test::run_workload("p2p", {0, 0, 0}, {p2p});
  require_ok(two, 1);
  require_ok(three, 1);
  // Each rank checks its n - 1 inboxes: 2 x 1 against 3 x 2 inboxes in all.
  const auto checked = [](const mgbench::PointResult& r) {
    return r.verification.at("checked").get<std::uint64_t>();
  };
  CHECK(checked(two[0]) > 0);
  CHECK(checked(three[0]) == 3 * checked(two[0]));
  CHECK(three[0].verification.at("wrong").get<std::uint64_t>() == 0);
  const Params h2d{{"direction", "h2d"}, {"memory", "pinned"}, {"numa", "local"},
                   {"bytes", std::int64_t{1} << 20}, {"cache", "hot"}};
  const auto one = mgbench::test::run_workload("h2d", {0}, {h2d});
  const auto pair = mgbench::test::run_workload("h2d", {0, 0}, {h2d});
  require_ok(one, 1);
  require_ok(pair, 1);
  CHECK(checked(pair[0]) == 2 * checked(one[0]));
}

TEST_CASE("p2p on every visible GPU: one GPU is waived, several run or name the missing pair",
          "[datapath][gpu]") {
  const int count = mgbench::test::cuda_device_count();
  const auto devices = mgbench::test::first_devices(count);
  const auto results = mgbench::test::run_workload(
      "p2p", devices,
      {Params{{"engine", "ce"}, {"direction", "uni"}, {"bytes", std::int64_t{4} << 20}}});
  REQUIRE(results.size() == 1);
  const auto& r = results[0];
  CAPTURE(count, r.message);
  if (count == 1) {
    CHECK(r.status == Status::waived);
    CHECK(r.message.find("at least 2 GPUs") != std::string::npos);
  } else if (mgbench::test::all_pairs_have_peer_access(devices)) {
    require_ok(results, 1);
  } else {
    CHECK(r.status == Status::waived);
    CHECK(r.message.find("no peer access") != std::string::npos);
  }
}

namespace {

// Every point ok and verified, recording the timing and cache it asked for; cold points of
// copies far below L2 rotate through more than one set (total above twice L2) and verify every
// set; hot points use one set. No flags: the values are real (and ranks sharing a GPU are not
// held to a link).
void require_measured_as_asked(const std::vector<mgbench::PointResult>& results,
                               const std::vector<Params>& points, std::int64_t bytes) {
  require_ok(results, points.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    CAPTURE(r.params.dump(), r.verification.dump(), Json(r.flags).dump());
    CHECK(r.measured.timing == mgbench::timing_from_string(points[i].text("timing")));
    CHECK(r.measured.cache == mgbench::cache_from_string(points[i].text("cache")));
    const Json& d = r.extra.at("ranks").at(0).at("details");
    const Json& rotation = d.at("rotation");
    const auto sets = rotation.at("sets").get<std::uint64_t>();
    if (r.measured.cache == mgbench::CacheMode::cold) {
      CHECK(sets > 1);
      CHECK(rotation.at("exceeds_2x_l2").get<bool>());
      CHECK(r.verification.value("checked", std::uint64_t{0}) >=
            sets * static_cast<std::uint64_t>(bytes / 4));
    } else {
      CHECK(sets == 1);
    }
    CHECK(d.at("peak_bytes").get<std::uint64_t>() >= sets * static_cast<std::uint64_t>(bytes));
    CHECK(r.flags.empty());
  }
}

}  // namespace

TEST_CASE("h2d: every direction under every timing and cache verifies, pageable without graph",
          "[datapath][gpu]") {
  const std::int64_t bytes = (std::int64_t{1} << 20) + 4;  // far below L2: cold rotates
  std::vector<Params> points;
  for (const char* direction : {"h2d", "d2h", "bidir"}) {
    for (const char* timing : {"device", "host", "graph"}) {
      for (const char* cache : {"hot", "cold"}) {
        points.push_back(Params{{"direction", direction}, {"memory", "pinned"},
                                {"numa", "local"},        {"bytes", bytes},
                                {"timing", timing},       {"cache", cache}});
      }
    }
  }
  for (const char* direction : {"h2d", "d2h"}) {
    for (const char* timing : {"device", "host"}) {
      for (const char* cache : {"hot", "cold"}) {
        points.push_back(Params{{"direction", direction}, {"memory", "pageable"},
                                {"numa", "local"},        {"bytes", bytes},
                                {"timing", timing},       {"cache", cache}});
      }
    }
  }
  require_measured_as_asked(mgbench::test::run_workload("h2d", {0}, points), points, bytes);
}

TEST_CASE("h2d and p2p points without timing and cache record their defaults (device, cold)",
          "[datapath][gpu]") {
  const auto h2d = mgbench::test::run_workload(
      "h2d", {0}, {Params{{"direction", "h2d"}, {"memory", "pinned"}, {"numa", "local"},
                          {"bytes", std::int64_t{1} << 20}}});
  const auto p2p = mgbench::test::run_workload(
      "p2p", {0, 0}, {Params{{"engine", "ce"}, {"direction", "uni"},
                              {"bytes", std::int64_t{1} << 20}}});
  for (const auto* results : {&h2d, &p2p}) {
    require_ok(*results, 1);
    CHECK((*results)[0].measured.timing == mgbench::TimingMethod::device);
    CHECK((*results)[0].measured.cache == mgbench::CacheMode::cold);
    CHECK((*results)[0].extra["ranks"][0]["details"]["rotation"]["sets"].get<int>() > 1);
  }
}

TEST_CASE("p2p: two ranks sharing GPU 0 verify under every timing and cache, both engines",
          "[datapath][gpu]") {
  const std::int64_t bytes = (std::int64_t{1} << 20) + 4;
  std::vector<Params> points;
  for (const char* engine : {"ce", "sm"}) {
    for (const char* timing : {"device", "host", "graph"}) {
      for (const char* cache : {"hot", "cold"}) {
        points.push_back(Params{{"engine", engine}, {"direction", "bidir"}, {"bytes", bytes},
                                {"timing", timing}, {"cache", cache}});
      }
    }
  }
  require_measured_as_asked(mgbench::test::run_workload("p2p", {0, 0}, points), points, bytes);
}
