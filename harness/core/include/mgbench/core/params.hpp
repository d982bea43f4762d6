#pragma once
// Parameters of one point: typed values (integers, text, booleans; numbers only where a results
// file written elsewhere holds them) by name, names sorted, parsed once where the command line,
// a journal or a results file is read. Workloads read them through the typed readers below;
// JSON appears only at the edges (to_json / from_json), and `dump()` is the canonical key (the
// JSON object's text, names sorted), the same text a results file stores.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgbench {

using Json = nlohmann::json;

// One parameter's value.
class ParamValue {
 public:
  enum class Kind { integer, number, text, boolean };

  // Implicit, as a literal reads: Params{{"bytes", 4096}, {"impl", "nccl"}}.
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  ParamValue(T value) : value_(static_cast<std::int64_t>(value)) {}  // NOLINT
  ParamValue(double value) : value_(value) {}  // NOLINT
  ParamValue(bool value) : value_(value) {}  // NOLINT
  ParamValue(std::string value) : value_(std::move(value)) {}  // NOLINT
  ParamValue(const char* value) : value_(std::string(value)) {}  // NOLINT

  Kind kind() const;
  bool is_integer() const { return kind() == Kind::integer; }
  bool is_text() const { return kind() == Kind::text; }
  bool is_boolean() const { return kind() == Kind::boolean; }
  bool is_number() const { return kind() == Kind::integer || kind() == Kind::number; }
  // The value; std::logic_error when it is of another kind (the typed readers of Params name
  // the parameter instead).
  std::int64_t integer() const;
  double number() const;  // an integer or a number
  const std::string& text() const;
  bool boolean() const;
  // As the command line writes it: "8192", "nccl", "true", "0.5".
  std::string str() const;

  Json to_json() const;
  // A string, integer, number or boolean; UsageError naming `what` otherwise.
  static ParamValue from_json(const Json& value, const std::string& what);

  friend bool operator==(const ParamValue& a, const ParamValue& b) { return a.value_ == b.value_; }
  friend bool operator!=(const ParamValue& a, const ParamValue& b) { return !(a == b); }

 private:
  std::variant<std::int64_t, double, bool, std::string> value_;
};

class Params {
 public:
  using Values = std::map<std::string, ParamValue>;

  Params() = default;
  Params(std::initializer_list<Values::value_type> values) : values_(values) {}

  // Typed reads: UsageError naming the parameter when it is missing or of another kind.
  std::int64_t integer(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  bool boolean(const std::string& name) const;
  // The value as the command line writes it (any kind).
  std::string str(const std::string& name) const;
  // The enumerator `names` pairs with the text value; UsageError listing the names otherwise.
  template <typename E>
  E choice(const std::string& name, std::initializer_list<std::pair<const char*, E>> names) const;

  bool contains(const std::string& name) const { return values_.count(name) != 0; }
  const ParamValue* find(const std::string& name) const;  // nullptr when absent
  const ParamValue& at(const std::string& name) const;    // UsageError when absent
  void set(const std::string& name, ParamValue value);
  void erase(const std::string& name) { values_.erase(name); }

  bool empty() const { return values_.empty(); }
  std::size_t size() const { return values_.size(); }
  Values::const_iterator begin() const { return values_.begin(); }
  Values::const_iterator end() const { return values_.end(); }

  // The canonical text: the JSON object, names sorted (a point's identity in keys).
  std::string dump() const;
  Json to_json() const;
  // An object of strings, integers, numbers and booleans; UsageError otherwise.
  static Params from_json(const Json& value);

  friend bool operator==(const Params& a, const Params& b) { return a.values_ == b.values_; }
  friend bool operator!=(const Params& a, const Params& b) { return !(a == b); }

 private:
  [[noreturn]] void refuse_choice(const std::string& name, const std::string& names) const;

  Values values_;
};

// For nlohmann::json at the edges (`Json j = params;`, `j.get<Params>()`).
void to_json(Json& j, const ParamValue& value);
void to_json(Json& j, const Params& params);
void from_json(const Json& j, Params& params);

template <typename E>
E Params::choice(const std::string& name,
                 std::initializer_list<std::pair<const char*, E>> names) const {
  const std::string& value = text(name);
  std::string listed;
  for (const auto& [text_name, enumerator] : names) {
    if (value == text_name) return enumerator;
    listed += (listed.empty() ? "" : ", ") + std::string(text_name);
  }
  refuse_choice(name, listed);
}

// "gemm dtype=bf16 impl=cublas m=8192 ..." for logs and messages.
std::string describe_params(const Params& params);

// Parses "1K", "64M", "1G", "4096" (binary units) into bytes; throws UsageError naming `what`.
std::uint64_t parse_size(const std::string& text, const std::string& what);
std::string format_bytes(std::uint64_t bytes);  // "64 MiB", "8 B"
// Parses a strictly positive integer; throws UsageError naming `what`.
std::int64_t parse_positive_int(const std::string& text, const std::string& what);
double parse_double(const std::string& text, const std::string& what);
// Splits "a,b,c"; throws UsageError for empty items or an empty list.
std::vector<std::string> split_list(const std::string& text, const std::string& what);

}  // namespace mgbench
