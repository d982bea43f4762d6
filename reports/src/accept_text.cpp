// Looking up and filling in the phrases of `mgbench accept` (see accept_text.hpp).
#include "mgbench/reports/accept_text.hpp"

#include <map>

#include <fmt/args.h>
#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/text.hpp"

namespace mgbench::reports {

const std::vector<TextEntry>& accept_table_en();
const std::vector<TextEntry>& accept_table_zh();

const char* to_string(Lang lang) { return lang == Lang::zh ? "zh" : "en"; }

Lang lang_from_string(const std::string& text) {
  if (text == "en") return Lang::en;
  if (text == "zh") return Lang::zh;
  throw UsageError("invalid --lang '" + mgbench::one_line(text) + "': expected en or zh");
}

const std::vector<TextEntry>& accept_table(Lang lang) {
  return lang == Lang::zh ? accept_table_zh() : accept_table_en();
}

namespace {

const std::map<std::string, std::string>& index_of(Lang lang) {
  static const auto build = [](Lang l) {
    std::map<std::string, std::string> m;
    for (const auto& e : accept_table(l)) m.emplace(e.key, e.text);
    return m;
  };
  static const std::map<std::string, std::string> en = build(Lang::en), zh = build(Lang::zh);
  return lang == Lang::zh ? zh : en;
}

}  // namespace

std::string accept_phrase(Lang lang, const std::string& key) {
  const auto& index = index_of(lang);
  auto it = index.find(key);
  if (it != index.end()) return it->second;
  if (key.rfind("doctor.", 0) == 0) {
    const bool next = key.size() > 5 && key.compare(key.size() - 5, 5, ".next") == 0;
    it = index.find(next ? "doctor.other.next" : "doctor.other");
    if (it != index.end()) return it->second;
  }
  return key;
}

std::string accept_format(Lang lang, const std::string& key, const std::vector<std::string>& args) {
  const std::string phrase = accept_phrase(lang, key);
  fmt::dynamic_format_arg_store<fmt::format_context> store;
  for (const auto& a : args) store.push_back(a);
  try {
    return fmt::vformat(phrase, store);
  } catch (const fmt::format_error&) {
    return phrase;  // a phrase whose placeholders do not fit its arguments (the test catches it)
  }
}

}  // namespace mgbench::reports
