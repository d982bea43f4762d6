#pragma once
// Text helpers shared by every report format: escaping for HTML/SVG/XML, Markdown and CSV,
// number formatting with units, and tolerant readers of the JSON parts of the results model and
// of a point's parameters.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench::reports {

// Escapes & < > " ' so the text is safe in HTML/XML element content and quoted attributes.
// Invalid UTF-8 bytes and control characters (other than tab/newline) become U+FFFD.
std::string escape_xml(const std::string& text);
inline std::string escape_html(const std::string& text) { return escape_xml(text); }
// One Markdown table cell: inline markup, pipes and HTML characters escaped, newlines folded.
std::string escape_markdown(const std::string& text);
// One CSV field (RFC 4180 quoting). Text that a spreadsheet would run as a formula
// (= + - @ first) is prefixed with a single quote.
std::string csv_field(const std::string& text);
// Folds newlines and control characters to spaces (console cells).
std::string one_line(const std::string& text);
// Valid UTF-8: invalid bytes and control characters other than tab, newline and CR become U+FFFD.
std::string valid_utf8(const std::string& text);

// Numbers with about `digits` significant digits and no exponent: 812.3, 45.67, 0.01234.
std::string format_sig(double value, int digits = 4);
// Seconds as "12.3 us", "4.56 ms", "1.23 s".
std::string format_seconds(double seconds);
// Bytes in binary units: "8 B", "1.5 KiB", "64 MiB", "1 GiB".
std::string format_bytes_iec(double bytes);
// A fraction (0.93) as a percentage ("93.0 %") with `decimals` decimals.
std::string format_percent(double fraction, int decimals = 1);
// A JSON scalar as a short display string (strings verbatim, numbers via format_sig when
// not integers, booleans yes/no, null empty). Objects and arrays are dumped compactly.
std::string format_json_value(const Json& value);
// Shortest round-trip representation for machine-readable output (CSV).
std::string format_exact(double value);

// Tolerant readers: a missing key, null or non-numeric value gives nullopt.
std::optional<double> json_number(const Json& object, const std::string& key);
std::string json_string(const Json& object, const std::string& key,
                        const std::string& fallback = "");

// A parameter's value as format_json_value shows its JSON ("bf16", "8192", "yes").
std::string format_param_value(const ParamValue& value);
// The same tolerant reads of a point's parameters: a missing or non-numeric parameter gives
// nullopt, a missing one `fallback`.
std::optional<double> param_number(const Params& params, const std::string& key);
std::string param_string(const Params& params, const std::string& key,
                         const std::string& fallback = "");
// True when every parameter of `part` is in `whole` with the same value.
bool params_subset(const Params& part, const Params& whole);
// Names whose values differ between `params` (or that some lack), sorted.
std::vector<std::string> varying_keys(const std::vector<const Params*>& params);

// "dtype=bf16 mode=pinned" from the parameters (names sorted).
std::string params_label(const Params& params, const std::vector<std::string>& only = {});
// Compact label for charts and legends: text values bare, numbers as "batch 256", booleans
// as "overlap on", "inplace" as in-place/out-of-place, and M = N = K collapsed to "size 8192".
// Only `keys` are used (all keys when empty), names sorted.
std::string params_short_label(const Params& params, const std::vector<std::string>& keys = {});
// An integer without decimals, otherwise format_sig.
std::string format_plain(double value);
// A stable file/element id from free text: lower case [a-z0-9-] only.
std::string slug(const std::string& text);

// Groups `items` by `label_of(item)`, the groups in the order their labels first appear.
template <typename T, typename LabelFn>
std::vector<std::pair<std::string, std::vector<T>>> group_in_order(const std::vector<T>& items,
                                                                   LabelFn label_of) {
  std::vector<std::pair<std::string, std::vector<T>>> out;
  for (const T& item : items) {
    const std::string label = label_of(item);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == label; });
    if (it == out.end()) {
      out.push_back({label, {item}});
    } else {
      it->second.push_back(item);
    }
  }
  return out;
}

}  // namespace mgbench::reports
