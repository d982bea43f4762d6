#pragma once
// The launchers, one file each (launcher.hpp's GroupLauncher); group_launcher() finds them.
#include "mgbench/run/launcher.hpp"

namespace mgbench {

const GroupLauncher& local_launcher();   // launcher_local.cpp
const GroupLauncher& mpirun_launcher();  // launcher_mpirun.cpp
const GroupLauncher& srun_launcher();    // launcher_srun.cpp

}  // namespace mgbench
