#pragma once
// Logs go to stderr through spdlog; results go to sinks. -1 quiet, 0 normal, 1 verbose.
namespace mgbench {
void init_logging();
void set_log_verbosity(int verbosity);
}  // namespace mgbench
