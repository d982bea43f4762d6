// The unit-test binary links the harness layers, the reports and the workloads' host-side
// formulas: no CUDA driver, NCCL or cuBLAS library (the CUDA runtime is linked statically).
// A layer that starts to need one shows up here.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "catch_compat.hpp"

namespace {

std::string shared_libraries_of_this_binary() {
  // Resolve the path here: inside ldd's own processes /proc/self/exe names ldd's loader.
  char self[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  std::string out;
  const std::string command = "ldd '" + std::string(self, static_cast<std::size_t>(n)) + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  REQUIRE(::pclose(pipe) == 0);
  return out;
}

}  // namespace

TEST_CASE("unit-test binary links no libcuda, libnccl or libcublas", "[link]") {
  const std::string libs = shared_libraries_of_this_binary();
  REQUIRE(libs.find("libc.so") != std::string::npos);  // ldd really listed something
  CHECK(libs.find("libcuda.") == std::string::npos);
  CHECK(libs.find("libnccl") == std::string::npos);
  CHECK(libs.find("libcublas") == std::string::npos);
}
