#pragma once
// The NCCL collectives' arithmetic, shared by the workloads (allreduce, allgather, reducescatter,
// alltoall, broadcast, reduce, sendrecv), their summaries and the tests (no CUDA): nccl-tests'
// sizes and bus-bandwidth factors, what a single rank means, the buffers and the exact expected
// output of every rank, point expansion per GPU count and the large-message plateau summary.
//
// Sizes as nccl-tests prints them in its `size` column (src/<collective>.cu, getCollByteCount):
// the `bytes` parameter is that total. For all-gather, reduce-scatter and all-to-all it is
// split over the n ranks: NCCL's count argument is bytes / element / n (all-gather: what each
// rank sends, reduce-scatter: what each rank receives, all-to-all: what each rank sends to each
// peer), and the size really moved is count x n x element. nccl-tests also rounds each rank's
// share down to 16 bytes; mgbench rounds to whole elements only, so that odd sizes stay
// testable: both agree whenever the size is a multiple of 16 n bytes (every default size from
// 16 n bytes up). For broadcast, reduce and send/recv the count is bytes / element.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/bench/collective_kind.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/kernels/collective_check.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench::collective {

// A size parameter's value (an integer, or a size string such as "64M"); UsageError when
// negative or not a size.
std::uint64_t bytes_of(const ParamValue& value);
// The values chosen for axis `name`, `fallback` when it has none.
const std::vector<ParamValue>& values_of(const AxisValues& values, const std::string& name,
                                         const std::vector<ParamValue>& fallback);

// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): all-reduce 2(n-1)/n; all-gather,
// reduce-scatter and all-to-all (n-1)/n; broadcast, reduce and send/recv 1. 0 on one rank (no
// bus: busbw is undefined there).
double busbw_factor(Kind kind, int nranks);
// Whether the total divides over the ranks (all-gather, reduce-scatter, all-to-all).
bool splits_over_ranks(Kind kind);
// Whether the collective sums (its inputs use the narrow range).
bool reduces(Kind kind);
// Whether an in-place variant exists (NCCL defines none for all-to-all and send/recv: a rank
// would overwrite what it still has to send).
bool has_inplace(Kind kind);
// Whether the collective has a root (broadcast, reduce).
bool has_root(Kind kind);

// NCCL's count argument for `bytes` of `element_bytes` elements on n ranks (0: less than one
// element per rank), and the bytes really moved (nccl-tests' size).
std::uint64_t nccl_count(Kind kind, std::uint64_t bytes, std::size_t element_bytes, int nranks);
std::uint64_t moved_bytes(Kind kind, std::uint64_t count, std::size_t element_bytes, int nranks);

// Why a point is waived ("" when it runs). One rank in place moves nothing (NCCL returns at
// once) for every collective that has an in-place variant; out of place one rank copies its
// input to its output, which is measured (algbw is the copy's, busbw undefined).
std::string waiver(Kind kind, int nranks, bool inplace);

// {"time_us", "algbw_GBps", "busbw_GBps" (absent on one rank), "count"} for the headline
// seconds per op, with "size_bytes" (the bytes moved) where they differ from `bytes`.
Json metrics(Kind kind, std::uint64_t bytes, const std::string& dtype, int nranks, double seconds);

// One rank's buffers and checks, in elements of the point's dtype.
struct RankLayout {
  std::uint64_t count = 0;       // NCCL's count argument
  std::uint64_t send_count = 0;  // elements of the send buffer
  std::uint64_t recv_count = 0;  // elements of the receive buffer
  // In place: one buffer of max(send, recv) elements; the send and receive buffers start at
  // these offsets in it (all-gather: the rank's slot is its input; reduce-scatter: its output).
  std::uint64_t send_offset = 0, recv_offset = 0;
  kernels::FillPattern input;       // what the send buffer holds
  bool input_used = true;           // whether NCCL reads it (broadcast: the root's only)
  kernels::ExpectedPattern expected;  // what the receive buffer must hold
  bool checked = true;              // whether NCCL writes it (reduce: the root's only)
};
RankLayout rank_layout(Kind kind, int rank, int nranks, std::uint64_t count, int root);

// Axis value "all" of the root axis: one point per rank of the group.
inline constexpr const char* kAllRoots = "all";
// The roots of a group of `gpus` for one root axis value: {r} when r < gpus (else none), every
// rank for "all". UsageError for anything else.
std::vector<int> roots_of(const ParamValue& value, int gpus);

// Point expansion for a group of `gpus`: (algo, proto) outermost, so that points whose NCCL
// environment differs run in separate stretches of the group (each its own communicators), then
// dtype x inplace x bytes (x root). Rounds bytes down to whole elements and leaves out sizes
// below one element per rank; adds no count (it depends on the GPU count: a metric instead).
std::vector<Params> expand_points(Kind kind, const AxisValues& values, int gpus);

// The NCCL variables a point's communicators are created with: NCCL_ALGO and NCCL_PROTO from
// its "algo" / "proto" parameters unless they are "default" (NCCL's own choice).
std::vector<std::pair<std::string, std::string>> nccl_env(const Params& params);

// Run-level summary of one collective workload: one row per GPU count, measurement method and
// value of `keys` (parameters, in order; a key absent from a point, or equal to the value given
// with it, is left out of the row) with the median busbw over the ok points of >= 64 MiB:
//   [{"gpus", <keys>..., "plateau_busbw_GBps", "sizes": [bytes...], "measured"}, ...]
// sorted by gpus, then the keys' values. Rows without such sizes are left out.
inline constexpr std::uint64_t kPlateauMinBytes = std::uint64_t{64} << 20;
struct SummaryKey {
  std::string param;
  std::string omit_when;  // the row leaves the key out when the value is this ("" : never)
};
Json plateau_summary(const std::string& workload, const std::vector<SummaryKey>& keys,
                     const std::vector<PointResult>& points);

}  // namespace mgbench::bench::collective
