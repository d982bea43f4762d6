// One rank of one collective point: buffers, initialisation, verification and NCCL's enqueue
// (see collective_point.hpp).
#include <cuda_bf16.h>  // before nccl.h: older NCCL headers declare ncclBfloat16 only then

#include "collectives/collective_point.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "collectives/peer_allreduce.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/collective_check.hpp"

namespace mgbench::bench {

namespace {

constexpr std::uint32_t kSeed = 0x6d676231;
// Buffer sets of a rotation start on this alignment (NCCL and the own kernels like 256).
constexpr std::size_t kSlotAlign = 256;

// The own all-reduce's kernels move 16-byte packs: every buffer region has at least 16 bytes.
std::size_t stride_of(std::uint64_t elements, std::size_t element) {
  const std::size_t bytes = std::max<std::size_t>(elements * element, 16);
  return (bytes + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
}

// A count parameter, `fallback` where the workload has no such axis (root: broadcast, reduce).
std::uint64_t param_count(const Params& p, const std::string& name, std::int64_t fallback) {
  return static_cast<std::uint64_t>(p.contains(name) ? p.integer(name) : fallback);
}

}  // namespace

ncclDataType_t nccl_datatype(kernels::DType dtype) {
  switch (dtype) {
    case kernels::DType::bf16: return ncclBfloat16;
    case kernels::DType::fp16: return ncclFloat16;
    case kernels::DType::int32: return ncclInt32;
    default: return ncclFloat32;
  }
}

CollectivePoint::CollectivePoint(RankEnv& env, collective::Kind kind) : env_(env), kind_(kind) {
  const Params& p = *env.params;
  dtype_ = reduce_dtype_from_string(p.text("dtype"));
  element_ = kernels::dtype_size(dtype_);
  inplace_ = p.contains("inplace") && p.boolean("inplace");
  root_ = static_cast<int>(param_count(p, "root", 0));
  const std::uint64_t count = collective::nccl_count(
      kind, static_cast<std::uint64_t>(p.integer("bytes")), element_, env.nranks);
  if (count == 0) throw UsageError("the point's size is less than one element per rank");
  layout_ = collective::rank_layout(kind, env.rank, env.nranks, count, root_);
  if (inplace_) {
    send_stride_ = stride_of(std::max(layout_.send_count, layout_.recv_count), element_);
  } else {
    send_stride_ = stride_of(layout_.send_count, element_);
    recv_stride_ = stride_of(layout_.recv_count, element_);
  }
  // Every rank the same number of sets: the verification runs one op per set.
  rotation_ = env.agreed_rotation(send_stride_ + recv_stride_);
  send_ = DeviceBuffer(send_stride_ * rotation_.sets);
  if (!inplace_) recv_ = DeviceBuffer(recv_stride_ * rotation_.sets);
  // Allocated now, not during the verification: a cudaMalloc or cudaFree there, while a faster
  // peer already waits in its verification op, can wait for that peer forever.
  counter_ = DeviceBuffer(sizeof(unsigned long long));
  initialise();
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
}

void* CollectivePoint::send_at(std::size_t slot) const {
  const std::size_t offset = inplace_ ? layout_.send_offset * element_ : 0;
  return static_cast<char*>(send_.get()) + slot * send_stride_ + offset;
}

const void* CollectivePoint::in(std::size_t slot) const { return send_at(slot); }

void* CollectivePoint::out(std::size_t slot) const {
  if (inplace_) {
    return static_cast<char*>(send_.get()) + slot * send_stride_ + layout_.recv_offset * element_;
  }
  return static_cast<char*>(recv_.get()) + slot * recv_stride_;
}

void CollectivePoint::enqueue() {
  last_ = next_;
  run_once(last_);
  next_ = (next_ + 1) % rotation_.sets;
}

Json CollectivePoint::rank_details() {
  return Json{{"peak_bytes", send_.bytes() + recv_.bytes()},
              {"rotation", rotation_json(rotation_)}};
}

// Every set's inputs from the layout's pattern and its outputs poisoned. In place, the whole
// region is poisoned first and the input written over its slot (where NCCL reads it).
void CollectivePoint::initialise() {
  const std::size_t whole = std::max(layout_.send_count, layout_.recv_count);
  for (std::size_t slot = 0; slot < rotation_.sets; ++slot) {
    void* region = static_cast<char*>(send_.get()) + slot * send_stride_;
    if (inplace_) {
      MGBENCH_CUDA_CHECK(kernels::fill_poison(region, whole, dtype_, env_.stream));
      if (!layout_.input_used) continue;
    }
    MGBENCH_CUDA_CHECK(kernels::collective_fill(send_at(slot), layout_.send_count,
                                                dtype_, layout_.input, kSeed, env_.stream));
  }
  if (!inplace_) {
    MGBENCH_CUDA_CHECK(kernels::fill_poison(recv_.get(), recv_.bytes() / element_, dtype_,
                                            env_.stream));
  }
}

std::uint64_t CollectivePoint::count_wrong(std::size_t slot) {
  if (!layout_.checked) return 0;
  auto* c = static_cast<unsigned long long*>(counter_.get());
  MGBENCH_CUDA_CHECK(cudaMemsetAsync(c, 0, sizeof(unsigned long long), env_.stream));
  MGBENCH_CUDA_CHECK(kernels::collective_count_wrong(out(slot), layout_.recv_count, dtype_,
                                                     layout_.expected, kSeed, c, env_.stream));
  unsigned long long host = 0;
  MGBENCH_CUDA_CHECK(cudaMemcpyAsync(&host, c, sizeof host, cudaMemcpyDeviceToHost, env_.stream));
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  return host;
}

// The output the last timed op left (out of place: its input is unchanged), then a fresh op on
// every set (in-place ops have changed the input), checked element by element; the counts are
// summed over ranks (collective).
Verification CollectivePoint::verify() {
  Verification v;
  std::uint64_t wrong = 0;
  std::exception_ptr error;
  bool issued = false;
  try {
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    if (!inplace_) wrong = count_wrong(last_);
    initialise();
    for (std::size_t slot = 0; slot < rotation_.sets; ++slot) run_once(slot);
    issued = true;
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    after_op(v);
    for (std::size_t slot = 0; slot < rotation_.sets; ++slot) wrong += count_wrong(slot);
  } catch (...) {
    error = std::current_exception();
    if (!issued) abandon_collective();  // the peers' op would wait for this rank forever
  }
  const std::uint64_t checked =
      layout_.checked ? layout_.recv_count * (rotation_.sets + (inplace_ ? 0 : 1)) : 0;
  // Every rank reaches this exchange exactly once, whatever failed above.
  const std::vector<std::uint64_t> sums =
      env_.sum_over_ranks(error ? std::vector<std::uint64_t>{} : std::vector{wrong, checked});
  if (error) std::rethrow_exception(error);
  const std::uint64_t total = sums[0], total_checked = sums[1];
  v.details["wrong"] = total;
  v.details["wrong_on_rank"] = wrong;
  v.details["checked"] = total_checked;
  if (total != 0 && v.ok) {
    v.ok = false;
    v.message = fmt::format("{} of {} elements differ from the exact {} ({} on rank {})", total,
                            total_checked, layout_.expected.sum ? "sum" : "source elements",
                            wrong, env_.rank);
  }
  return v;
}

NcclCollectivePoint::NcclCollectivePoint(RankEnv& env, collective::Kind kind)
    : CollectivePoint(env, kind) {
  if (env.comm == nullptr) throw EnvironmentError("NCCL point without an NCCL communicator");
  owner_ = NcclComms::owner_of(env.comm, &owner_rank_);
  datatype_ = nccl_datatype(dtype_);
}

void NcclCollectivePoint::run_once(std::size_t slot) {
  const CollectiveOp op{kind_, in(slot), out(slot), layout_.count, datatype_, root_, env_.stream};
  const char* what = collective_call_name(kind_);
  if (owner_ != nullptr) {
    owner_->call(owner_rank_, collective_call(op), what);
  } else {
    nccl_call(env_.comm, collective_call(op), what);
  }
}

void NcclCollectivePoint::after_op(Verification&) {
  if (owner_ != nullptr && owner_->aborted()) {
    throw EnvironmentError("NCCL communicators aborted: " + owner_->abort_reason());
  }
}

void NcclCollectivePoint::abandon_collective() {
  if (owner_ != nullptr) {
    owner_->abort(fmt::format("rank {} failed before its verification {}", env_.rank,
                              collective_call_name(kind_)));
  }
}

}  // namespace mgbench::bench
