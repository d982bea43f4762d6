#include "mgbench/core/params.hpp"

#include <cerrno>
#include <cmath>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"

namespace mgbench {

ParamValue::Kind ParamValue::kind() const {
  switch (value_.index()) {
    case 0: return Kind::integer;
    case 1: return Kind::number;
    case 2: return Kind::boolean;
    default: return Kind::text;
  }
}

std::int64_t ParamValue::integer() const {
  if (!is_integer()) throw std::logic_error("parameter value " + str() + " is not an integer");
  return std::get<std::int64_t>(value_);
}

double ParamValue::number() const {
  if (is_integer()) return static_cast<double>(std::get<std::int64_t>(value_));
  if (!is_number()) throw std::logic_error("parameter value " + str() + " is not a number");
  return std::get<double>(value_);
}

const std::string& ParamValue::text() const {
  if (!is_text()) throw std::logic_error("parameter value " + str() + " is not text");
  return std::get<std::string>(value_);
}

bool ParamValue::boolean() const {
  if (!is_boolean()) throw std::logic_error("parameter value " + str() + " is not a boolean");
  return std::get<bool>(value_);
}

std::string ParamValue::str() const {
  return is_text() ? std::get<std::string>(value_) : to_json().dump();
}

Json ParamValue::to_json() const {
  return std::visit([](const auto& v) { return Json(v); }, value_);
}

ParamValue ParamValue::from_json(const Json& value, const std::string& what) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > INT64_MAX) {
      throw UsageError(fmt::format("{} is too large", what));
    }
    return value.get<std::int64_t>();
  }
  if (value.is_number_float()) return value.get<double>();
  throw UsageError(fmt::format("{} is not a string, number or boolean", what));
}

std::int64_t Params::integer(const std::string& name) const {
  const ParamValue* v = find(name);
  if (v == nullptr || !v->is_integer()) {
    throw UsageError(fmt::format("parameter '{}' missing or not an integer", name));
  }
  return v->integer();
}

const std::string& Params::text(const std::string& name) const {
  const ParamValue* v = find(name);
  if (v == nullptr || !v->is_text()) {
    throw UsageError(fmt::format("parameter '{}' missing or not text", name));
  }
  return v->text();
}

bool Params::boolean(const std::string& name) const {
  const ParamValue* v = find(name);
  if (v == nullptr || !v->is_boolean()) {
    throw UsageError(fmt::format("parameter '{}' missing or not a boolean", name));
  }
  return v->boolean();
}

std::string Params::str(const std::string& name) const { return at(name).str(); }

const ParamValue* Params::find(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

const ParamValue& Params::at(const std::string& name) const {
  const ParamValue* v = find(name);
  if (v == nullptr) throw UsageError(fmt::format("parameter '{}' missing", name));
  return *v;
}

void Params::set(const std::string& name, ParamValue value) {
  values_.insert_or_assign(name, std::move(value));
}

void Params::refuse_choice(const std::string& name, const std::string& names) const {
  throw UsageError(fmt::format("parameter '{}' is '{}': expected one of {}", name, str(name), names));
}

std::string Params::dump() const { return to_json().dump(); }

Json Params::to_json() const {
  Json j = Json::object();
  for (const auto& [name, value] : values_) j[name] = value.to_json();
  return j;
}

Params Params::from_json(const Json& value) {
  if (!value.is_object()) throw UsageError("point params is not an object");
  Params p;
  for (const auto& [name, v] : value.items()) {
    const std::string what = fmt::format("point params '{}'", name.substr(0, 64));
    p.values_.emplace(name, ParamValue::from_json(v, what));
  }
  return p;
}

void to_json(Json& j, const ParamValue& value) { j = value.to_json(); }
void to_json(Json& j, const Params& params) { j = params.to_json(); }
void from_json(const Json& j, Params& params) { params = Params::from_json(j); }

std::string describe_params(const Params& params) {
  std::string text;
  for (const auto& [key, value] : params) {
    if (!text.empty()) text += ' ';
    text += key + '=' + value.str();
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
