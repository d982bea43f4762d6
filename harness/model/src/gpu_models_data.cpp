// Every hardware figure mgbench uses, with the document it comes from (see gpu_models.hpp).
//
// Rules for this file:
// - Dense peaks only (NVIDIA datasheets mark sparse figures with an asterisk: dense = half).
// - Bandwidths in GB/s (10^9 bytes), NVLink per direction (datasheets quote both directions).
// - A figure a document does not state is left out ("no reference"); nothing is estimated.
// - Expected ranges come from mgbench measurements only (the same method, warm-up and cache as
//   the points they judge), each with the report it comes from; `low` is 85 % of `typical`
//   (docs/METHODOLOGY.md, "Peak, % of peak and expected range").
#include "mgbench/model/gpu_models.hpp"

namespace mgbench {
namespace {

// Dense peaks shared by the GH100 parts at the SXM5 clocks (H100 SXM5, H200 SXM, GH200).
const std::map<std::string, double> kHopperSxmPeaks = {
    {"fp64", 33.5}, {"fp64_tensor", 66.9}, {"fp32", 66.9},     {"tf32", 494.7},
    {"bf16", 989.4}, {"fp16", 989.4},      {"fp8", 1978.9}};
// The NVL (PCIe card) parts: half the datasheet's sparse figures.
const std::map<std::string, double> kHopperNvlPeaks = {
    {"fp64", 30.0}, {"fp64_tensor", 60.0}, {"fp32", 60.0},     {"tf32", 417.5},
    {"bf16", 835.5}, {"fp16", 835.5},      {"fp8", 1670.5}};
const std::map<std::string, double> kAmpereGa100Peaks = {
    {"fp64", 9.7}, {"fp64_tensor", 19.5}, {"fp32", 19.5}, {"tf32", 156.0},
    {"bf16", 312.0}, {"fp16", 312.0}};
const std::map<std::string, double> kV100Sxm2Peaks = {
    {"fp64", 7.8}, {"fp32", 15.7}, {"fp16", 125.0}};
const std::map<std::string, double> kV100PciePeaks = {
    {"fp64", 7.0}, {"fp32", 14.0}, {"fp16", 112.0}};

constexpr const char* kH100Docs =
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), Table 3; NVIDIA H100 Tensor "
    "Core GPU datasheet (2023)";
constexpr const char* kH200Docs =
    "NVIDIA H200 Tensor Core GPU datasheet (2024); dense peaks as the H100 SXM5 in the NVIDIA "
    "H100 Tensor Core GPU Architecture whitepaper (2022)";
constexpr const char* kGh200Docs =
    "NVIDIA GH200 Grace Hopper Superchip datasheet (2024); dense peaks as the H100 SXM5 in the "
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022); its power figure covers CPU "
    "and memory too, so no TDP here";
constexpr const char* kA100Docs =
    "NVIDIA A100 Tensor Core GPU datasheet (2021); NVIDIA A100 Tensor Core GPU Architecture "
    "whitepaper (2020)";
constexpr const char* kV100Docs =
    "NVIDIA V100 Tensor Core GPU datasheet (2020); NVIDIA Tesla V100 GPU Architecture "
    "whitepaper (2017)";

std::vector<GpuModel> hopper_and_blackwell() {
  return {
      GpuModel("H100 SXM5 80GB", {"NVIDIA H100 80GB HBM3"}, 80)
          .peaks(kHopperSxmPeaks).memory_bandwidth(3350).pcie(5, 16).nvlink(4, 18, 450)
          .tdp(700).bound().from(kH100Docs),
      GpuModel("H100 PCIe 80GB", {"NVIDIA H100 PCIe"}, 80)
          .peaks({{"fp64", 25.6}, {"fp64_tensor", 51.2}, {"fp32", 51.2}, {"tf32", 378.0},
                  {"bf16", 756.0}, {"fp16", 756.0}, {"fp8", 1513.0}})
          .memory_bandwidth(2000).pcie(5, 16).nvlink(4, 0, 300).tdp(350).from(kH100Docs),
      GpuModel("H100 NVL 94GB", {"NVIDIA H100 NVL"}, 94)
          .peaks(kHopperNvlPeaks).memory_bandwidth(3900).pcie(5, 16).nvlink(4, 0, 300)
          .tdp(400).from("NVIDIA H100 Tensor Core GPU datasheet (2024), H100 NVL column"),
      GpuModel("H200 SXM 141GB", {"NVIDIA H200"}, 141)
          .peaks(kHopperSxmPeaks).memory_bandwidth(4800).pcie(5, 16).nvlink(4, 18, 450)
          .tdp(700).bound().from(kH200Docs),
      GpuModel("H200 NVL 141GB", {"NVIDIA H200 NVL"}, 141)
          .peaks(kHopperNvlPeaks).memory_bandwidth(4800).pcie(5, 16).nvlink(4, 0, 450)
          .tdp(600).from("NVIDIA H200 Tensor Core GPU datasheet (2024), H200 NVL column"),
      GpuModel("H20 96GB", {"NVIDIA H20"}, 96)
          .peaks({{"fp32", 44.0}, {"tf32", 74.0}, {"bf16", 148.0}, {"fp16", 148.0},
                  {"fp8", 296.0}})
          .memory_bandwidth(4000).pcie(5, 16).nvlink(4, 0, 450).tdp(400)
          .from("NVIDIA H20 specification as published by NVIDIA's system partners (2024); "
                "NVIDIA publishes no H20 datasheet, and these figures are dense as stated there"),
      GpuModel("GH200 96GB HBM3", {"NVIDIA GH200 480GB"}, 96)
          .peaks(kHopperSxmPeaks).memory_bandwidth(4000).c2c_host().bound().from(kGh200Docs),
      GpuModel("GH200 144GB HBM3e", {"NVIDIA GH200 144G HBM3e"}, 144)
          .peaks(kHopperSxmPeaks).memory_bandwidth(4900).c2c_host().bound().from(kGh200Docs),
      GpuModel("B200 180GB", {"NVIDIA B200"}, 180)
          .peaks({{"fp64", 37.0}, {"fp64_tensor", 37.0}, {"fp32", 75.0}, {"tf32", 1100.0},
                  {"bf16", 2250.0}, {"fp16", 2250.0}, {"fp8", 4500.0}})
          .memory_bandwidth(7700).pcie(5, 16).nvlink(5, 18, 900).tdp(1000)
          .from("NVIDIA HGX B200 specifications (2025), per-GPU column"),
  };
}

std::vector<GpuModel> ampere_ada_volta() {
  return {
      GpuModel("A100 SXM4 40GB", {"NVIDIA A100-SXM4-40GB"}, 40)
          .peaks(kAmpereGa100Peaks).memory_bandwidth(1555).pcie(4, 16).nvlink(3, 12, 300)
          .tdp(400).bound().from(kA100Docs),
      GpuModel("A100 SXM4 80GB", {"NVIDIA A100-SXM4-80GB"}, 80)
          .peaks(kAmpereGa100Peaks).memory_bandwidth(2039).pcie(4, 16).nvlink(3, 12, 300)
          .tdp(400).bound().from(kA100Docs),
      GpuModel("A100 PCIe 40GB", {"NVIDIA A100-PCIE-40GB"}, 40)
          .peaks(kAmpereGa100Peaks).memory_bandwidth(1555).pcie(4, 16).nvlink(3, 0, 300)
          .tdp(250).bound().from(kA100Docs),
      GpuModel("A100 PCIe 80GB", {"NVIDIA A100 80GB PCIe"}, 80)
          .peaks(kAmpereGa100Peaks).memory_bandwidth(1935).pcie(4, 16).nvlink(3, 0, 300)
          .tdp(300).bound().from(kA100Docs),
      GpuModel("A10 24GB", {"NVIDIA A10"}, 24)
          .peaks({{"fp32", 31.2}, {"tf32", 62.5}, {"bf16", 125.0}, {"fp16", 125.0}})
          .memory_bandwidth(600).pcie(4, 16).nvlink(0, 0, 0).tdp(150)
          .from("NVIDIA A10 Tensor Core GPU datasheet (2021)"),
      GpuModel("L40S 48GB", {"NVIDIA L40S"}, 48)
          .peaks({{"fp32", 91.6}, {"tf32", 183.0}, {"bf16", 362.05}, {"fp16", 362.05},
                  {"fp8", 733.0}})
          .memory_bandwidth(864).pcie(4, 16).nvlink(0, 0, 0).tdp(350)
          .from("NVIDIA L40S GPU datasheet (2023)"),
      GpuModel("L4 24GB", {"NVIDIA L4"}, 24)
          .peaks({{"fp32", 30.3}, {"tf32", 60.0}, {"bf16", 121.0}, {"fp16", 121.0},
                  {"fp8", 242.5}})
          .memory_bandwidth(300).pcie(4, 16).nvlink(0, 0, 0).tdp(72)
          .from("NVIDIA L4 Tensor Core GPU datasheet (2023)"),
      GpuModel("RTX 6000 Ada 48GB", {"NVIDIA RTX 6000 Ada Generation"}, 48)
          .peaks({{"fp32", 91.1}, {"tf32", 182.1}, {"bf16", 364.2}, {"fp16", 364.2},
                  {"fp8", 728.5}})
          .memory_bandwidth(960).pcie(4, 16).nvlink(0, 0, 0).tdp(300)
          .from("NVIDIA RTX 6000 Ada Generation datasheet (2022); NVIDIA Ada GPU Architecture "
                "whitepaper (2023)"),
      GpuModel("GeForce RTX 4090 24GB", {"NVIDIA GeForce RTX 4090"}, 24)
          .peaks({{"fp32", 82.6}, {"tf32", 82.6}, {"bf16", 165.2}, {"fp16", 165.2},
                  {"fp8", 330.3}})
          .memory_bandwidth(1008).pcie(4, 16).nvlink(0, 0, 0).tdp(450)
          .from("NVIDIA Ada GPU Architecture whitepaper (2023), GeForce RTX 4090 column, "
                "tensor figures with FP32 accumulation"),
      GpuModel("V100 SXM2 16GB", {"Tesla V100-SXM2-16GB"}, 16)
          .peaks(kV100Sxm2Peaks).memory_bandwidth(900).pcie(3, 16).nvlink(2, 6, 150).tdp(300)
          .bound().from(kV100Docs),
      GpuModel("V100 SXM2 32GB", {"Tesla V100-SXM2-32GB"}, 32)
          .peaks(kV100Sxm2Peaks).memory_bandwidth(900).pcie(3, 16).nvlink(2, 6, 150).tdp(300)
          .bound().from(kV100Docs),
      GpuModel("V100 PCIe 16GB", {"Tesla V100-PCIE-16GB"}, 16)
          .peaks(kV100PciePeaks).memory_bandwidth(900).pcie(3, 16).nvlink(0, 0, 0).tdp(250)
          .bound().from(kV100Docs),
      GpuModel("V100 PCIe 32GB", {"Tesla V100-PCIE-32GB"}, 32)
          .peaks(kV100PciePeaks).memory_bandwidth(900).pcie(3, 16).nvlink(0, 0, 0).tdp(250)
          .bound().from(kV100Docs),
      GpuModel("V100S PCIe 32GB", {"Tesla V100S-PCIE-32GB"}, 32)
          .peaks({{"fp64", 8.2}, {"fp32", 16.4}, {"fp16", 130.0}})
          .memory_bandwidth(1134).pcie(3, 16).nvlink(0, 0, 0).tdp(250).bound()
          .from("NVIDIA V100S Tensor Core GPU datasheet (2019)"),
  };
}

// ---- expected ranges ----------------------------------------------------------------------

constexpr const char* kH200Example =
    "mgbench reports/examples/h200-1gpu (sweep --profile quick, 1 x H200 at its default 700 W "
    "limit, PCIe gen5 x16; 2026)";

// `low`: 85 % of the typical figure (docs/METHODOLOGY.md).
ExpectedRange usual(std::string model, std::string workload, std::string metric, Params params,
                    std::vector<std::pair<std::string, double>> at_least, int gpus,
                    double typical, std::string what, std::string source) {
  ExpectedRange r;
  r.model = std::move(model);
  r.workload = std::move(workload);
  r.metric = std::move(metric);
  r.params = std::move(params);
  r.at_least = std::move(at_least);
  r.gpus = gpus;
  r.low = 0.85 * typical;
  r.typical = typical;
  r.what = std::move(what);
  r.source = std::move(source);
  return r;
}

std::vector<ExpectedRange> ranges() {
  const std::vector<std::pair<std::string, double>> gemm_4096 = {
      {"m", 4096}, {"n", 4096}, {"k", 4096}};
  const Params gemm_way{{"impl", "cublas"}, {"timing", "host"}, {"cache", "cold"}};
  const auto gemm = [&](const char* dtype) {
    Params p = gemm_way;
    p.set("dtype", dtype);
    return p;
  };
  const auto membw = [](const char* impl) {
    return Params{{"impl", impl}, {"timing", "device"}, {"cache", "cold"}};
  };
  const auto h2d = [](const char* direction) {
    return Params{{"direction", direction}, {"memory", "pinned"}, {"numa", "local"},
                {"timing", "device"}, {"cache", "cold"}};
  };
  const char* h200 = "H200 SXM 141GB";
  return {
      usual(h200, "gemm", "tflops_per_gpu", gemm("bf16"), gemm_4096, 0, 685.2,
            "cuBLAS bf16 GEMM, M = N = K >= 4096", kH200Example),
      usual(h200, "gemm", "tflops_per_gpu", gemm("fp32"), gemm_4096, 0, 50.15,
            "cuBLAS fp32 GEMM, M = N = K >= 4096", kH200Example),
      usual(h200, "membw", "GBps_per_gpu", membw("copy"), {{"bytes", 1073741824}}, 0, 3919.0,
            "HBM copy kernel, arrays >= 1 GiB", kH200Example),
      usual(h200, "membw", "GBps_per_gpu", membw("triad"), {{"bytes", 1073741824}}, 0, 4070.5,
            "HBM triad kernel, arrays >= 1 GiB", kH200Example),
      usual(h200, "membw", "GBps_per_gpu", membw("memcpy"), {{"bytes", 1073741824}}, 0, 4254.3,
            "device-to-device cudaMemcpyAsync, arrays >= 1 GiB", kH200Example),
      usual(h200, "h2d", "GBps_per_gpu", h2d("h2d"), {{"bytes", 268435456}}, 1, 55.48,
            "pinned host-to-device copies on one GPU, >= 256 MiB", kH200Example),
      usual(h200, "h2d", "GBps_per_gpu", h2d("d2h"), {{"bytes", 268435456}}, 1, 55.30,
            "pinned device-to-host copies on one GPU, >= 256 MiB", kH200Example),
  };
}

// ---- links ----------------------------------------------------------------------------------

constexpr const char* kPcieDocs =
    "PCI Express Base Specification revisions 1.0 to 6.0 (2002-2022): transfer rate per lane "
    "and line coding (8b/10b to gen2, 128b/130b gen3 to gen5, 242/256 FLIT gen6)";

std::vector<LinkGeneration> links() {
  return {
      {"PCIe", 1, 2.5 * 8.0 / 10.0 / 8.0, kPcieDocs},
      {"PCIe", 2, 5.0 * 8.0 / 10.0 / 8.0, kPcieDocs},
      {"PCIe", 3, 8.0 * 128.0 / 130.0 / 8.0, kPcieDocs},
      {"PCIe", 4, 16.0 * 128.0 / 130.0 / 8.0, kPcieDocs},
      {"PCIe", 5, 32.0 * 128.0 / 130.0 / 8.0, kPcieDocs},
      {"PCIe", 6, 64.0 * 242.0 / 256.0 / 8.0, kPcieDocs},
      {"NVLink", 1, 20.0, "NVIDIA Tesla P100 whitepaper (2016): 4 links, 160 GB/s both ways"},
      {"NVLink", 2, 25.0, "NVIDIA Tesla V100 GPU Architecture whitepaper (2017): 6 links, "
                          "300 GB/s both ways"},
      {"NVLink", 3, 25.0, "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 12 links, "
                          "600 GB/s both ways"},
      {"NVLink", 4, 25.0, "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 18 links, "
                          "900 GB/s both ways"},
      {"NVLink", 5, 50.0, "NVIDIA Blackwell Architecture Technical Brief (2024): 18 links, "
                          "1.8 TB/s both ways"},
  };
}

}  // namespace

const std::vector<GpuModel>& gpu_models() {
  static const std::vector<GpuModel> all = [] {
    std::vector<GpuModel> out = hopper_and_blackwell();
    for (GpuModel& m : ampere_ada_volta()) out.push_back(std::move(m));
    return out;
  }();
  return all;
}

const std::vector<ExpectedRange>& expected_ranges() {
  static const std::vector<ExpectedRange> all = ranges();
  return all;
}

const std::vector<LinkGeneration>& link_generations() {
  static const std::vector<LinkGeneration> all = links();
  return all;
}

int nvlink_generation_of(int cc_major, int cc_minor) {
  switch (cc_major) {
    case 6: return cc_minor == 0 ? 1 : 0;  // P100; the other Pascal parts have none
    case 7: return 2;                      // V100, Turing boards with bridges
    case 8: return 3;                      // A100 (A10/A40/RTX bridges run slower links)
    case 9: return 4;                      // H100, H200
    case 10: return 5;                     // B200, B300
    default: return 0;
  }
}

}  // namespace mgbench
