#pragma once
// The processes of a group started by mpirun or srun, over MPI (the only code that includes
// MPI: run/src/mpi_group.cpp, or run/src/mpi_group_none.cpp in a build without MPI).
#include <memory>

#include "mgbench/model/process_group.hpp"

namespace mgbench {

class LaunchedGroup : public ProcessGroup {
 public:
  // Arrival watch, from the next collective on (every rank calls it, with the same value):
  // before each collective every other rank posts its arrival to rank 0, and rank 0 waits for
  // them all. A rank still missing `deadline_s` after rank 0 arrived makes rank 0 write a
  // `stalled` worker line naming the step and every missing rank with its host; once they have
  // all arrived, a second one with nobody missing. 0: no watch (the default).
  virtual void watch_arrivals(double deadline_s) = 0;
  // The GPU this process uses from now on (ProcessGroup::device(), device_bus_id()).
  virtual void set_device(int ordinal, const std::string& bus_id) = 0;
  // abort() for a launch that cannot run any group (its ranks cannot be placed): the `fatal`
  // line says so, and the orchestrator stops the sweep instead of failing point after point.
  [[noreturn]] virtual void abort_launch(const std::string& reason) = 0;
};

// The arrival watch's deadline for a group: a quarter of its --group-timeout, so that the
// late rank is named well before the orchestrator ends the launch.
inline double arrival_deadline_s(double group_timeout_s) { return group_timeout_s / 4.0; }

// Initialises MPI and returns this process's place in the launch (MPI_COMM_WORLD; the local
// rank from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), or, under the test hook
// MGBENCH_TEST_RANKS_PER_NODE=N, from nodes of N consecutive ranks). MPI is finalized when the
// group is destroyed. abort() first writes a `fatal` worker line naming the rank, its host and
// the reason on `report_fd` (the launcher's forwarded stream; -1: none), then calls MPI_Abort.
// Throws EnvironmentError in a build without MPI.
std::unique_ptr<LaunchedGroup> start_mpi_group(int report_fd);

}  // namespace mgbench
