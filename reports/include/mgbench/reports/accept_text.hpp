#pragma once
// The words of `mgbench accept`'s checklist, summary and report, in one table per language
// (accept_text_en.cpp, accept_text_zh.cpp). A message is a key and its arguments ({0}, {1}...):
// figures, units and identifiers are arguments and stay as they are in every language. A unit
// test checks that every English key has its Chinese counterpart with the same placeholders.
#include <string>
#include <vector>

#include "mgbench/analysis/accept.hpp"

namespace mgbench::reports {

enum class Lang { en, zh };
const char* to_string(Lang lang);
Lang lang_from_string(const std::string& text);  // throws UsageError naming --lang

struct TextEntry {
  const char* key;
  const char* text;
};

// Every entry of a language's table.
const std::vector<TextEntry>& accept_table(Lang lang);

// The phrase of `key`; a doctor check without an entry of its own ("doctor.NAME",
// "doctor.NAME.next") reads as "doctor.other" ("doctor.other.next"). A key no table holds is
// returned as itself, so that a gap shows instead of an empty line.
std::string accept_phrase(Lang lang, const std::string& key);
// The phrase of `key` with `args` in its placeholders.
std::string accept_format(Lang lang, const std::string& key, const std::vector<std::string>& args);
inline std::string accept_format(Lang lang, const AcceptText& text) {
  return accept_format(lang, text.key, text.args);
}

}  // namespace mgbench::reports
