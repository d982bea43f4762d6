#pragma once
// Small helpers shared by the tests.
#include <string>

namespace mgbench::test {

struct CommandOutput {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the real mgbench binary with `args` (shell-quoted by the caller), capturing both streams.
CommandOutput run_mgbench(const std::string& args, const std::string& env = "");
// A fresh empty directory under the system temp dir.
std::string temp_dir(const std::string& tag);
std::string read_text(const std::string& path);

// Ends the test binary with exit 77 after printing "SKIP: <reason>": CTest (SKIP_RETURN_CODE 77,
// one test case per process) reports the test as skipped, never as passed. Catch2 v2 has no
// skip of its own. Use REQUIRE, not CHECK, for anything checked before: a failed CHECK would
// be hidden by the exit.
[[noreturn]] void skip_test(const std::string& reason);

}  // namespace mgbench::test
