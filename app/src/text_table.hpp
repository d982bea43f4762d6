#pragma once
// The commands' plain console tables (`mgbench history`, `mgbench info`), printed by the
// reports' table printer (columns padded to the display width of their widest cell, two
// spaces apart) without the rule it draws under the header.
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "mgbench/reports/table.hpp"

namespace mgbench {

// A table with these headers: the first `left_columns` columns left-aligned, the others
// right-aligned.
reports::Table text_table(const std::vector<std::string>& headers, std::size_t left_columns);

// Prints `table` with `indent` spaces before each line: the header line (unless `header` is
// false: key-value lists), then the rows. No colour, no rule under the header.
void print_text_table(std::ostream& out, const reports::Table& table, int indent,
                      bool header = true);

}  // namespace mgbench
