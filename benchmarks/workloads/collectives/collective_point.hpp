#pragma once
// One rank of one collective point, shared by the all-reduce (NCCL and the own kernels) and the
// other NCCL collectives: the buffers of a rotation, their initialisation, the verification
// protocol and NCCL's enqueue through the locked call path.
//
// Buffers (collective_math.hpp, RankLayout): out of place, a send and a receive buffer per set;
// in place, one buffer of max(send, recv) elements per set, the send and receive buffers at the
// layout's offsets in it. Consecutive ops use the sets of a rotation in turn (cache=cold: more
// than twice the L2 cache in all; cache=hot: one set), the same number on every rank.
// Initialisation: the inputs from the layout's pattern, the outputs poisoned (NaN / INT32_MIN:
// never an expected value). Verification, as nccl-tests: after sampling each rank checks the
// output the last timed op left (out of place: the input is unchanged), re-initialises, runs one
// fresh op per set and counts the elements that differ from the exact expected values; the wrong
// and checked counts are summed over ranks and any mismatch makes the point `wrong`.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "collectives/collective_math.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/executor.hpp"
#include "mgbench/bench/nccl_comms.hpp"
#include "mgbench/kernels/fill.hpp"

namespace mgbench::bench {

class CollectivePoint : public RankPoint {
 public:
  // Reads bytes, dtype, inplace and root from the point's parameters.
  CollectivePoint(RankEnv& env, collective::Kind kind);

  void enqueue() final;
  Json rank_details() override;
  Verification verify() final;

 protected:
  virtual void run_once(std::size_t slot) = 0;  // enqueues one op on env_.stream
  virtual void after_op(Verification&) {}        // implementation-specific health checks
  virtual void abandon_collective() {}           // this rank will not join the op it owes

  const void* in(std::size_t slot) const;
  void* out(std::size_t slot) const;

  RankEnv env_;
  collective::Kind kind_;
  kernels::DType dtype_ = kernels::DType::fp32;
  bool inplace_ = false;
  int root_ = 0;
  collective::RankLayout layout_;

 private:
  void initialise();
  std::uint64_t count_wrong(std::size_t slot);
  void* send_at(std::size_t slot) const;

  std::size_t element_ = 4;
  std::size_t send_stride_ = 0, recv_stride_ = 0;  // bytes between consecutive sets
  Rotation rotation_;
  DeviceBuffer send_, recv_;  // in place: send_ only
  DeviceBuffer counter_;      // the verification's count of wrong elements
  std::size_t next_ = 0, last_ = 0;  // the set of the next op, of the last op
};

// A collective through NCCL (env.comm): NcclComms::call() under the rank's lock, as every NCCL
// call of the project. The watchdog's abort ends the verification with an error.
class NcclCollectivePoint final : public CollectivePoint {
 public:
  NcclCollectivePoint(RankEnv& env, collective::Kind kind);

 protected:
  void run_once(std::size_t slot) override;
  void after_op(Verification&) override;
  void abandon_collective() override;

 private:
  NcclComms* owner_ = nullptr;
  int owner_rank_ = 0;
  ncclDataType_t datatype_ = ncclFloat32;
};

// The NCCL element type of an all-reduce dtype.
ncclDataType_t nccl_datatype(kernels::DType dtype);

}  // namespace mgbench::bench
