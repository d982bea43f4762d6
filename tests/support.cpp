#include "support.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>

namespace mgbench::test {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> source_files(const std::vector<std::string>& roots) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& root : roots) {
    const fs::path dir = fs::path(MGBENCH_SOURCE_DIR) / root;
    if (!fs::exists(dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() ||
          (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh" && ext != ".h")) {
        continue;
      }
      out.push_back(fs::relative(entry.path(), MGBENCH_SOURCE_DIR).generic_string());
    }
  }
  return out;
}

double gpu_time_scale() {
  const char* text = std::getenv("MGBENCH_GPU_TEST_TIME_SCALE");
  if (text == nullptr || *text == '\0') return 1.0;
  char* end = nullptr;
  const double scale = std::strtod(text, &end);
  if (*end != '\0' || !(scale >= 1.0 && scale <= 1000.0)) {
    throw std::invalid_argument(std::string("MGBENCH_GPU_TEST_TIME_SCALE must be a number in "
                                            "[1, 1000], not '") + text + "'");
  }
  return scale;
}

void skip_test(const std::string& reason) {
  std::fprintf(stderr, "SKIP: %s\n", reason.c_str());
  std::fflush(nullptr);
  std::_Exit(77);
}

double children_max_rss_mb() {
  struct rusage usage {};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

double children_cpu_s() {
  struct rusage usage {};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  const auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(usage.ru_utime) + s(usage.ru_stime);
}

std::string temp_dir(const std::string& tag) {
  std::random_device rd;
  auto dir = std::filesystem::temp_directory_path() /
             ("mgbench-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

CommandOutput run_mgbench(const std::string& args, const std::string& env) {
  const std::string dir = temp_dir("run");
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  const std::string cmd = env + (env.empty() ? "" : " ") + "\"" MGBENCH_BINARY "\" " + args +
                          " >" + out_path + " 2>" + err_path + " </dev/null";
  CommandOutput result;
  const int status = std::system(cmd.c_str());
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_text(out_path);
  result.err = read_text(err_path);
  std::filesystem::remove_all(dir);
  return result;
}

}  // namespace mgbench::test
