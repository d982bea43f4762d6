// Every NCCL collective goes through the communicators' locked call path (NcclComms::call):
// a rank thread that issued ncclAllReduce (or any other collective) directly could touch a
// communicator that the watchdog is aborting (and freeing) at that moment. The source tree
// therefore names each call in exactly one place, collective_call() in
// benchmarks/runtime/src/nccl_collectives.cpp, whose calls NcclComms::call() and nccl_call() issue.
#include <string>
#include <utility>
#include <vector>

#include "catch_compat.hpp"
#include "support.hpp"

namespace {

// Files under `roots` (relative to the source tree) that contain `needle`, with their count.
std::vector<std::string> files_naming(const std::string& needle,
                                      const std::vector<std::string>& roots, int* total) {
  std::vector<std::string> found;
  *total = 0;
  for (const std::string& file : mgbench::test::source_files(roots)) {
    const std::string text = mgbench::test::read_text(MGBENCH_SOURCE_DIR "/" + file);
    int here = 0;
    for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
      ++here;
    }
    if (here == 0) continue;
    *total += here;
    found.push_back(file);
  }
  return found;
}

}  // namespace

TEST_CASE("every NCCL collective is called in exactly one place: the locked call path",
          "[lint][nccl]") {
  // ncclSend and ncclRecv twice each: send/recv's ring and all-to-all's exchange before NCCL
  // 2.28 (ncclAlltoAll from 2.28 on).
  const std::vector<std::pair<std::string, int>> calls{
      {"ncclAllReduce", 1}, {"ncclAllGather", 1}, {"ncclReduceScatter", 1},
      {"ncclBroadcast", 1}, {"ncclReduce", 1},    {"ncclSend", 2},
      {"ncclRecv", 2},      {"ncclAlltoAll", 1}};
  for (const auto& [call, expected] : calls) {
    // Built from two parts so that this file does not count itself.
    const std::string needle = call + "(";
    int total = 0;
    const auto files = files_naming(
        needle, {"app", "benchmarks", "kernels", "harness", "reports", "tests"}, &total);
    std::string list;
    for (const auto& f : files) list += f + " ";
    INFO(call << ": files naming it: " << list);
    REQUIRE(files.size() == 1);
    CHECK(files[0] == "benchmarks/runtime/src/nccl_collectives.cpp");
    CHECK(total == expected);
  }
}
