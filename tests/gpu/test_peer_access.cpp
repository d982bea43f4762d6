// Peer access that cannot be enabled (a VM whose IOMMU or ACS setting blocks peer-to-peer while
// cudaDeviceCanAccessPeer says yes), on two ranks sharing GPU 0 through the test hook
// MGBENCH_TEST_PEER_ACCESS_FAIL: only the points that need it (the own all-reduce, the p2p
// matrix) are waived, with the reason; the group itself goes on (issue 30, finding 12).
#include <cstdlib>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/model/results.hpp"
#include "workload_runner.hpp"

using mgbench::Params;
using mgbench::Status;

namespace {

// The hook on for the life of the object.
struct PeerAccessFails {
  PeerAccessFails() {
    ::setenv(mgbench::test_hooks::kEnable, "1", 1);
    ::setenv(mgbench::test_hooks::kPeerAccessFail, "1", 1);
  }
  ~PeerAccessFails() {
    ::unsetenv(mgbench::test_hooks::kPeerAccessFail);
    ::unsetenv(mgbench::test_hooks::kEnable);
  }
};

Params own_allreduce(std::int64_t count) {
  return Params{{"bytes", count * 4}, {"count", count},   {"dtype", "fp32"},
                {"impl", "mgbench"},  {"inplace", false}, {"algo", "auto"},
                {"timing", "host"},   {"cache", "hot"}};
}

void require_waived_for_peer_access(const std::vector<mgbench::PointResult>& results,
                                    std::size_t points) {
  REQUIRE(results.size() == points);
  for (const auto& r : results) {
    CAPTURE(r.index, r.message);
    CHECK(r.status == Status::waived);
    CHECK(r.message.find("enabling peer access from GPU 0 failed") == 0);
  }
}

}  // namespace

TEST_CASE("peer access that cannot be enabled waives the own all-reduce's points, every one",
          "[gpu][allreduce]") {
  const PeerAccessFails hook;
  // The first point finds it out; the second is waived for the same reason without trying.
  require_waived_for_peer_access(
      mgbench::test::run_allreduce({0, 0}, {own_allreduce(1024), own_allreduce(4099)}), 2);
}

TEST_CASE("peer access that cannot be enabled waives the p2p matrix", "[gpu][datapath]") {
  const PeerAccessFails hook;
  require_waived_for_peer_access(
      mgbench::test::run_workload(
          "p2p", {0, 0},
          {Params{{"engine", "sm"}, {"direction", "uni"}, {"bytes", std::int64_t{1} << 20}}}),
      1);
}

TEST_CASE("without the hook the same points run: the waiver is the hook's", "[gpu][allreduce]") {
  const auto results = mgbench::test::run_allreduce({0, 0}, {own_allreduce(1024)});
  REQUIRE(results.size() == 1);
  CAPTURE(results[0].message);
  CHECK(results[0].status == Status::ok);
}
