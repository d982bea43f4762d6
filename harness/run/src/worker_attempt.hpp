#pragma once
// One run of a worker (local, or a launch through mpirun or srun) for the orchestrator: the
// request goes in, every parsed message comes back through `on_message`, and the outcome says how
// it ended. Internal to the run layer.
#include <functional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/placement.hpp"
#include "mgbench/platform/subprocess.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

struct AttemptOutcome {
  ExitInfo exit;
  bool done = false;
  bool timed_out = false;
  bool interrupted = false;
  bool said_hello = false;      // a launched rank 0 (or a local worker) said hello
  bool working = false;         // a point started, or the probe answered
  bool launch_fatal = false;    // a launched rank said no group can run on this launch
  std::string fatal;            // the first fatal message
  std::string start_error;      // the worker or launcher could not be started (exec failed)
  // What a launcher and its ranks printed while the launch had not yet started working (held:
  // a launch that fails there is one line of ours, its own words at -v).
  std::string launcher_output;
};

// `launch`: the launcher's command line in front of the worker (empty: a local worker);
// `worker_args`: the worker's own arguments. No progress (`point` lines) for
// `progress_timeout_s` kills it.
AttemptOutcome run_worker(const Json& request, double progress_timeout_s,
                          const std::function<void(const WorkerMessage&)>& on_message,
                          const std::vector<std::string>& launch,
                          const std::vector<std::string>& worker_args);

// Writes the held launcher output on stderr (a launch that failed later, or succeeded).
void pass_on_output(const AttemptOutcome& outcome);

// A launch that did not start (`outcome` with no hello, or a fatal saying no group can run on
// it): one line naming the cause and the fix; "" when the launch started and failed later.
std::string launch_start_failure(const AttemptOutcome& outcome, Launcher launcher,
                                 double timeout_s);

}  // namespace mgbench
