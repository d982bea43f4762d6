#include "mgbench/core/params.hpp"

#include <cerrno>
#include <cmath>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"

namespace mgbench {

std::int64_t param_int(const Params& params, const std::string& key) {
  const auto it = params.find(key);
  if (it == params.end() || !it->is_number_integer()) {
    throw UsageError(fmt::format("parameter '{}' missing or not an integer", key));
  }
  return it->get<std::int64_t>();
}

std::string param_str(const Params& params, const std::string& key) {
  const auto it = params.find(key);
  if (it == params.end()) throw UsageError(fmt::format("parameter '{}' missing", key));
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

bool param_bool(const Params& params, const std::string& key) {
  const auto it = params.find(key);
  if (it == params.end() || !it->is_boolean()) {
    throw UsageError(fmt::format("parameter '{}' missing or not a boolean", key));
  }
  return it->get<bool>();
}

std::string describe_params(const Params& params) {
  std::string text;
  for (const auto& [key, value] : params.items()) {
    if (!text.empty()) text += ' ';
    text += key + '=' + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text;
}

std::int64_t parse_positive_int(const std::string& text, const std::string& what) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError(fmt::format("invalid {} '{}': expected a positive integer", what, text));
  }
  errno = 0;
  const long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value <= 0) {
    throw UsageError(fmt::format("invalid {} '{}': expected a positive integer", what, text));
  }
  return value;
}

double parse_double(const std::string& text, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE ||
      !std::isfinite(value)) {
    throw UsageError(fmt::format("invalid {} '{}': expected a number", what, text));
  }
  return value;
}

std::uint64_t parse_size(const std::string& text, const std::string& what) {
  std::string digits = text;
  std::uint64_t scale = 1;
  if (!digits.empty()) {
    std::string suffix;
    while (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back()))) {
      suffix.insert(suffix.begin(), static_cast<char>(std::toupper(digits.back())));
      digits.pop_back();
    }
    if (suffix == "" || suffix == "B") {
      scale = 1;
    } else if (suffix == "K" || suffix == "KB" || suffix == "KIB") {
      scale = 1ULL << 10;
    } else if (suffix == "M" || suffix == "MB" || suffix == "MIB") {
      scale = 1ULL << 20;
    } else if (suffix == "G" || suffix == "GB" || suffix == "GIB") {
      scale = 1ULL << 30;
    } else {
      throw UsageError(
          fmt::format("invalid {} '{}': expected a size such as 4096, 64K, 16M or 1G", what, text));
    }
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError(
        fmt::format("invalid {} '{}': expected a size such as 4096, 64K, 16M or 1G", what, text));
  }
  const std::int64_t value = parse_positive_int(digits, what);
  if (static_cast<std::uint64_t>(value) > (UINT64_MAX / scale)) {
    throw UsageError(fmt::format("invalid {} '{}': too large", what, text));
  }
  return static_cast<std::uint64_t>(value) * scale;
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  std::uint64_t value = bytes;
  while (unit < 4 && value >= 1024 && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  if (value >= 1024 && unit < 4) {
    return fmt::format("{:.1f} {}", static_cast<double>(value) / 1024.0, units[unit + 1]);
  }
  return fmt::format("{} {}", value, units[unit]);
}

std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  std::vector<std::string> items;
  if (text.empty()) throw UsageError(fmt::format("empty {} list", what));
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos
                                                                     : comma - start);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) {
      item.erase(item.begin());
    }
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) {
      item.pop_back();
    }
    if (item.empty()) {
      throw UsageError(fmt::format("invalid {} list '{}': empty item", what, text));
    }
    items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

}  // namespace mgbench
