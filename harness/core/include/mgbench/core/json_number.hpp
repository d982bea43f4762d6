#pragma once
// Integer fields of documents read from disk or a pipe. nlohmann's get<int>() converts a JSON
// float with a plain cast, which is undefined behaviour out of range (1e300 as an int): these
// accept only a JSON integer within [lo, hi] and throw UsageError naming the field otherwise.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <string>
#include <vector>

#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"

namespace mgbench {

// The range of T, within that of std::int64_t.
template <typename T>
constexpr std::int64_t lowest_integer() {
  if constexpr (std::is_signed_v<T>) return std::numeric_limits<T>::min();
  return 0;
}
template <typename T>
constexpr std::int64_t highest_integer() {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(
      std::numeric_limits<T>::max(), std::numeric_limits<std::int64_t>::max()));
}

template <typename T>
T json_integer(const Json& value, const std::string& what, std::int64_t lo = lowest_integer<T>(),
               std::int64_t hi = highest_integer<T>()) {
  bool ok = false;
  std::int64_t v = 0;
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    ok = u <= static_cast<std::uint64_t>(hi);
    v = ok ? static_cast<std::int64_t>(u) : 0;
  } else if (value.is_number_integer()) {
    v = value.get<std::int64_t>();
    ok = true;
  }
  if (!ok || v < lo || v > hi) {
    throw UsageError(what + ": expected an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got " + value.dump().substr(0, 40));
  }
  return static_cast<T>(v);
}

// j[key] as an integer, `fallback` when absent.
template <typename T>
T json_integer_or(const Json& j, const char* key, T fallback) {
  return j.contains(key) ? json_integer<T>(j.at(key), key) : fallback;
}

template <typename T>
std::vector<T> json_integers(const Json& value, const std::string& what) {
  if (!value.is_array()) throw UsageError(what + ": expected an array of integers");
  std::vector<T> out;
  for (const Json& item : value) out.push_back(json_integer<T>(item, what));
  return out;
}

}  // namespace mgbench
