// CPU lists as Linux writes them, and pinning a thread, read back from the kernel.
#include <string>
#include <thread>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/bench/cpu_affinity.hpp"

using mgbench::bench::current_thread_cpus;
using mgbench::bench::format_cpu_list;
using mgbench::bench::parse_cpu_list;
using mgbench::bench::pin_current_thread;

TEST_CASE("CPU lists parse ranges and singles, and format back") {
  CHECK(parse_cpu_list("0-3,8,10-11\n") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  CHECK(parse_cpu_list("5") == std::vector<int>{5});
  CHECK(parse_cpu_list("3-1").empty());
  CHECK(parse_cpu_list("a-b").empty());
  CHECK(parse_cpu_list("").empty());
  CHECK(format_cpu_list({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
  CHECK(format_cpu_list({}) == "");
}

TEST_CASE("pinning a thread restricts it to the wanted CPUs it is allowed, read back") {
  const std::vector<int> allowed = current_thread_cpus();
  REQUIRE_FALSE(allowed.empty());
  std::vector<int> got, read_back, unchanged;
  std::thread t([&] {
    got = pin_current_thread({allowed.front(), 100000});  // one allowed, one impossible
    read_back = current_thread_cpus();
    unchanged = pin_current_thread({-5});                 // nothing usable: left alone
  });
  t.join();
  CHECK(got == std::vector<int>{allowed.front()});
  CHECK(read_back == std::vector<int>{allowed.front()});
  CHECK(unchanged == std::vector<int>{allowed.front()});
  CHECK(current_thread_cpus() == allowed);  // this thread was not touched
}
