// CPU lists as Linux writes them, the GPU's local CPUs from (a fake) sysfs, and pinning a
// thread, read back from the kernel.
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/bench/cpu_affinity.hpp"
#include "support.hpp"

using mgbench::bench::current_thread_cpus;
using mgbench::bench::format_cpu_list;
using mgbench::bench::local_cpus_of_pci;
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

TEST_CASE("a GPU's local CPUs come from its PCI device in sysfs, bus id in lower case") {
  const std::string root = mgbench::test::temp_dir("sysfs");
  const std::string dir = root + "/bus/pci/devices/0000:3b:00.0";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/local_cpulist") << "16-31,48-63\n";
  const auto cpus = local_cpus_of_pci("0000:3B:00.0", root);
  REQUIRE(cpus.size() == 32);
  CHECK(cpus.front() == 16);
  CHECK(cpus.back() == 63);
  CHECK(local_cpus_of_pci("0000:99:00.0", root).empty());
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
