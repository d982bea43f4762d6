// The commands' plain console tables: reports::render_text without the rule under the header
// (and without the header of a key-value list).
#include "text_table.hpp"

#include <sstream>

namespace mgbench {

reports::Table text_table(const std::vector<std::string>& headers, std::size_t left_columns) {
  reports::Table table;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    table.column(headers[i], i < left_columns ? reports::Align::left : reports::Align::right);
  }
  return table;
}

void print_text_table(std::ostream& out, const reports::Table& table, int indent, bool header) {
  reports::Table plain = table;
  plain.title.clear();
  plain.caption.clear();
  std::ostringstream text;
  reports::TextStyle style;
  style.colour = false;
  style.indent = indent;
  reports::render_text(plain, text, style);
  // render_text writes the header line, a rule, then the rows (and the notes).
  std::istringstream lines(text.str());
  std::string line;
  for (std::size_t i = 0; std::getline(lines, line); ++i) {
    if (i == 1 || (i == 0 && !header)) continue;
    out << line << "\n";
  }
}

}  // namespace mgbench
