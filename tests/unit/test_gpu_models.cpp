// The GPU model table: every row and range sourced, the real NVML names matched to their rows
// (SXM, PCIe and NVL variants apart, memory size checked), unknown names left unknown, the
// expected ranges found only for the points they describe.
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/gpu_models.hpp"

namespace {

using mgbench::GpuModel;
using mgbench::Json;

constexpr std::uint64_t kMiB = 1024ull * 1024ull;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string id_of(const std::string& name, std::uint64_t memory_mib) {
  const GpuModel* m = mgbench::match_gpu_model(name, memory_mib * kMiB);
  return m == nullptr ? "unknown" : m->id;
}

const GpuModel& row(const std::string& id) {
  for (const GpuModel& m : mgbench::gpu_models()) {
    if (m.id == id) return m;
  }
  FAIL("no row " + id);
  return mgbench::gpu_models().front();
}

}  // namespace

TEST_CASE("every GPU model row, link rate and expected range names its source", "[gpu_models]") {
  std::set<std::string> ids;
  REQUIRE(mgbench::gpu_models().size() >= 22);
  for (const GpuModel& m : mgbench::gpu_models()) {
    INFO(m.id);
    CHECK(ids.insert(m.id).second);
    CHECK(m.source.size() > 20);
    CHECK(contains(m.source, "20"));  // a year: documents are cited by name and year
    CHECK_FALSE(contains(m.source, "http"));
    CHECK_FALSE(m.names.empty());
    CHECK(m.memory_gb > 0);
    CHECK(m.memory_GBps > 0);
    CHECK(m.tflops.count("fp32") == 1);
    for (const auto& [dtype, value] : m.tflops) CHECK(value > 0);
    // Tensor peaks are never below the vector fp32 peak on a part that has them.
    if (m.tflops.count("bf16")) CHECK(m.tflops.at("bf16") > m.tflops.at("fp32"));
    CHECK((m.host_c2c || (m.pcie_gen >= 3 && m.pcie_width == 16)));
  }
  for (const auto& link : mgbench::link_generations()) {
    CHECK(link.GBps > 0);
    CHECK(contains(link.source, "20"));
  }
  REQUIRE_FALSE(mgbench::expected_ranges().empty());
  for (const auto& r : mgbench::expected_ranges()) {
    INFO(r.what);
    CHECK(ids.count(r.model) == 1);
    CHECK(r.low > 0);
    CHECK(r.low == Approx(0.85 * r.typical));
    CHECK_FALSE(r.source.empty());
    CHECK_FALSE(r.what.empty());
  }
}

TEST_CASE("real NVML names match their rows, SXM, PCIe and NVL apart", "[gpu_models]") {
  const std::vector<std::pair<std::pair<std::string, std::uint64_t>, std::string>> names = {
      {{"NVIDIA H100 80GB HBM3", 81559}, "H100 SXM5 80GB"},
      {{"NVIDIA H100 PCIe", 81559}, "H100 PCIe 80GB"},
      {{"NVIDIA H100 NVL", 95830}, "H100 NVL 94GB"},
      {{"NVIDIA H200", 143771}, "H200 SXM 141GB"},
      {{"NVIDIA H200 NVL", 143771}, "H200 NVL 141GB"},
      {{"NVIDIA H20", 97871}, "H20 96GB"},
      {{"NVIDIA GH200 480GB", 97871}, "GH200 96GB HBM3"},
      {{"NVIDIA GH200 144G HBM3e", 146831}, "GH200 144GB HBM3e"},
      {{"NVIDIA B200", 183359}, "B200 180GB"},
      {{"NVIDIA A100-SXM4-40GB", 40960}, "A100 SXM4 40GB"},
      {{"A100-SXM4-40GB", 40536}, "A100 SXM4 40GB"},  // drivers before "NVIDIA " was added
      {{"NVIDIA A100-SXM4-80GB", 81920}, "A100 SXM4 80GB"},
      {{"NVIDIA A100-PCIE-40GB", 40536}, "A100 PCIe 40GB"},
      {{"NVIDIA A100 80GB PCIe", 81920}, "A100 PCIe 80GB"},
      {{"NVIDIA L40S", 46068}, "L40S 48GB"},
      {{"NVIDIA L4", 23034}, "L4 24GB"},
      {{"NVIDIA A10", 23028}, "A10 24GB"},
      {{"NVIDIA RTX 6000 Ada Generation", 49140}, "RTX 6000 Ada 48GB"},
      {{"NVIDIA GeForce RTX 4090", 24564}, "GeForce RTX 4090 24GB"},
      {{"Tesla V100-SXM2-16GB", 16160}, "V100 SXM2 16GB"},
      {{"Tesla V100-SXM2-32GB", 32510}, "V100 SXM2 32GB"},
      {{"Tesla V100-PCIE-32GB", 32510}, "V100 PCIe 32GB"},
      {{"Tesla V100S-PCIE-32GB", 32510}, "V100S PCIe 32GB"},
      {{"  nvidia h200  ", 143771}, "H200 SXM 141GB"},  // case and spaces do not matter
  };
  for (const auto& [gpu, id] : names) {
    INFO(gpu.first);
    CHECK(id_of(gpu.first, gpu.second) == id);
  }
  // The same silicon at different clocks: the variants' peaks differ.
  CHECK(mgbench::model_tflops(row("H100 SXM5 80GB"), "bf16") == Approx(989.4));
  CHECK(mgbench::model_tflops(row("H100 PCIe 80GB"), "bf16") == Approx(756.0));
  CHECK(mgbench::model_tflops(row("H100 NVL 94GB"), "bf16") == Approx(835.5));
  CHECK(mgbench::model_tflops(row("H200 SXM 141GB"), "e4m3") == Approx(1978.9));
  CHECK(mgbench::model_tflops(row("A100 SXM4 80GB"), "fp8") == 0.0);  // no fp8 on Ampere
  CHECK(row("A100 SXM4 40GB").memory_GBps == Approx(1555));
  CHECK(row("A100 SXM4 80GB").memory_GBps == Approx(2039));
}

TEST_CASE("an unknown name, a MIG slice or the wrong memory size is an unknown model",
          "[gpu_models]") {
  CHECK(id_of("NVIDIA A10G", 23028) == "unknown");
  CHECK(id_of("NVIDIA A100-SXM4-40GB MIG 1g.5gb", 4864) == "unknown");
  CHECK(id_of("", 81559) == "unknown");
  CHECK(id_of("NVIDIA H200", 81559) == "unknown");     // 80 GiB is no H200 SXM
  CHECK(id_of("NVIDIA H100 NVL", 81559) == "unknown");  // the NVL has 94 GB
  // Within 12 % of the datasheet's size matches (ECC and reserved memory), beyond it not.
  CHECK(id_of("NVIDIA H200", static_cast<std::uint64_t>(141 * 1.11 * 1024)) == "H200 SXM 141GB");
  CHECK(id_of("NVIDIA H200", static_cast<std::uint64_t>(141 * 1.13 * 1024)) == "unknown");
  // Memory unknown: the name alone decides.
  CHECK(mgbench::match_gpu_model("NVIDIA L4", 0) == &row("L4 24GB"));
}

TEST_CASE("expected ranges apply only to the points they describe", "[gpu_models]") {
  const GpuModel& h200 = row("H200 SXM 141GB");
  Json gemm{{"impl", "cublas"}, {"dtype", "bf16"}, {"timing", "host"}, {"cache", "cold"},
            {"m", 4096}, {"n", 4096}, {"k", 4096}, {"shape", "square"}};
  const auto* r = mgbench::find_expected_range(h200, "gemm", "tflops_per_gpu", gemm, 1);
  REQUIRE(r != nullptr);
  CHECK(r->typical == Approx(685.2));
  CHECK(mgbench::find_expected_range(h200, "gemm", "tflops_per_gpu", gemm, 8) == r);
  Json small = gemm;
  small["m"] = small["n"] = small["k"] = 4095;  // the first size below the measured one
  CHECK(mgbench::find_expected_range(h200, "gemm", "tflops_per_gpu", small, 1) == nullptr);
  Json own = gemm;
  own["impl"] = "mgbench";
  CHECK(mgbench::find_expected_range(h200, "gemm", "tflops_per_gpu", own, 1) == nullptr);
  Json hot = gemm;
  hot["cache"] = "hot";
  CHECK(mgbench::find_expected_range(h200, "gemm", "tflops_per_gpu", hot, 1) == nullptr);
  CHECK(mgbench::find_expected_range(h200, "gemm", "tflops_aggregate", gemm, 1) == nullptr);
  CHECK(mgbench::find_expected_range(row("H100 SXM5 80GB"), "gemm", "tflops_per_gpu", gemm, 1) ==
        nullptr);  // no public figure measured the mgbench way: no reference
  const Json h2d{{"direction", "h2d"}, {"memory", "pinned"}, {"numa", "local"},
                 {"timing", "device"}, {"cache", "cold"}, {"bytes", 1073741824}};
  CHECK(mgbench::find_expected_range(h200, "h2d", "GBps_per_gpu", h2d, 1) != nullptr);
  CHECK(mgbench::find_expected_range(h200, "h2d", "GBps_per_gpu", h2d, 2) == nullptr);
}

TEST_CASE("a model's row in words says 'no reference' where the documents say nothing",
          "[gpu_models]") {
  const auto lines = mgbench::gpu_model_lines(row("GH200 96GB HBM3"));
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  CHECK(contains(all, "bf16 989.4"));
  CHECK(contains(all, "host link: NVLink-C2C"));
  CHECK(contains(all, "power: no reference"));
  CHECK(contains(all, "GPU-to-GPU: no reference"));
  CHECK(contains(all, "source: NVIDIA GH200"));
  const auto l40s = mgbench::gpu_model_lines(row("L40S 48GB"));
  CHECK(contains(l40s.front(), "fp64 no reference"));
  CHECK(contains(l40s.at(3), "GPU-to-GPU: none"));
  const Json j = mgbench::gpu_model_json(row("H200 SXM 141GB"));
  CHECK(j["dense_tflops"]["bf16"] == Approx(989.4));
  CHECK(j["nvlink"]["links"] == 18);
  CHECK(j["pcie"]["gen"] == 5);
  CHECK_FALSE(mgbench::gpu_model_json(row("GH200 96GB HBM3")).contains("tdp_w"));
}
