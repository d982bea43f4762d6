// The per-host launch command and the answers it prints.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/platform/host_fanout.hpp"

using namespace mgbench;
using Strings = std::vector<std::string>;

TEST_CASE("parse_fingerprint_lines keeps marked lines and reports the unanswered hosts") {
  const std::string out = std::string("launcher chatter\n") + kFingerprintMarker +
                          R"({"host":"a","error":"","environment":{"gpu_count":8}})" + "\n" +
                          kFingerprintMarker + "{not json\n";
  const auto hosts = parse_fingerprint_lines(out, 3);
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[0].host == "a");
  CHECK(hosts[0].error.empty());
  CHECK(hosts[0].environment["gpu_count"] == 8);
  CHECK_FALSE(hosts[1].error.empty());
  CHECK(hosts[2].error == "1 of 3 hosts did not answer");
}

TEST_CASE("parse_fingerprint_lines turns a non-object environment into an error") {
  const auto hosts = parse_fingerprint_lines(
      std::string(kFingerprintMarker) + R"({"host":"a","environment":[1]})" + "\n", 1);
  REQUIRE(hosts.size() == 1);
  CHECK_FALSE(hosts[0].error.empty());
}
