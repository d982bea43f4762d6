#pragma once
// Shared by the sweep CLI tests: the selftest environment, the quiet flags, shell scripts that
// start, signal and wait for the real binary, and readers for what a sweep left on disk.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/params.hpp"
#include "support.hpp"

namespace mgbench::test {

inline const std::string kSelftestEnv =
    "MGBENCH_ENABLE_TEST_WORKLOADS=1 MGBENCH_TEST_FAKE_DEVICES=2";
inline const std::string kQuiet = " --no-history --no-report --skip-doctor --no-telemetry -q";

// Validates a results file against the JSON Schema where python3-jsonschema is installed (a
// warning says so where it is not).
inline void check_results_schema(const std::string& path) {
  if (std::system("/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1") != 0) {
    WARN("python3-jsonschema not installed: schema validation not checked here");
    return;
  }
  const std::string cmd = "/usr/bin/python3 \"" MGBENCH_SOURCE_DIR
                          "/scripts/validate_results.py\" \"" MGBENCH_SOURCE_DIR
                          "/harness/schema/results.schema.json\" \"" + path + "\" >/dev/null";
  CHECK(std::system(cmd.c_str()) == 0);
}

inline int line_count(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// Runs `script` with sh; $MGBENCH is the binary and the selftest environment is exported.
// Returns the script's exit status (128 + N when a signal ended it).
inline int run_script(const std::string& script) {
  const std::string dir = temp_dir("script");
  std::ofstream(dir + "/run.sh") << "export MGBENCH_ENABLE_TEST_WORKLOADS=1 "
                                    "MGBENCH_TEST_FAKE_DEVICES=2\nMGBENCH='" MGBENCH_BINARY "'\n"
                                 << script << "\n";
  const int status = std::system(("sh " + dir + "/run.sh").c_str());
  std::system(("rm -rf " + dir).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The point lines of a journal: index -> how many lines, and the last line's started_at.
struct JournalPoints {
  std::map<std::size_t, int> count;
  std::map<std::size_t, std::string> started_at;
  bool has_header = false;
};

inline JournalPoints read_journal_points(const std::string& path) {
  JournalPoints j;
  std::istringstream in(read_text(path));
  std::string line;
  while (std::getline(in, line)) {
    Json record;
    try {
      record = Json::parse(line);
    } catch (const std::exception&) {
      continue;  // a line cut by the kill
    }
    if (record.value("type", "") == "header") j.has_header = true;
    if (record.value("type", "") != "point") continue;
    const auto index = record["result"]["index"].get<std::size_t>();
    ++j.count[index];
    j.started_at[index] = record["result"]["started_at"].get<std::string>();
  }
  return j;
}

}  // namespace mgbench::test
