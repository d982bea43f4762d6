#include "mgbench/core/json_text.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"

namespace mgbench {

std::string json_limit_violation(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return fmt::format("larger than {} bytes", limits.max_bytes);
  }
  std::size_t depth = 0, string_length = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (++string_length > limits.max_string) {
        return fmt::format("a string longer than {} bytes", limits.max_string);
      }
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      string_length = 0;
    } else if (c == '[' || c == '{') {
      if (++depth > limits.max_depth) {
        return fmt::format("nesting deeper than {} levels", limits.max_depth);
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {};
}

Json parse_json_bounded(std::string_view text, const std::string& what, const JsonLimits& limits) {
  const std::string violation = json_limit_violation(text, limits);
  if (!violation.empty()) throw UsageError(fmt::format("{}: refused, {}", what, violation));
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("{} is not valid JSON ({})", what,
                                 std::string(e.what()).substr(0, 120)));
  }
}

Json read_json_file(const std::string& path, const std::string& what, const JsonLimits& limits) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw UsageError(fmt::format("cannot read {}", what));
  if (S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{} is a directory", what));
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > limits.max_bytes) {
    throw UsageError(fmt::format("{}: refused, larger than {} bytes", what, limits.max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read {}", what));
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > limits.max_bytes) {  // a pipe or a file that grew
      throw UsageError(fmt::format("{}: refused, larger than {} bytes", what, limits.max_bytes));
    }
  }
  return parse_json_bounded(text, what, limits);
}

std::string dump_json(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace mgbench
