// The command line of every subcommand, parsed and validated only (parse-only mode: nothing is
// read, probed, run or written). The first byte picks the command, the rest are the arguments,
// one per line. A bad command line is a one-line mgbench::Error; anything else is a bug.
#include <vector>

#include "fuzz_support.hpp"
#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/logging.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  mgbench::set_parse_only(true);
  const auto& commands = mgbench::commands();
  const mgbench::Command& command = commands[data[0] % commands.size()];
  std::vector<std::string> args = {command.name};
  std::string current;
  for (std::size_t i = 1; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  mgbench::fuzz::expect_only_mgbench_errors(
      "args", [&] { (void)command.run(static_cast<int>(args.size()), argv.data()); });
  return 0;
}
