#include "mgbench/core/command_line.hpp"

#include <fmt/format.h>

#include "mgbench/core/error.hpp"

namespace mgbench {

namespace {
bool g_parse_only = false;
}  // namespace

void set_parse_only(bool on) { g_parse_only = on; }
bool parse_only() { return g_parse_only; }

cxxopts::ParseResult parse_command_line(cxxopts::Options& options, int argc, char** argv) {
  cxxopts::ParseResult args;
  try {
    args = options.parse(argc, argv);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("invalid command line: {}", e.what()));
  }
  if (args.count("help")) throw HelpRequested(options.help());
  if (!args.unmatched().empty()) {
    throw UsageError(fmt::format("unexpected argument '{}'", args.unmatched().front()));
  }
  return args;
}

}  // namespace mgbench
