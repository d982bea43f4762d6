#pragma once
// The GPU models mgbench knows, as data with the document each row comes from
// (gpu_models_data.cpp, the one file that holds every hardware figure): what a model can do on
// paper (dense peak TFLOP/s per dtype, memory size and bandwidth, host link, NVLink, power), the
// rates of each PCIe and NVLink generation, and the expected ranges (what a healthy GPU of a
// model reaches in an mgbench measurement, where a public figure exists). A figure the
// documents do not give is absent ("no reference"), never estimated.
//
// A GPU is matched by its NVML/CUDA name (exact, case-insensitive, with or without the leading
// "NVIDIA " or "Tesla ") and its memory size (within 12 % of the row's), so variants that share
// a name but not the memory are told apart, and a name mgbench does not know is "unknown
// model": no datasheet figure, no percentage that needs one.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

struct GpuModel {
  std::string id;                  // "H200 SXM 141GB"
  std::vector<std::string> names;  // NVML/CUDA names, e.g. "NVIDIA H200"
  double memory_gb = 0;            // as the datasheet states it
  // Dense (not sparse) peaks per dtype: fp64, fp64_tensor, fp32, tf32, bf16, fp16, fp8 (fp8
  // with FP32 accumulation, bf16/fp16 with FP32 accumulation, as the GEMM computes).
  std::map<std::string, double> tflops;
  double memory_GBps = 0;  // memory bandwidth; 0: no reference
  // PCIe generation and width of the host link; 0: none (host_c2c) or no reference.
  unsigned pcie_gen = 0, pcie_width = 0;
  bool host_c2c = false;  // host attached over NVLink-C2C (Grace), no PCIe host link
  int nvlink_gen = -1;      // 0: no NVLink; -1: no reference
  int nvlink_links = 0;     // 0: no reference (NVML says how many are up)
  double nvlink_GBps = 0;   // per GPU, one direction, all links
  double tdp_w = 0;                      // maximum board power; 0: no reference
  // True where the dense peaks are quoted at the part's highest clock, so that a measured value
  // above them cannot come from the hardware (the impossible-value flag uses them only then).
  bool peaks_bound = false;
  std::string source;  // document names and years

  GpuModel(std::string id, std::vector<std::string> names, double memory_gb);
  GpuModel& peaks(std::map<std::string, double> dense_tflops);
  GpuModel& memory_bandwidth(double GBps);
  GpuModel& pcie(unsigned gen, unsigned width);
  GpuModel& c2c_host();
  GpuModel& nvlink(int gen, int links, double GBps_per_direction);
  GpuModel& tdp(double watts);
  GpuModel& bound();
  GpuModel& from(std::string documents);
};

// One generation of a link: PCIe (GB/s per lane and direction, after line coding) or NVLink
// (GB/s per link and direction).
struct LinkGeneration {
  std::string link;  // "PCIe", "NVLink"
  int generation = 0;
  double GBps = 0;
  std::string source;
};

// What a healthy GPU of a model reaches for one metric in an mgbench measurement: `low` is the
// lowest value still usual, `typical` the measured one; a point qualifies when its workload and
// metric match, every parameter in `params` has that value and every one in `at_least` is at
// least that (sizes). `gpus` 0: any GPU count.
struct ExpectedRange {
  std::string model;  // GpuModel::id
  std::string workload, metric;
  Params params;
  std::vector<std::pair<std::string, double>> at_least;
  int gpus = 0;
  double low = 0, typical = 0;
  std::string what;    // "cuBLAS bf16 GEMM, M = N = K >= 4096"
  std::string source;  // the measurement: document, or report in this repository, and year
};

const std::vector<GpuModel>& gpu_models();
const std::vector<LinkGeneration>& link_generations();
const std::vector<ExpectedRange>& expected_ranges();
// The NVLink generation of a compute capability (1: 6.0, 2: 7.x, 3: 8.0, 4: 9.0, 5: 10.x); 0
// for an architecture without NVLink or not listed.
int nvlink_generation_of(int cc_major, int cc_minor);

// The row of a GPU, nullptr for an unknown model. `memory_bytes` 0: the name alone decides
// (only when exactly one row has it).
const GpuModel* match_gpu_model(const std::string& name, std::uint64_t memory_bytes);
// The dense peak of `dtype` ("fp8", "e4m3" and "e5m2" are the same), 0 when the row has none.
double model_tflops(const GpuModel& model, const std::string& dtype);
// The expected range of a point of `model`, nullptr when no public figure exists.
const ExpectedRange* find_expected_range(const GpuModel& model, const std::string& workload,
                                         const std::string& metric, const Params& params,
                                         int gpus);

// The row as shown by `mgbench info` and stored with a run (figures absent where unknown).
Json gpu_model_json(const GpuModel& model);
// One line per figure, in words ("bf16: 989.4 TFLOP/s dense"), for `mgbench info`.
std::vector<std::string> gpu_model_lines(const GpuModel& model);

}  // namespace mgbench
