// The NCCL calls of the collective workloads (see nccl_comms.hpp, collective_call): the one file
// that names NCCL's collective and point-to-point functions. Every call returned here is issued
// through NcclComms::call() or nccl_call(), under the rank's lock, so that no rank thread touches
// a communicator the watchdog is aborting.
#include <cuda_bf16.h>  // before nccl.h: older NCCL headers declare ncclBfloat16 only then

#include "mgbench/bench/nccl_comms.hpp"

namespace mgbench::bench {

namespace {

using collective::Kind;

// nccl-tests' sendrecv_perf: every rank sends to rank + 1 and receives from rank - 1, in one
// group. The rank and the count are read inside the call, under the rank's lock.
ncclResult_t ring_sendrecv(const CollectiveOp& op, ncclComm_t comm) {
  int nranks = 0, rank = 0;
  ncclResult_t res = ncclCommCount(comm, &nranks);
  if (res == ncclSuccess) res = ncclCommUserRank(comm, &rank);
  if (res != ncclSuccess) return res;
  res = ncclGroupStart();
  if (res != ncclSuccess) return res;
  res = ncclSend(op.send, op.count, op.type, (rank + 1) % nranks, comm, op.stream);
  if (res == ncclSuccess) {
    res = ncclRecv(op.recv, op.count, op.type, (rank + nranks - 1) % nranks, comm, op.stream);
  }
  const ncclResult_t end = ncclGroupEnd();  // always: the group must be closed
  return res != ncclSuccess ? res : end;
}

// All-to-all as NCCL before 2.28 had it: a send and a receive of `count` elements with every
// rank (itself included), in one group (what frameworks issued on those versions).
ncclResult_t grouped_alltoall(const CollectiveOp& op, ncclComm_t comm, std::size_t element) {
  int nranks = 0;
  ncclResult_t res = ncclCommCount(comm, &nranks);
  if (res != ncclSuccess) return res;
  res = ncclGroupStart();
  if (res != ncclSuccess) return res;
  const std::size_t chunk = op.count * element;
  for (int r = 0; r < nranks && res == ncclSuccess; ++r) {
    const auto offset = static_cast<std::size_t>(r) * chunk;
    res = ncclSend(static_cast<const char*>(op.send) + offset, op.count, op.type, r, comm,
                   op.stream);
    if (res == ncclSuccess) {
      res = ncclRecv(static_cast<char*>(op.recv) + offset, op.count, op.type, r, comm, op.stream);
    }
  }
  const ncclResult_t end = ncclGroupEnd();
  return res != ncclSuccess ? res : end;
}

// Whether the NCCL this binary was built against and the one loaded have ncclAlltoAll (2.28):
// then all-to-all is that call, as nccl-tests' alltoall_perf issues it (NCCL's own schedule,
// and on one rank a local copy).
bool has_alltoall() {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  static const bool loaded = nccl_version_loaded() >= NCCL_VERSION(2, 28, 0);
  return loaded;
#else
  return false;
#endif
}

ncclResult_t alltoall(const CollectiveOp& op, ncclComm_t comm, std::size_t element) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  if (has_alltoall()) return ncclAlltoAll(op.send, op.recv, op.count, op.type, comm, op.stream);
#endif
  return grouped_alltoall(op, comm, element);
}

std::size_t element_bytes(ncclDataType_t type) {
  switch (type) {
    case ncclBfloat16:
    case ncclFloat16: return 2;
    default: return 4;
  }
}

}  // namespace

std::function<ncclResult_t(ncclComm_t)> collective_call(const CollectiveOp& op) {
  switch (op.kind) {
    case Kind::allreduce:
      return [op](ncclComm_t c) {
        return ncclAllReduce(op.send, op.recv, op.count, op.type, ncclSum, c, op.stream);
      };
    case Kind::allgather:
      return [op](ncclComm_t c) {
        return ncclAllGather(op.send, op.recv, op.count, op.type, c, op.stream);
      };
    case Kind::reducescatter:
      return [op](ncclComm_t c) {
        return ncclReduceScatter(op.send, op.recv, op.count, op.type, ncclSum, c, op.stream);
      };
    case Kind::broadcast:
      return [op](ncclComm_t c) {
        return ncclBroadcast(op.send, op.recv, op.count, op.type, op.root, c, op.stream);
      };
    case Kind::reduce:
      return [op](ncclComm_t c) {
        return ncclReduce(op.send, op.recv, op.count, op.type, ncclSum, op.root, c, op.stream);
      };
    case Kind::sendrecv: return [op](ncclComm_t c) { return ring_sendrecv(op, c); };
    case Kind::alltoall:
      return [op](ncclComm_t c) { return alltoall(op, c, element_bytes(op.type)); };
  }
  return [](ncclComm_t) { return ncclInvalidArgument; };
}

const char* collective_call_name(collective::Kind kind) {
  switch (kind) {
    case Kind::allreduce: return "ncclAllReduce";
    case Kind::allgather: return "ncclAllGather";
    case Kind::reducescatter: return "ncclReduceScatter";
    case Kind::broadcast: return "ncclBroadcast";
    case Kind::reduce: return "ncclReduce";
    case Kind::sendrecv: return "ncclSend/ncclRecv";
    case Kind::alltoall: return has_alltoall() ? "ncclAlltoAll" : "ncclSend/ncclRecv";
  }
  return "NCCL";
}

}  // namespace mgbench::bench
