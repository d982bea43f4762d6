// The telemetry JSON's keys are spelled in one file, harness/model/.../telemetry_keys.hpp: the
// sampler that writes them, the readers in the model, analysis and run layers and the reports
// all use its names, so a key cannot drift between the writer and one of its readers. This test
// fails when one of the keys below appears as a string literal ("power_w", with its quotes) in
// any other product source file (harness, benchmarks, kernels, reports), comments included.
// Words that other JSON uses too ("device", "gpus", "mean", "duration_s") are named in the
// header as well but are not checked here.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "catch_compat.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* kHeader = "harness/model/include/mgbench/model/telemetry_keys.hpp";

// Every key only telemetry uses.
constexpr const char* kKeys[] = {
    "power_w",         "temp_c",          "mem_temp_c",          "sm_clock_mhz",
    "mem_clock_mhz",   "util_pct",        "mem_used_bytes",      "throttled",
    "avg_power_w",     "energy_j",        "energy_source",       "throttle_fraction",
    "throttle_reasons", "throttle_time_s", "pcie_tx_bytes",      "pcie_rx_bytes",
    "nvlink_tx_bytes", "nvlink_rx_bytes", "ecc_uncorrected_delta", "interval_s",
    "t0_unix_s",       "t_s",             "per_gpu"};

bool is_source(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh" || ext == ".h";
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Product source files (relative to the source tree) whose text contains `needle`.
std::vector<std::string> files_naming(const std::string& needle) {
  std::vector<std::string> found;
  for (const char* root : {"harness", "benchmarks", "kernels", "reports"}) {
    const fs::path dir = fs::path(MGBENCH_SOURCE_DIR) / root;
    if (!fs::exists(dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file() || !is_source(entry.path())) continue;
      if (text_of(entry.path()).find(needle) == std::string::npos) continue;
      found.push_back(fs::relative(entry.path(), MGBENCH_SOURCE_DIR).generic_string());
    }
  }
  return found;
}

}  // namespace

TEST_CASE("every telemetry key is spelled in telemetry_keys.hpp and nowhere else",
          "[lint][telemetry]") {
  std::string elsewhere;
  for (const char* key : kKeys) {
    const std::string needle = std::string("\"") + key + "\"";
    bool in_header = false;
    for (const std::string& file : files_naming(needle)) {
      if (file == kHeader) {
        in_header = true;
      } else {
        elsewhere += needle + " in " + file + "\n";
      }
    }
    INFO(needle);
    CHECK(in_header);
  }
  INFO("telemetry keys spelled outside " << kHeader << ":\n" << elsewhere);
  CHECK(elsewhere.empty());
}
