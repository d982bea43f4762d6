// Fingerprints of several hosts compared: which differences fail, which warn.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/platform/host_compare.hpp"

using namespace mgbench;

namespace {

Json environment(int gpus = 8, const std::string& model = "NVIDIA H200") {
  Json list = Json::array();
  for (int i = 0; i < gpus; ++i) {
    list.push_back(Json{{"name", model},
                        {"power_limit_w", Json{{"enforced", 700.0}}},
                        {"clocks_mhz", Json{{"sm_max", 1980}, {"mem_max", 3201}}}});
  }
  return Json{{"versions", Json{{"driver", "580.65.06"}, {"cuda_runtime", "13.0"},
                                {"nccl_loaded", "2.27.7"}}},
              {"gpu_count", gpus},
              {"gpus", list}};
}

std::vector<HostFingerprint> two_hosts() {
  return {{"node1", environment(), ""}, {"node2", environment(), ""}};
}

const DoctorCheck& check(const std::vector<DoctorCheck>& checks, const std::string& name) {
  for (const auto& c : checks) {
    if (c.name == name) return c;
  }
  FAIL("no check " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("identical hosts pass every comparison") {
  const auto checks = compare_host_fingerprints(two_hosts());
  REQUIRE(checks.size() == 8);
  for (const auto& c : checks) CHECK(c.status == CheckStatus::pass);
  CHECK(check(checks, "hosts_driver").finding == "driver 580.65.06 on every host");
}

TEST_CASE("a different driver, CUDA runtime or NCCL fails and names the hosts") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"driver", "hosts_driver"}, {"cuda_runtime", "hosts_cuda_runtime"},
      {"nccl_loaded", "hosts_nccl"}};
  for (const auto& [key, name] : cases) {
    auto hosts = two_hosts();
    hosts[1].environment["versions"][key] = "0.0";
    const auto checks = compare_host_fingerprints(hosts);
    const auto& c = check(checks, name);
    CAPTURE(c.finding);
    CHECK(c.status == CheckStatus::fail);
    CHECK(c.finding.find("0.0 on node2") != std::string::npos);
    CHECK(c.finding.find("on node1") != std::string::npos);
    CHECK_FALSE(c.next_step.empty());
  }
}

TEST_CASE("a different GPU model or GPU count fails") {
  auto hosts = two_hosts();
  hosts[1].environment = environment(8, "NVIDIA H100 80GB HBM3");
  CHECK(check(compare_host_fingerprints(hosts), "hosts_gpu_model").status == CheckStatus::fail);
  hosts[1].environment = environment(4);
  const auto checks = compare_host_fingerprints(hosts);
  CHECK(check(checks, "hosts_gpu_count").status == CheckStatus::fail);
  CHECK(check(checks, "hosts_gpu_count").finding == "GPU count differs: 4 on node2; 8 on node1");
  CHECK(check(checks, "hosts_gpu_model").status == CheckStatus::pass);
}

TEST_CASE("a different power limit or clock only warns") {
  auto hosts = two_hosts();
  hosts[0].environment["gpus"][3]["power_limit_w"]["enforced"] = 600.0;
  auto checks = compare_host_fingerprints(hosts);
  CHECK(check(checks, "hosts_power_limit").status == CheckStatus::warn);
  CHECK(check(checks, "hosts_power_limit").finding.find("600 W/700 W on node1") !=
        std::string::npos);
  hosts = two_hosts();
  hosts[1].environment["gpus"][0]["clocks_mhz"]["sm_max"] = 1500;
  checks = compare_host_fingerprints(hosts);
  CHECK(check(checks, "hosts_clocks").status == CheckStatus::warn);
  CHECK(check(checks, "hosts_driver").status == CheckStatus::pass);
}

TEST_CASE("a host without a fingerprint fails hosts_reached, the others are still compared") {
  auto hosts = two_hosts();
  hosts.push_back({"node3", Json::object(), "no CUDA driver found"});
  const auto checks = compare_host_fingerprints(hosts);
  CHECK(check(checks, "hosts_reached").status == CheckStatus::fail);
  CHECK(check(checks, "hosts_reached").finding.find("node3 (no CUDA driver found)") !=
        std::string::npos);
  CHECK(check(checks, "hosts_driver").status == CheckStatus::pass);
}

TEST_CASE("a value no host knows is skipped, not passed, no host at all fails") {
  auto hosts = two_hosts();
  for (auto& h : hosts) h.environment["versions"].erase("nccl_loaded");
  CHECK(check(compare_host_fingerprints(hosts), "hosts_nccl").status == CheckStatus::skip);
  for (auto& h : hosts) {
    for (auto& g : h.environment["gpus"]) g.erase("clocks_mhz");
  }
  CHECK(check(compare_host_fingerprints(hosts), "hosts_clocks").status == CheckStatus::skip);
  const auto none = compare_host_fingerprints({});
  CHECK(check(none, "hosts_reached").status == CheckStatus::fail);
  CHECK(check(none, "hosts_driver").status == CheckStatus::skip);
}
