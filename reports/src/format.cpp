// Escaping, number formatting and tolerant JSON readers for the report renderers.
#include "mgbench/reports/format.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <set>

#include <fmt/format.h>

#include "mgbench/core/text.hpp"

namespace mgbench::reports {

std::string escape_xml(const std::string& text) {
  const std::string clean = sanitize_text(text, true);
  std::string out;
  out.reserve(clean.size() + 16);
  for (char c : clean) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string valid_utf8(const std::string& text) { return ::mgbench::sanitize_text(text, true); }

std::string one_line(const std::string& text) { return ::mgbench::one_line(text); }

std::string escape_markdown(const std::string& text) {
  const std::string line = one_line(text);
  std::string out;
  out.reserve(line.size() + 8);
  for (char c : line) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '|': out += "\\|"; break;
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '#':
      case '~':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string csv_field(const std::string& text) {
  std::string value = sanitize_text(text, true);
  if (!value.empty() && (value[0] == '=' || value[0] == '+' || value[0] == '-' || value[0] == '@' ||
                         value[0] == '\t' || value[0] == '\r')) {
    value.insert(value.begin(), '\'');
  }
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string format_sig(double value, int digits) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  if (value == 0) return "0";
  const double magnitude = std::floor(std::log10(std::fabs(value)));
  int decimals = digits - 1 - static_cast<int>(magnitude);
  decimals = std::clamp(decimals, 0, 9);
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s == "-0" || s.find_first_not_of("-0.") == std::string::npos) return "0";
  return s;
}

std::string format_seconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0) return "0 s";
  if (a < 1e-6) return format_sig(seconds * 1e9, 4) + " ns";
  if (a < 1e-3) return format_sig(seconds * 1e6, 4) + " us";
  if (a < 1) return format_sig(seconds * 1e3, 4) + " ms";
  return format_sig(seconds, 4) + " s";
}

std::string format_bytes_iec(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0) return format_plain(v) + " B";
  // 3 significant digits, trailing zeros dropped: 1 GiB, 1.5 KiB, 768 MiB.
  std::string s = format_sig(v, 3);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s + " " + kUnits[unit];
}

std::string format_percent(double fraction, int decimals) {
  return fmt::format("{:.{}f} %", fraction * 100.0, decimals);
}

std::string format_exact(double value) {
  if (!std::isfinite(value)) return "";
  return fmt::format("{}", value);
}

std::string format_json_value(const Json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_number_integer()) return value.dump();
  if (value.is_number()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) {
      return fmt::format("{}", static_cast<long long>(d));
    }
    return fmt::format("{:.6g}", d);
  }
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<double> json_number(const Json& object, const std::string& key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string json_string(const Json& object, const std::string& key, const std::string& fallback) {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  return format_json_value(*it);
}

std::string format_param_value(const ParamValue& value) {
  return format_json_value(value.to_json());
}

std::optional<double> param_number(const Params& params, const std::string& key) {
  const ParamValue* v = params.find(key);
  if (v == nullptr || !v->is_number() || !std::isfinite(v->number())) return std::nullopt;
  return v->number();
}

std::string param_string(const Params& params, const std::string& key,
                         const std::string& fallback) {
  const ParamValue* v = params.find(key);
  return v == nullptr ? fallback : format_param_value(*v);
}

bool params_subset(const Params& part, const Params& whole) {
  return std::all_of(part.begin(), part.end(), [&](const auto& entry) {
    const ParamValue* value = whole.find(entry.first);
    return value != nullptr && *value == entry.second;
  });
}

std::vector<std::string> varying_keys(const std::vector<const Params*>& params) {
  std::set<std::string> keys;
  for (const Params* p : params) {
    for (const auto& entry : *p) keys.insert(entry.first);
  }
  std::vector<std::string> out;
  for (const auto& key : keys) {
    const ParamValue* first = params.front()->find(key);
    const bool varies = std::any_of(params.begin(), params.end(), [&](const Params* p) {
      const ParamValue* value = p->find(key);
      return value == nullptr || first == nullptr || *value != *first;
    });
    if (varies) out.push_back(key);
  }
  return out;
}

std::string params_label(const Params& params, const std::vector<std::string>& only) {
  std::string out;
  for (const auto& [key, value] : params) {
    if (!only.empty() && std::find(only.begin(), only.end(), key) == only.end()) continue;
    if (!out.empty()) out += ' ';
    out += key + "=" + format_param_value(value);
  }
  return out;
}

std::string format_plain(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return format_sig(value, 4);
}

std::string params_short_label(const Params& params, const std::vector<std::string>& keys) {
  const auto wanted = [&](const std::string& k) {
    return keys.empty() || std::find(keys.begin(), keys.end(), k) != keys.end();
  };
  const bool square = params.contains("m") && params.contains("n") && params.contains("k") &&
                      params.at("m") == params.at("n") && params.at("n") == params.at("k");
  std::vector<std::string> text_parts, other_parts;
  bool size_done = false;
  for (const auto& [k, v] : params) {
    if (!wanted(k)) continue;
    if (square && (k == "m" || k == "n" || k == "k")) {
      if (!size_done) other_parts.push_back("size " + format_param_value(params.at("m")));
      size_done = true;
      continue;
    }
    if (k == "shape" && v.is_text() && v.text() == "square" && square) continue;
    if (k == "inplace" && v.is_boolean()) {
      other_parts.push_back(v.boolean() ? "in-place" : "out-of-place");
    } else if (v.is_text()) {
      text_parts.push_back(v.text());
    } else if (v.is_boolean()) {
      other_parts.push_back(k + (v.boolean() ? " on" : " off"));
    } else {
      other_parts.push_back(k + " " + format_param_value(v));
    }
  }
  std::string out;
  for (const auto* parts : {&text_parts, &other_parts}) {
    for (const auto& p : *parts) out += (out.empty() ? "" : " · ") + p;
  }
  return out;
}

std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) && u < 0x80) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "x" : out;
}

}  // namespace mgbench::reports
