#pragma once
// The processes of a group started by mpirun or srun, over MPI (the only code that includes
// MPI: run/src/mpi_group.cpp, or run/src/mpi_group_none.cpp in a build without MPI).
#include <memory>

#include "mgbench/model/process_group.hpp"

namespace mgbench {

// Initialises MPI and returns this process's place in the launch (MPI_COMM_WORLD; the local
// rank from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)). MPI is finalized when the group is
// destroyed. abort() first writes a `fatal` worker line naming the rank, its host and the
// reason on `report_fd` (the launcher's forwarded stream; -1: none), then calls MPI_Abort.
// Throws EnvironmentError in a build without MPI.
std::unique_ptr<ProcessGroup> start_mpi_group(int report_fd);

}  // namespace mgbench
