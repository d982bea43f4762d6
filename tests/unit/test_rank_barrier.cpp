// The poisonable rank barrier of the group executor, with real threads (host only).
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/bench/rank_barrier.hpp"

using mgbench::bench::RankBarrier;
using mgbench::bench::RankFailure;

namespace {

constexpr auto kBound = std::chrono::seconds(5);  // a hang fails the test instead of CTest's

// What one rank thread saw: rounds completed and the failure it threw (if any).
struct Seen {
  int rounds = 0;
  bool failed = false;
  int failed_rank = -1;
  std::string reason;
};

// Runs `body(rank)` on n threads; every thread must finish within kBound.
std::vector<Seen> run_ranks(int n, const std::function<Seen(int)>& body) {
  std::vector<std::future<Seen>> futures;
  for (int r = 0; r < n; ++r) futures.push_back(std::async(std::launch::async, body, r));
  std::vector<Seen> seen;
  for (auto& f : futures) {
    REQUIRE(f.wait_for(kBound) == std::future_status::ready);
    seen.push_back(f.get());
  }
  return seen;
}

Seen rounds(RankBarrier& barrier, int rank, int count) {
  Seen s;
  try {
    for (int i = 0; i < count; ++i) {
      barrier.wait(rank, "round");
      ++s.rounds;
    }
  } catch (const RankFailure& e) {
    s.failed = true;
    s.failed_rank = e.failed_rank();
    s.reason = e.reason();
  }
  return s;
}

}  // namespace

TEST_CASE("rank barrier: normal rounds keep the ranks in lock step") {
  for (int n : {1, 2, 3, 8}) {
    RankBarrier barrier(n);
    std::atomic<int> arrivals{0};
    std::atomic<bool> early{false};
    const auto seen = run_ranks(n, [&](int rank) {
      Seen s;
      for (int i = 0; i < 200; ++i) {
        arrivals.fetch_add(1);
        barrier.wait(rank, "round");
        // Everybody arrived at round i before anybody leaves it.
        if (arrivals.load() < (i + 1) * n) early = true;
        barrier.wait(rank, "after");
        ++s.rounds;
      }
      return s;
    });
    CHECK_FALSE(early.load());
    for (const auto& s : seen) CHECK(s.rounds == 200);
    CHECK_FALSE(barrier.poisoned());
  }
}

TEST_CASE("rank barrier: a poison wakes every waiter with the first failing rank's message") {
  const int n = 6;
  RankBarrier barrier(n);
  const auto seen = run_ranks(n, [&](int rank) {
    if (rank == 3) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the others wait
      barrier.poison(3, "out of memory in warm-up");
      barrier.poison(4, "a later failure");  // the first reason is kept
      Seen s;
      s.failed = true;
      return s;
    }
    return rounds(barrier, rank, 1000);
  });
  for (int r = 0; r < n; ++r) {
    if (r == 3) continue;
    CHECK(seen[r].failed);
    CHECK(seen[r].rounds == 0);
    CHECK(seen[r].failed_rank == 3);
    CHECK(seen[r].reason == "out of memory in warm-up");
  }
  CHECK(barrier.poisoned());
}

TEST_CASE("rank barrier: a rank arriving after the poison throws at once") {
  RankBarrier barrier(3);
  barrier.poison(1, "resources failed");
  try {
    barrier.wait(0, "round");
    FAIL("wait() returned on a poisoned barrier");
  } catch (const RankFailure& e) {
    CHECK(e.failed_rank() == 1);
    CHECK(std::string(e.what()) == "rank 1 failed: resources failed");
  }
  // Even a barrier of one rank (which never waits) refuses.
  RankBarrier single(1);
  single.wait(0, "round");
  single.poison(0, "gone");
  CHECK_THROWS_AS(single.wait(0, "round"), RankFailure);
}

TEST_CASE("rank barrier: poison in the middle of many rounds stops every rank") {
  const int n = 4;
  RankBarrier barrier(n);
  const auto seen = run_ranks(n, [&](int rank) {
    Seen s;
    try {
      for (int i = 0; i < 100000; ++i) {
        if (rank == 2 && i == 500) barrier.poison(2, "stop rule threw");
        barrier.wait(rank, "round");
        ++s.rounds;
      }
    } catch (const RankFailure& e) {
      s.failed = true;
      s.failed_rank = e.failed_rank();
    }
    return s;
  });
  for (const auto& s : seen) {
    CHECK(s.failed);
    CHECK(s.failed_rank == 2);
    CHECK(s.rounds == 500);
  }
}

TEST_CASE("rank barrier: ranks at different steps poison instead of pairing them") {
  RankBarrier barrier(2);
  const auto seen = run_ranks(2, [&](int rank) {
    Seen s;
    try {
      barrier.wait(rank, "setup");
      ++s.rounds;
      barrier.wait(rank, rank == 0 ? "warm-up" : "combine");
      ++s.rounds;
    } catch (const RankFailure& e) {
      s.failed = true;
      s.reason = e.reason();
    }
    return s;
  });
  for (const auto& s : seen) {
    CHECK(s.failed);
    CHECK(s.rounds == 1);
    CHECK(s.reason.find("out of step") != std::string::npos);
  }
}
