#include "mgbench/core/error.hpp"

#include <unistd.h>

#include <cstring>

#include "mgbench/core/logging.hpp"

namespace mgbench {
namespace {
thread_local int g_current_rank = -1;
}

void set_current_rank(int rank) { g_current_rank = rank; }
int current_rank() { return g_current_rank; }

const std::string& host_name() {
  static const std::string name = [] {
    char buf[256] = {};
    if (::gethostname(buf, sizeof(buf) - 1) != 0) return std::string("unknown");
    return std::string(buf);
  }();
  return name;
}

namespace {
std::string format_api_error(const char* library, int code, const char* code_name,
                             const char* message, const char* expression, const char* file,
                             int line) {
  std::string where = host_name();
  if (g_current_rank >= 0) where += " rank " + std::to_string(g_current_rank);
  const char* base = std::strrchr(file, '/');
  return fmt::format("{} error {} ({}: {}) in `{}` at {}:{} on {}", library, code, code_name,
                     message, expression, base ? base + 1 : file, line, where);
}
}  // namespace

void throw_api_error(const char* library, int code, const char* code_name, const char* message,
                     const char* expression, const char* file, int line, bool out_of_memory) {
  const std::string what =
      format_api_error(library, code, code_name, message, expression, file, line);
  if (out_of_memory) {
    throw OutOfMemoryError(library, code, code_name, expression, host_name(), g_current_rank,
                           what);
  }
  throw ApiError(library, code, code_name, expression, host_name(), g_current_rank, what);
}

void report_api_error_noexcept(const char* library, int code, const char* code_name,
                               const char* message, const char* expression, const char* file,
                               int line) {
  try {
    logging::error("{}", format_api_error(library, code, code_name, message, expression, file,
                                          line));
  } catch (...) {
  }
}

}  // namespace mgbench
