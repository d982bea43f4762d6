#pragma once
// The composition root: every subcommand of the `mgbench` binary. This layer is the only one
// that knows every other (reports included) and wires them together.
#include <string>
#include <vector>

#include "mgbench/run/sweep.hpp"

namespace mgbench {

// Receives the arguments after the subcommand name (argv[0] is the command's name). Returns
// the process exit code; throws mgbench::Error for usage/environment errors.
using CommandFn = int (*)(int argc, char** argv);

struct Command {
  const char* name;
  const char* summary;
  CommandFn run;
  bool hidden = false;
};

int cmd_accept(int argc, char** argv);
int cmd_compare(int argc, char** argv);
int cmd_completion(int argc, char** argv);
int cmd_doctor(int argc, char** argv);
int cmd_history(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_list(int argc, char** argv);
int cmd_predict(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_screen(int argc, char** argv);
int cmd_sweep(int argc, char** argv);
int cmd_soak(int argc, char** argv);
int cmd_worker(int argc, char** argv);

// Every command, sorted by name; nullptr when `name` is none of them.
const std::vector<Command>& commands();
const Command* find_command(const std::string& name);

// The console, CSV and report sinks a sweep with these options writes.
RunSinks sweep_sinks(const SweepOptions& options);

}  // namespace mgbench
