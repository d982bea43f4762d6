#pragma once
// The processes of one group when each GPU has its own process (started by mpirun or srun):
// this process's place among them and the few collectives the group executor needs. The one
// implementation over MPI lives in the run layer (the only code that includes MPI); with one
// thread per GPU there is none, and the rank threads meet in memory instead.
#include <string>
#include <vector>

namespace mgbench {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank among the group's processes on this node, and the number of them.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  virtual const std::string& host() const = 0;  // this process's node
  // The CUDA ordinal of this process's GPU, as the launch mapped it from what its ranks see
  // (per-task GPU binding included); -1: the plan's device of its local rank.
  virtual int device() const { return -1; }
  virtual std::string device_bus_id() const { return ""; }  // its PCI bus id ("": unknown)

  // Every process calls each collective, in the same order. `step` says where the ranks are
  // (e.g. "point 3, sample 2: start gates enqueued"): a launch names it when a rank does not
  // arrive.
  virtual void barrier(const std::string& step) = 0;
  virtual std::string broadcast(const std::string& from_rank0, const std::string& step) = 0;
  // Every rank's value, in rank order, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& mine,
                                              const std::string& step) = 0;
  // Ends every process of the group at once (a rank that cannot continue, where the others
  // may wait for it forever).
  [[noreturn]] virtual void abort(const std::string& reason) = 0;
};

}  // namespace mgbench
