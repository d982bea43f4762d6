// Host lists, hostfiles, the per-host launch command and the answers it prints.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/run/host_fanout.hpp"

using namespace mgbench;
using Strings = std::vector<std::string>;

namespace {

std::string write_temp(const std::string& text) {
  char name[] = "/tmp/mgbench-hostfile-XXXXXX";
  const int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(name) << text;
  return name;
}

}  // namespace

TEST_CASE("parse_host_list takes names with or without slot counts") {
  CHECK(parse_host_list("h1,h2") == Strings{"h1", "h2"});
  CHECK(parse_host_list("gpu-a.example:8,gpu_b:8") == Strings{"gpu-a.example", "gpu_b"});
}

TEST_CASE("parse_host_list refuses empty, repeated, odd names and bad slot counts") {
  for (const char* bad : {"", "h1,", ",h1", "h1,h1", "h1:0", "h1:x", "h1:", "h 1", "h1;rm",
                          "h1:99999"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_host_list(bad), UsageError);
  }
}

TEST_CASE("read_hostfile reads OpenMPI-style lines and skips comments") {
  const std::string path = write_temp("# cluster\nnode1 slots=8\n\nnode2:8  # second\nnode3\n");
  CHECK(read_hostfile(path) == Strings{"node1", "node2", "node3"});
  std::remove(path.c_str());
}

TEST_CASE("read_hostfile refuses a missing file, an empty one and unknown fields") {
  CHECK_THROWS_AS(read_hostfile("/nonexistent/hosts"), UsageError);
  const std::string empty = write_temp("# nothing\n\n");
  CHECK_THROWS_AS(read_hostfile(empty), UsageError);
  const std::string odd = write_temp("node1 gpus=8\n");
  CHECK_THROWS_AS(read_hostfile(odd), UsageError);
  std::remove(empty.c_str());
  std::remove(odd.c_str());
}

TEST_CASE("fanout_command starts one process per host with mpirun or srun") {
  const Strings cmd{"/opt/mgbench", "doctor", "--fingerprint"};
  CHECK(fanout_command(FanoutLauncher::mpirun, {"a", "b"}, cmd) ==
        Strings{"mpirun", "--host", "a,b", "-np", "2", "--map-by", "ppr:1:node", "/opt/mgbench",
                "doctor", "--fingerprint"});
  CHECK(fanout_command(FanoutLauncher::srun, {"a", "b"}, cmd) ==
        Strings{"srun", "--ntasks-per-node=1", "--nodes=2", "--nodelist=a,b", "/opt/mgbench",
                "doctor", "--fingerprint"});
  CHECK(fanout_command(FanoutLauncher::srun, {}, cmd) ==
        Strings{"srun", "--ntasks-per-node=1", "/opt/mgbench", "doctor", "--fingerprint"});
}

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
