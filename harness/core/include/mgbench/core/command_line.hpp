#pragma once
// Command-line parsing shared by the subcommands.
#include <cxxopts.hpp>

namespace mgbench {

// Parses a subcommand's options (argv[0] is the command name). Bad or unknown options and
// stray arguments throw UsageError (one line, exit 2); -h/--help throws HelpRequested with the
// help text, which main prints. The options must declare "h,help".
cxxopts::ParseResult parse_command_line(cxxopts::Options& options, int argc, char** argv);

}  // namespace mgbench
