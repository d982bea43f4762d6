// p2p: GPU <-> GPU bandwidth and latency between every pair of the group, through the copy
// engines and through SM loads and stores over peer access.
//
// Measured (n GPUs, `bytes` per copy; every rank holds a source and one inbox per other rank):
//   engine=ce   cudaMemcpyAsync (copy engines, unified addressing) from the sender's source
//               into its inbox on the receiver.
//   engine=sm   the own copy kernel (kernels/datapath.hpp) on the sender: local 16-byte loads,
//               stores straight into the receiver's memory through peer access.
//   Headline op: ranks pair up (0,1), (2,3), ...; with direction=uni the even rank of each pair
//   sends, with bidir both send at once; every pair at the same time (an odd last rank idles).
//   Matrix (after the samples, every ordered pair alone): bandwidth of i -> j (bidir: i <-> j
//   at once, both directions counted), median of 5 copies; latency of i -> j: engine=ce the
//   time of one 4-byte copy-engine copy (mean of 20 back to back), engine=sm the time of one
//   dependent 4-byte load by GPU i from GPU j's memory (a chase of 2000 loads through a
//   shuffled cycle of 256-byte-spaced slots, volatile so that L1 does not serve it).
// Formulas (t = the slowest rank's median seconds per op):
//   GB/s per pair = bytes (uni) or 2 x bytes (bidir) / t / 1e9;  aggregate = pairs x per pair.
//   Matrix: GB/s = bytes (x2 bidir) / t_ij / 1e9;  latency_us = t_ij / ops x 1e6.
// Metrics add the matrix's min, median and max GB/s and its median latency; the run summary
// lists the pair matrix of the largest group.
// Waived: one GPU in the group (no pair), or a pair without peer access (the reason names it).
// Verification on every point: every source set holds a hashed word pattern of its rank and
// set, every inbox set is poisoned in setup; after the matrix (and, with several sets, one
// more copy of every set to every rank) each inbox set is compared word by word with its
// sender's pattern, and each chase must end on the slot the host computes.
// Timing: default device (every pair starts together behind the gate); host and graph allowed.
// Cache: default cold: sources and inboxes rotate through sets larger than twice L2, the same
// set count on every rank (one set at the default sizes).
// GB/s per pair and of the matrix above the GPU-to-GPU link (NVLink links up x the per-link
// rate of the generation, else PCIe gen x width; x2 for bidir) are flagged impossible; ranks
// sharing a GPU, or unknown links, are not checked.
// Profiles: quick = both engines, uni, 64 MiB; standard = both engines, both directions,
// 256 MiB; full adds 1 GiB.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "datapath/datapath_math.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/executor.hpp"
#include "mgbench/bench/peer_access.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/kernels/datapath.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench {

namespace {

constexpr std::uint32_t kSeed = 0x70327000u;
constexpr std::uint32_t kChainSlots = 16384;  // x 256 B = 4 MiB
constexpr std::uint32_t kChainStride = 64;    // words: 256 B between slots
constexpr std::uint32_t kChaseSteps = 2000;
constexpr int kCopyLatencyOps = 20;
constexpr int kMatrixSamples = 5;
constexpr std::uint64_t kSetupOk = 1, kSetupOom = 2, kSetupFailed = 3, kSetupNoPeerAccess = 4;
constexpr std::size_t kWordsAlign = 64;  // sets start 256-byte aligned

void* encode(std::uint64_t value) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(value)); }
std::uint64_t decode(void* value) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(value));
}

struct P2pParams {
  bool sm;
  std::string direction;
  std::size_t words;
};

enum class Engine { ce, sm };

P2pParams p2p_params(const Params& p) {
  const Engine engine = p.choice<Engine>("engine", {{"ce", Engine::ce}, {"sm", Engine::sm}});
  P2pParams q{engine == Engine::sm, p.text("direction"), 0};
  (void)datapath::p2p_pairs(2, q.direction);  // validates the direction
  const auto bytes = p.integer("bytes");
  if (bytes < 16) throw UsageError("p2p needs bytes >= 16");
  q.words = static_cast<std::size_t>(bytes) / 4;
  return q;
}

class P2pPoint final : public RankPoint {
 public:
  explicit P2pPoint(RankEnv& env) : env_(env), p_(p2p_params(*env.params)) {
    if (env.nranks < 2) {
      throw WaivedError("the p2p matrix needs at least 2 GPUs (this group has one)");
    }
    if (!env.ranks_share_process()) {
      throw WaivedError("the p2p matrix copies between the ranks' buffers: it needs every rank "
                        "in one process (--launcher local)");
    }
    // Every rank runs the same collectives in the same order, whatever fails locally.
    for (void* slot : env_.all_gather_ptr(encode(static_cast<std::uint64_t>(env.device)))) {
      devices_.push_back(static_cast<int>(decode(slot)));
    }
    const std::string unproven = datapath::p2p_graph_waiver(devices_, p_.sm,
                                                            env.timing == TimingMethod::graph);
    if (!unproven.empty()) throw WaivedError(unproven);  // the same on every rank
    plan_rotation_with_peers();
    std::string waive;
    std::exception_ptr error;
    std::uint64_t code = kSetupOk;
    try {
      waive = missing_peer_access(devices_, "the p2p matrix");
      if (waive.empty()) waive = enable_peer_access(env.device, devices_);
      if (waive.empty()) {
        allocate();
      } else {
        code = kSetupNoPeerAccess;
      }
    } catch (const OutOfMemoryError&) {
      error = std::current_exception();
      code = kSetupOom;
    } catch (...) {
      error = std::current_exception();
      code = kSetupFailed;
    }
    const auto codes = env_.all_gather_ptr(encode(code));
    if (!waive.empty()) throw WaivedError(waive);
    if (error) std::rethrow_exception(error);
    for (int r = 0; r < env_.nranks; ++r) {
      const auto c = decode(codes[r]);
      if (c == kSetupNoPeerAccess) {
        throw WaivedError(fmt::format("rank {} cannot use peer access, which the p2p matrix needs",
                                      r));
      }
      if (c == kSetupOom) {
        throw OutOfMemoryError("cuda", 2, "cudaErrorMemoryAllocation", "p2p setup", "", r,
                               fmt::format("rank {} ran out of device memory", r));
      }
      if (c != kSetupOk) throw EnvironmentError(fmt::format("rank {} failed its p2p setup", r));
    }
    exchange();
  }

  void enqueue() override {
    for (const auto& [from, to] : datapath::p2p_pairs(env_.nranks, p_.direction)) {
      if (from == env_.rank) send(to, next_set_);
    }
    advance();
  }

  Verification verify() override;
  Json rank_details() override;

 private:
  void plan_rotation_with_peers();
  void allocate();
  void exchange();
  void send(int to, std::size_t set);
  void send_word(int to);
  void fill_every_set();
  void advance() { next_set_ = (next_set_ + 1) % rotation_.sets; }
  std::uint32_t seed(int rank, std::size_t set) const {
    return kSeed + static_cast<std::uint32_t>(rank) + static_cast<std::uint32_t>(set) * 0x10000u;
  }
  std::uint32_t* src(std::size_t set) const { return src_.as<std::uint32_t>() + set * stride_; }
  void measure_matrix();
  std::uint64_t count_wrong_inboxes();

  RankEnv env_;
  P2pParams p_;
  std::vector<int> devices_;
  std::size_t stride_ = 0;  // words between the sets of the rotation
  Rotation rotation_;       // the same number of sets on every rank
  std::size_t next_set_ = 0;
  DeviceBuffer src_, chain_, end_, counter_;
  std::vector<DeviceBuffer> inbox_;      // indexed by sender (own slot empty)
  std::vector<void*> inbox_ptrs_;        // the same pointers, published to the peers
  std::vector<void*> remote_inbox_;      // my inbox on each receiver
  std::vector<const std::uint32_t*> remote_chain_;
  std::uint32_t expected_end_ = 0;
  Json bw_ = Json::array(), latency_ = Json::array();
  std::uint64_t chase_wrong_ = 0;
};

// cache=cold: every op uses the next of a rotation of sets (this rank's source and its inbox
// from every other rank), more than twice L2 in all. A sender writes set k of the receiver's
// inbox, so every rank takes the smallest set count any rank can hold (collective).
void P2pPoint::plan_rotation_with_peers() {
  stride_ = (p_.words + kWordsAlign - 1) / kWordsAlign * kWordsAlign;
  rotation_ = env_.agreed_rotation(stride_ * 4 * static_cast<std::size_t>(env_.nranks));
}

void P2pPoint::allocate() {
  MGBENCH_CUDA_CHECK(cudaSetDevice(env_.device));
  const std::size_t bytes = stride_ * 4 * rotation_.sets;
  src_ = DeviceBuffer(bytes);
  for (std::size_t set = 0; set < rotation_.sets; ++set) {
    MGBENCH_CUDA_CHECK(kernels::fill_pattern(src(set), p_.words, seed(env_.rank, set),
                                             env_.stream));
  }
  inbox_.resize(static_cast<std::size_t>(env_.nranks));
  inbox_ptrs_.assign(static_cast<std::size_t>(env_.nranks), nullptr);
  for (int s = 0; s < env_.nranks; ++s) {
    if (s == env_.rank) continue;
    inbox_[s] = DeviceBuffer(bytes);
    inbox_ptrs_[s] = inbox_[s].get();
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(inbox_[s].get(), 0xff, bytes, env_.stream));
  }
  const auto chain = datapath::chase_chain(kChainSlots, kChainStride, kSeed);
  expected_end_ = datapath::chase_end(chain, kChaseSteps);
  chain_ = DeviceBuffer(chain.size() * sizeof(std::uint32_t));
  MGBENCH_CUDA_CHECK(cudaMemcpyAsync(chain_.get(), chain.data(), chain_.bytes(),
                                     cudaMemcpyHostToDevice, env_.stream));
  end_ = DeviceBuffer(sizeof(std::uint32_t));
  counter_ = DeviceBuffer(sizeof(unsigned long long));
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
}

// Ranks are threads of one process: each publishes the address of its inbox table.
void P2pPoint::exchange() {
  const auto tables = env_.all_gather_ptr(&inbox_ptrs_);
  const auto chains = env_.all_gather_ptr(chain_.get());
  remote_inbox_.assign(static_cast<std::size_t>(env_.nranks), nullptr);
  remote_chain_.assign(static_cast<std::size_t>(env_.nranks), nullptr);
  for (int r = 0; r < env_.nranks; ++r) {
    if (r == env_.rank) continue;
    remote_inbox_[r] = (*static_cast<std::vector<void*>*>(tables[r]))[env_.rank];
    remote_chain_[r] = static_cast<const std::uint32_t*>(chains[r]);
  }
  env_.barrier();  // nobody changes its table before every rank has read it
}

void P2pPoint::send(int to, std::size_t set) {
  auto* inbox = static_cast<std::uint32_t*>(remote_inbox_[to]) + set * stride_;
  if (p_.sm) {
    MGBENCH_CUDA_CHECK(kernels::copy_words(inbox, src(set), p_.words, env_.stream));
  } else {
    // A copy-engine copy between devices through unified addressing (peer access is on);
    // unlike cudaMemcpyPeerAsync, a stream capture (timing=graph) accepts it.
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(inbox, src(set), p_.words * 4, cudaMemcpyDefault,
                                       env_.stream));
  }
}

// One latency probe from this rank to `to` (see the header comment).
void P2pPoint::send_word(int to) {
  if (p_.sm) {
    MGBENCH_CUDA_CHECK(
        kernels::chase(remote_chain_[to], kChaseSteps, end_.as<std::uint32_t>(), env_.stream));
    return;
  }
  for (int k = 0; k < kCopyLatencyOps; ++k) {
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(remote_inbox_[to], src_.get(), sizeof(std::uint32_t),
                                       cudaMemcpyDefault, env_.stream));
  }
}

// Every ordered pair alone (collective: every rank walks the same loop).
void P2pPoint::measure_matrix() {
  const int n = env_.nranks;
  const bool bidir = p_.direction == "bidir";
  const double bytes = static_cast<double>(p_.words * 4) * (bidir ? 2.0 : 1.0);
  const double ops = p_.sm ? kChaseSteps : kCopyLatencyOps;
  bw_ = Json::array();
  latency_ = Json::array();
  for (int i = 0; i < n; ++i) {
    Json bw_row = Json::array(), lat_row = Json::array();
    for (int j = 0; j < n; ++j) {
      if (i == j) {
        bw_row.push_back(nullptr);
        lat_row.push_back(nullptr);
        continue;
      }
      const int me = env_.rank;
      auto copy = [&] {
        if (me == i) send(j, next_set_);
        if (bidir && me == j) send(i, next_set_);
        advance();
      };
      auto probe = [&] {
        if (me == i) send_word(j);
        if (bidir && me == j) send_word(i);
      };
      bw_row.push_back(datapath::gbps(bytes, env_.collective_time(copy, kMatrixSamples)));
      lat_row.push_back(env_.collective_time(probe, kMatrixSamples) / ops * 1e6);
      if (p_.sm && (me == i || (bidir && me == j))) {
        std::uint32_t end = 0;
        MGBENCH_CUDA_CHECK(cudaMemcpy(&end, end_.get(), sizeof end, cudaMemcpyDeviceToHost));
        chase_wrong_ += end != expected_end_ ? 1 : 0;
      }
    }
    bw_.push_back(bw_row);
    latency_.push_back(lat_row);
  }
}

// With several sets the timed ops and the matrix need not have written each one: every rank
// sends every set to every other rank once more (collective).
void P2pPoint::fill_every_set() {
  for (std::size_t set = 0; rotation_.sets > 1 && set < rotation_.sets; ++set) {
    for (int to = 0; to < env_.nranks; ++to) {
      if (to != env_.rank) send(to, set);
    }
  }
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
}

std::uint64_t P2pPoint::count_wrong_inboxes() {
  std::uint64_t wrong = 0;
  auto* counter = counter_.as<unsigned long long>();
  for (int s = 0; s < env_.nranks; ++s) {
    if (s == env_.rank) continue;
    for (std::size_t set = 0; set < rotation_.sets; ++set) {
      MGBENCH_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), env_.stream));
      MGBENCH_CUDA_CHECK(kernels::count_pattern_mismatch(
          inbox_[s].as<std::uint32_t>() + set * stride_, p_.words, seed(s, set), counter,
          env_.stream));
      unsigned long long n = 0;
      MGBENCH_CUDA_CHECK(
          cudaMemcpyAsync(&n, counter, sizeof n, cudaMemcpyDeviceToHost, env_.stream));
      MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
      wrong += n;
    }
  }
  return wrong;
}

Verification P2pPoint::verify() {
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  try {
    measure_matrix();
    fill_every_set();
  } catch (const std::exception& e) {
    env_.fail_group(std::string("p2p matrix: ") + e.what());  // the others may wait for us
    throw;
  }
  env_.barrier();  // every sender has finished writing into this rank's inboxes
  std::uint64_t wrong = 0;
  std::exception_ptr error;
  try {
    wrong = count_wrong_inboxes();
  } catch (...) {
    error = std::current_exception();
  }
  const std::uint64_t checked = static_cast<std::uint64_t>(p_.words) *
                                static_cast<std::uint64_t>(env_.nranks - 1) *
                                static_cast<std::uint64_t>(rotation_.sets);
  // Every rank reaches this exchange exactly once: the counts of every rank's inboxes.
  const std::vector<std::uint64_t> sums = env_.sum_over_ranks(
      error ? std::vector<std::uint64_t>{} : std::vector{wrong, checked, chase_wrong_});
  if (error) std::rethrow_exception(error);
  Verification v;
  v.details["checked"] = sums[1];
  v.details["wrong"] = sums[0];
  v.details["wrong_on_rank"] = wrong;
  v.details["chase_wrong"] = sums[2];
  if (sums[0] != 0 || sums[2] != 0) {
    v.ok = false;
    v.message = fmt::format("{} inbox words differ from the sender's pattern, {} chases ended on "
                            "the wrong slot ({} and {} on rank {})",
                            sums[0], sums[2], wrong, chase_wrong_, env_.rank);
  }
  return v;
}

Json P2pPoint::rank_details() {
  const Json bw = datapath::matrix_stats(bw_);
  const Json lat = datapath::matrix_stats(latency_);
  Json metrics = Json::object();
  if (bw["median"].is_number()) {
    metrics = Json{{"matrix_min_GBps", bw["min"]},
                   {"matrix_median_GBps", bw["median"]},
                   {"matrix_max_GBps", bw["max"]},
                   {"latency_median_us", lat["median"]}};
  }
  const std::size_t peak = src_.bytes() * static_cast<std::size_t>(env_.nranks) + chain_.bytes();
  return Json{{"peak_bytes", peak},
              {"rotation", rotation_json(rotation_)},
              {"bw_matrix_GBps", bw_},
              {"latency_matrix_us", latency_},
              {"metrics", metrics}};
}

}  // namespace

// Default timing device: the start gate starts every pair's copy together, so pairs that share
// a switch or link contend as they would in a collective; host and graph time what a program
// that launches or captures its peer copies waits for. Default cache cold: a sender's source
// and a receiver's inbox smaller than L2 could stay there between ops, so small copies rotate
// through sets larger than twice L2 (one set at the default sizes). Per-pair and matrix GB/s
// above the GPU-to-GPU link (NVLink links x rate, else PCIe; x2 for bidir) are flagged.
RunnerOptions p2p_runner_options() {
  RunnerOptions options;
  options.default_timing = TimingMethod::device;
  options.default_cache = CacheMode::cold;
  for (const char* metric :
       {"GBps_per_pair", "matrix_min_GBps", "matrix_median_GBps", "matrix_max_GBps"}) {
    options.limits.emplace_back(metric, LimitKind::peer_link, "", "direction");
  }
  return options;
}

}  // namespace mgbench::bench

namespace {
// How reports show p2p: GB/s per pair of the headline op, the matrix's spread and latency, and
// the full pair matrix of the largest group as a summary table.
mgbench::Presentation p2p_presentation() {
  using namespace mgbench;
  return Presentation()
      .metric(MetricSpec("GBps_per_pair", "GB/s per pair", "GB/s")
                  .format(ValueFormat::fixed, 1)
                  .of_peak(PeakSpec::peer_link("direction")))
      .metric(MetricSpec("GBps_aggregate", "aggregate GB/s", "GB/s")
                  .format(ValueFormat::fixed, 1)
                  .of_peak(PeakSpec::same_as("GBps_per_pair")))
      .metric(MetricSpec("matrix_min_GBps", "slowest pair GB/s", "GB/s").format(ValueFormat::fixed, 1))
      .metric(MetricSpec("matrix_median_GBps", "median pair GB/s", "GB/s")
                  .format(ValueFormat::fixed, 1))
      .metric(MetricSpec("latency_median_us", "median latency", "us")
                  .format(ValueFormat::fixed, 2)
                  .better(Better::lower))
      .axis(AxisSpec("bytes", "copy size").format(ValueFormat::bytes).log2())
      .table(TableSpec()
                 .sort_by({"engine", "direction", "bytes", "gpus"})
                 .column(ColumnSpec::gpus())
                 .column(ColumnSpec::devices())
                 .column(ColumnSpec::param("engine"))
                 .column(ColumnSpec::param("direction"))
                 .column(ColumnSpec::param("bytes", "size").format(ValueFormat::bytes))
                 .column(ColumnSpec::params())
                 .column(ColumnSpec::metric("GBps_per_pair", "GB/s/pair").format(ValueFormat::fixed, 1))
                 .column(ColumnSpec::metric("matrix_min_GBps", "min pair GB/s")
                             .format(ValueFormat::fixed, 1))
                 .column(ColumnSpec::metric("matrix_median_GBps", "median pair GB/s")
                             .format(ValueFormat::fixed, 1))
                 .column(ColumnSpec::metric("latency_median_us", "latency (us)")
                             .format(ValueFormat::fixed, 2))
                 .column(ColumnSpec::verification("wrong", "#wrong", "N/A"))
                 .tail())
      .chart(ChartSpec::scaling())
      .summary(SummarySpec("", "pair matrix", "every ordered pair alone, largest group")
                   .column("engine", "engine")
                   .column("direction", "direction")
                   .column("bytes", "size", ValueFormat::bytes)
                   .column("measured", "timing, cache")
                   .column("src", "from GPU", ValueFormat::count)
                   .column("dst", "to GPU", ValueFormat::count)
                   .column("GBps", "GB/s", ValueFormat::fixed, 1)
                   .column("latency_us", "latency (us)", ValueFormat::fixed, 2));
}
}  // namespace

MGBENCH_REGISTER_WORKLOAD(
    mgbench::Workload("p2p")
        .category(mgbench::WorkloadCategory::peer)
        .summary("GPU <-> GPU bandwidth and latency matrix: copy engines (cudaMemcpyAsync between devices) "
                 "and SM stores/loads over peer access, one direction and both")
        .formulas("GB/s per pair = bytes (uni) or 2 x bytes (bidir) / t / 1e9 (t = slowest "
                  "rank's median time; pairs (0,1), (2,3)... at once); aggregate = pairs x per "
                  "pair. Matrix: each ordered pair alone; latency = one 4-byte peer copy (ce) "
                  "or one dependent remote load (sm).")
        .requirements("2 or more GPUs with peer access between every pair (else waived)")
        .axis(mgbench::Axis::text("engine", {"ce", "sm"})
                  .allowed({"ce", "sm"})
                  .describe("ce: cudaMemcpyAsync between devices (copy engines); sm: own copy kernel storing "
                            "into the peer's memory"))
        .axis(mgbench::Axis::text("direction", {"uni", "bidir"})
                  .quick({"uni"})
                  .allowed({"uni", "bidir"})
                  .describe("uni: one direction; bidir: both directions at once"))
        .axis(mgbench::Axis::size("bytes", {"268435456"})
                  .quick({"67108864"})
                  .full({"268435456", "1073741824"})
                  .describe("bytes per copy"))
        .axis(mgbench::timing_axis("device"))
        .axis(mgbench::cache_axis("cold"))
        .summarize(mgbench::bench::datapath::p2p_summary)
        .throughput("GBps_aggregate", "GB/s")
        .present(p2p_presentation())
        .estimate_seconds_per_point(3.0)
        .runner(mgbench::bench::make_runner(
            [](mgbench::bench::RankEnv& env) -> std::unique_ptr<mgbench::bench::RankPoint> {
              return std::make_unique<mgbench::bench::P2pPoint>(env);
            },
            mgbench::bench::datapath::p2p_metrics, mgbench::bench::p2p_runner_options())));
