#pragma once
// Subcommands register themselves; main() dispatches on argv[1].
#include <functional>
#include <string>
#include <vector>

#include "mgbench/macros.hpp"

namespace mgbench {

// Receives the arguments after the subcommand name (args[0] is "mgbench <name>").
// Returns the process exit code; throws mgbench::Error for usage/environment errors.
using CommandFn = std::function<int(int argc, char** argv)>;

struct Command {
  std::string name;
  std::string summary;
  CommandFn run;
  bool hidden = false;
};

bool register_command(Command command);
const std::vector<Command>& commands();
const Command* find_command(const std::string& name);

}  // namespace mgbench

#define MGBENCH_REGISTER_COMMAND(...)                                          \
  static const bool MGBENCH_CONCAT(mgbench_command_registered_, __LINE__) = \
      ::mgbench::register_command(::mgbench::Command{__VA_ARGS__})
