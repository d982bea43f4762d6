// Everyday conveniences of the real binary: `mgbench help COMMAND`, the generated bash completion
// (and the file the build writes), and the sweep's progress: plain lines when stderr is not a
// terminal, a line rewritten in place on one.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::test::kSelftestEnv;
using mgbench::test::read_text;
using mgbench::test::run_mgbench;
using mgbench::test::temp_dir;

namespace {

const std::filesystem::path kBuildDir =
    std::filesystem::path(MGBENCH_BINARY).parent_path().parent_path();

// Sources the completion script and completes `words` (the last one is the word under the
// cursor); returns the candidates, space-separated.
std::string complete(const std::string& script, const std::string& words) {
  const std::string dir = temp_dir("complete");
  std::ofstream(dir + "/mgbench.bash") << script;
  std::ofstream(dir + "/run.sh") << "source '" << dir << "/mgbench.bash'\n"
                                 << "COMP_WORDS=(" << words << ")\n"
                                 << "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
                                 << "_mgbench\necho \"${COMPREPLY[*]}\" > '" << dir << "/out'\n";
  const int status = std::system(("bash '" + dir + "/run.sh'").c_str());
  std::string out = status == 0 ? read_text(dir + "/out") : "(bash failed)";
  std::filesystem::remove_all(dir);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

TEST_CASE("mgbench help COMMAND is mgbench COMMAND --help") {
  for (const char* command : {"sweep", "compare", "report", "history", "list", "doctor"}) {
    INFO(command);
    const auto help = run_mgbench(std::string("help ") + command);
    const auto flag = run_mgbench(std::string(command) + " --help");
    CHECK(help.exit_code == 0);
    CHECK(help.out == flag.out);
    CHECK(help.out.find(std::string("mgbench ") + command) != std::string::npos);
  }
  const auto bad = run_mgbench("help frobnicate");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("frobnicate") != std::string::npos);
  const auto top = run_mgbench("help");
  CHECK(top.exit_code == 0);
  CHECK(top.out.find("mgbench help <command>") != std::string::npos);
}

TEST_CASE("the bash completion is generated from the commands' options") {
  const auto r = run_mgbench("completion bash");
  REQUIRE(r.exit_code == 0);
  const std::string& script = r.out;
  CHECK(script.find("complete -o default -o bashdefault -F _mgbench mgbench") !=
        std::string::npos);
  CHECK(complete(script, "mgbench swe") == "sweep");
  CHECK(complete(script, "mgbench sweep --dry") == "--dry-run");
  CHECK(complete(script, "mgbench sweep --gpu") == "--gpus --gpus-per-node");
  CHECK(complete(script, "mgbench sweep --launch") == "--launcher --launcher-arg");
  CHECK(complete(script, "mgbench compare --thr") == "--threshold");
  CHECK(complete(script, "mgbench history tr") == "trend");
  CHECK(complete(script, "mgbench history trend --wor") == "--workload");
  CHECK(complete(script, "mgbench help rep") == "report");
  CHECK(complete(script, "mgbench sweep --workloads ge") == "gemm");
  CHECK(complete(script, "mgbench sweep --workloads gemm,allr") == "gemm,allreduce");
  CHECK(complete(script, "mgbench sweep --workloads gemm,allg") == "gemm,allgather");
  // Hidden commands are not offered.
  CHECK(complete(script, "mgbench wor").empty());
  CHECK(complete(script, "mgbench com") == "compare");
  // A file argument falls back to bash's own completion (no candidates from mgbench).
  CHECK(complete(script, "mgbench report resu").empty());

  const auto bad = run_mgbench("completion fish");
  CHECK(bad.exit_code == 2);
}

TEST_CASE("the build writes the completion file the package installs") {
  const auto path = kBuildDir / "share/bash-completion/completions/mgbench";
  REQUIRE(std::filesystem::exists(path));
  CHECK(read_text(path.string()) == run_mgbench("completion bash").out);
}

TEST_CASE("the sweep writes plain progress lines when stderr is not a terminal") {
  const auto r = run_mgbench(
      "sweep --workloads selftest --param behavior=ok,crash,ok --gpus 1 --no-history "
      "--no-report --skip-doctor --no-telemetry --out " + temp_dir("progress") + "/out",
      kSelftestEnv);
  INFO(r.err);
  CHECK(r.exit_code == 4);  // the crashed point
  CHECK(r.err.find('\r') == std::string::npos);
  CHECK(r.err.find("\033[K") == std::string::npos);
  CHECK(r.err.find("[1/3] selftest x1 batch=1 behavior=ok: ") != std::string::npos);
  CHECK(r.err.find(" op/s  ETA ") != std::string::npos);
  CHECK(r.err.find("[2/3] selftest x1 batch=1 behavior=crash: failed") != std::string::npos);
  CHECK(r.err.find("[3/3] selftest x1 batch=1 behavior=ok: ") != std::string::npos);
  const auto quiet = run_mgbench(
      "sweep --workloads selftest --gpus 1 --no-history --no-report --skip-doctor "
      "--no-telemetry -q --out " + temp_dir("progress-q") + "/out",
      kSelftestEnv);
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.err.find("[1/1]") == std::string::npos);
}

TEST_CASE("on a terminal the progress line is rewritten with the point, ETA and last figure") {
  // script(1) is in util-linux (Debian: bsdutils, an essential package).
  REQUIRE(std::system("command -v script >/dev/null 2>&1") == 0);
  const std::string dir = temp_dir("progress-tty");
  // script gives the sweep a terminal; its output (stdout and stderr) lands in `log`.
  const std::string cmd = "cd '" + dir + "' && " + kSelftestEnv +
                          " script -qec \"'" MGBENCH_BINARY
                          "' sweep --workloads selftest --param behavior=ok,ok,ok --gpus 1"
                          " --no-history --no-report --skip-doctor --no-telemetry --out out\""
                          " log >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string log = read_text(dir + "/log");
  std::filesystem::remove_all(dir);
  INFO(log);
  CHECK(status == 0);
  CHECK(log.find("\r\033[K[1/3] selftest x1 ") != std::string::npos);
  CHECK(log.find("\r\033[K[3/3] selftest x1 ") != std::string::npos);
  CHECK(log.find("  ETA ") != std::string::npos);
  CHECK(log.find("  last ") != std::string::npos);
  CHECK(log.find(" op/s") != std::string::npos);
}
