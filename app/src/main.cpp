// mgbench: dispatch on the subcommand, map errors to exit codes (the exit codes are listed in README.md).
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/version.hpp"

namespace {

void print_usage(std::ostream& out) {
  out << "mgbench " MGBENCH_VERSION_STRING
         " - multi-GPU scaling benchmarks\n\nUsage: mgbench <command> [options]\n\nCommands:\n";
  for (const auto& c : mgbench::commands()) {
    if (!c.hidden) out << fmt::format("  {:<10} {}\n", c.name, c.summary);
  }
  out << "\n`mgbench help <command>` (or `mgbench <command> --help`) lists a command's options;"
         " `mgbench --version`.\n";
}

}  // namespace

int main(int argc, char** argv) {
  mgbench::init_logging();
  if (argc < 2) {
    print_usage(std::cerr);
    return static_cast<int>(mgbench::ExitCode::usage);
  }
  if (std::strcmp(argv[1], "help") == 0 && argc >= 3) {
    // `mgbench help COMMAND ...` is `mgbench COMMAND --help`.
    static char help_flag[] = "--help";
    argv[1] = argv[2];
    argv[2] = help_flag;
    argc = 3;
  }
  const std::string name = argv[1];
  if (name == "--version" || name == "version") {
    std::cout << "mgbench " MGBENCH_VERSION_STRING " (" MGBENCH_GIT_REVISION ")\n";
    return 0;
  }
  if (name == "-h" || name == "--help" || name == "help") {
    print_usage(std::cout);
    return 0;
  }
  const mgbench::Command* command = mgbench::find_command(name);
  if (!command) {
    std::cerr << "mgbench: unknown command '" << mgbench::one_line(name)
              << "' (see `mgbench --help`)\n";
    return static_cast<int>(mgbench::ExitCode::usage);
  }
  try {
    return command->run(argc - 1, argv + 1);
  } catch (const mgbench::HelpRequested& help) {
    std::cout << help.what();
    return 0;
  } catch (const mgbench::Error& e) {
    std::cerr << "mgbench " << name << ": " << mgbench::one_line(e.what()) << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    // Not one of mgbench's typed errors: a bug, or a library failing in an unforeseen way.
    std::cerr << "mgbench " << name << ": internal error: " << mgbench::one_line(e.what())
              << "\n";
    return static_cast<int>(mgbench::ExitCode::environment);
  } catch (...) {
    std::cerr << "mgbench " << name << ": internal error: unknown exception\n";
    return static_cast<int>(mgbench::ExitCode::environment);
  }
}
