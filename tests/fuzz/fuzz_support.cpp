#include "fuzz_support.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

namespace mgbench::fuzz {
namespace {

std::map<std::string, std::string>& scratch_files() {
  static std::map<std::string, std::string> files;
  return files;
}

void remove_scratch_files() {
  for (const auto& [target, path] : scratch_files()) std::remove(path.c_str());
}

}  // namespace

std::string write_input(const std::string& target, const std::uint8_t* data, std::size_t size) {
  auto& files = scratch_files();
  auto it = files.find(target);
  if (it == files.end()) {
    const char* dir = std::getenv("TMPDIR");
    const std::string path = std::string(dir && *dir ? dir : "/tmp") + "/mgbench-fuzz-" + target +
                             "-" + std::to_string(::getpid());
    if (files.empty()) std::atexit(remove_scratch_files);
    it = files.emplace(target, path).first;
  }
  std::ofstream out(it->second, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz %s: cannot write %s\n", target.c_str(), it->second.c_str());
    std::abort();
  }
  return it->second;
}

void unexpected_exception(const char* target, const char* what) {
  std::fprintf(stderr, "fuzz %s: exception that is not an mgbench::Error: %s\n", target, what);
  std::abort();
}

}  // namespace mgbench::fuzz
