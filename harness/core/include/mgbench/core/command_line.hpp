#pragma once
// Command-line parsing shared by the subcommands.
#include <cxxopts.hpp>

namespace mgbench {

// Parses a subcommand's options (argv[0] is the command name). Bad or unknown options and
// stray arguments throw UsageError (one line, exit 2); -h/--help throws HelpRequested with the
// help text, which main prints. The options must declare "h,help".
cxxopts::ParseResult parse_command_line(cxxopts::Options& options, int argc, char** argv);

// Parse-only mode, for the command-line fuzz target: every command returns 0 right after its
// arguments are validated, before it reads a file, probes a device or writes anything. The
// binary never sets it.
void set_parse_only(bool on);
bool parse_only();

}  // namespace mgbench
