// The telemetry JSON's keys are spelled in one file, harness/model/.../telemetry_keys.hpp: the
// sampler that writes them, the readers in the model, analysis and run layers and the reports
// all use its names, so a key cannot drift between the writer and one of its readers. This test
// fails when one of the keys below appears as a string literal ("power_w", with its quotes) in
// any other product source file (harness, benchmarks, kernels, reports), comments included.
// Words that other JSON uses too ("device", "gpus", "mean", "duration_s") are named in the
// header as well but are not checked here.
#include <string>
#include <utility>
#include <vector>

#include "catch_compat.hpp"
#include "support.hpp"

namespace {

constexpr const char* kHeader = "harness/model/include/mgbench/model/telemetry_keys.hpp";

// Every key only telemetry uses.
constexpr const char* kKeys[] = {
    "power_w",         "temp_c",          "mem_temp_c",          "sm_clock_mhz",
    "mem_clock_mhz",   "util_pct",        "mem_used_bytes",      "throttled",
    "avg_power_w",     "energy_j",        "energy_source",       "throttle_fraction",
    "throttle_reasons", "throttle_time_s", "pcie_tx_bytes",      "pcie_rx_bytes",
    "nvlink_tx_bytes", "nvlink_rx_bytes", "ecc_uncorrected_delta", "interval_s",
    "t0_unix_s",       "t_s",             "per_gpu"};

}  // namespace

TEST_CASE("every telemetry key is spelled in telemetry_keys.hpp and nowhere else",
          "[lint][telemetry]") {
  std::vector<std::pair<std::string, std::string>> texts;  // path, text
  for (const std::string& file :
       mgbench::test::source_files({"app", "harness", "benchmarks", "kernels", "reports"})) {
    texts.emplace_back(file, mgbench::test::read_text(MGBENCH_SOURCE_DIR "/" + file));
  }
  std::string elsewhere;
  for (const char* key : kKeys) {
    const std::string needle = std::string("\"") + key + "\"";
    bool in_header = false;
    for (const auto& [file, text] : texts) {
      if (text.find(needle) == std::string::npos) continue;
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
