// A build without MPI (MGBENCH_WITH_MPI off or no MPI found): no process per GPU.
#include "mgbench/core/error.hpp"
#include "mgbench/run/launcher.hpp"
#include "mgbench/run/mpi_group.hpp"

namespace mgbench {

bool built_with_mpi() { return false; }

std::unique_ptr<LaunchedGroup> start_mpi_group(int) {
  throw EnvironmentError("this mgbench was built without MPI (MGBENCH_WITH_MPI)");
}

}  // namespace mgbench
