#pragma once
// The bad-input table's machinery, shared by tests/cli/test_bad_input.cpp and
// tests/cli/test_hostile_inputs_r3.cpp: a case is a setup script, mgbench's arguments, the exit
// code and a part of the one line it must print; docs/BAD-INPUT.md lists the rows.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "catch_compat.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

namespace mgbench::test {

// `setup` is a shell script run in the case's directory $D before the command ($S: tests/data).
// `command` is mgbench's arguments, with $D and $S replaced. `message`: a part of the one line.
struct BadInputCase {
  const char* name;
  const char* setup;
  const char* command;
  int exit_code;
  const char* message;
};

// A results document with one point whose fields are overridden by `point_fields` (sh printf).
#define MGBENCH_POINT(fields)                                                          \
  "printf '%s' '{\"schema_version\":2,\"points\":[{\"index\":0,\"workload\":\"gemm\"," \
  "\"params\":{},\"gpus\":1,\"devices\":[0],\"status\":\"ok\",\"samples\":[1.0],"      \
  "\"stats\":{\"n\":1,\"median\":1,\"mean\":1,\"min\":1,\"max\":1,\"stdev\":0,"        \
  "\"rel_stdev\":0,\"p05\":1,\"p95\":1,\"ci_low\":1,\"ci_high\":1}" fields "}]}' > p.json"

inline std::string substitute(std::string text, const std::string& dir) {
  const std::map<std::string, std::string> vars = {{"$D", dir},
                                                   {"$S", MGBENCH_SOURCE_DIR "/tests/data"}};
  for (const auto& [name, value] : vars) {
    for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at)) {
      text.replace(at, name.size(), value);
      at += value.size();
    }
  }
  return text;
}

// Every entry under `dir` with its size and modification time: what "unchanged" compares.
inline std::map<std::string, std::string> snapshot(const std::string& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> entries;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    ::lstat(e.path().c_str(), &st);
    entries[e.path().string()] = std::to_string(st.st_size) + "@" +
                                 std::to_string(st.st_mtim.tv_sec) + "." +
                                 std::to_string(st.st_mtim.tv_nsec);
  }
  return entries;
}

inline bool one_line(const std::string& text) {
  return line_count(text) == 1 && !text.empty() && text.back() == '\n';
}

// One row of docs/BAD-INPUT.md.
inline void print_row(const BadInputCase& c, const CommandOutput& r) {
  std::string err = r.err.substr(0, r.err.find('\n'));
  for (auto& ch : err) {
    if (ch == '|') ch = '/';
  }
  std::cout << "| " << c.name << " | `mgbench " << c.command << "` | " << r.exit_code << " | "
            << err << " |\n";
}

// Runs one case in a fresh directory, which is also its working directory (a relative output
// lands there and is seen), with the test workload and fake GPUs (no real device is ever
// probed) and `prefix` in front of the binary (e.g. a timeout), and checks it: its exit code,
// no signal, exactly one line on stderr holding the message, nothing on stdout, and the
// directory unchanged (nothing half-written, no temporary file left behind).
inline void check_bad_input_case(const BadInputCase& c, const std::string& prefix = "") {
  const std::string dir = temp_dir("bad-input");
  const std::string setup = *c.setup ? substitute(c.setup, dir) : "true";
  REQUIRE(std::system(("cd '" + dir + "' && " + setup).c_str()) == 0);
  const auto before = snapshot(dir);
  const auto r = run_mgbench(substitute(c.command, dir), "cd '" + dir + "' && " + kSelftestEnv +
                                                             " HOME=" + dir + " " + prefix);
  print_row(c, r);
  INFO(c.name << "\nmgbench " << c.command << "\nexit " << r.exit_code << "\nstdout: " << r.out
              << "\nstderr: " << r.err);
  CHECK(r.exit_code == c.exit_code);
  CHECK(r.exit_code < 128);  // no signal
  CHECK(one_line(r.err));
  CHECK(r.err.find(c.message) != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(r.out.empty());
  CHECK(snapshot(dir) == before);
  std::filesystem::remove_all(dir);
}

}  // namespace mgbench::test
