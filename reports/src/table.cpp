// Table rendering: aligned console text, Markdown and HTML.
#include "mgbench/reports/table.hpp"

#include <algorithm>
#include <cstdint>

#include "mgbench/reports/format.hpp"

namespace mgbench::reports {
namespace {

const char* tone_colour(RowTone tone) {
  switch (tone) {
    case RowTone::good: return "\x1b[32m";
    case RowTone::warn: return "\x1b[33m";
    case RowTone::bad: return "\x1b[31m";
    case RowTone::normal: break;
  }
  return "";
}

const char* tone_class(RowTone tone) {
  switch (tone) {
    case RowTone::good: return "good";
    case RowTone::warn: return "warn";
    case RowTone::bad: return "bad";
    case RowTone::normal: break;
  }
  return "";
}

RowTone tone_of(const Table& table, std::size_t row) {
  return row < table.tones.size() ? table.tones[row] : RowTone::normal;
}

std::string cell_of(const Table& table, std::size_t row, std::size_t col) {
  const auto& r = table.rows[row];
  return col < r.size() ? r[col] : std::string();
}

bool is_wide(std::uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
         (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
         (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1FAFF) ||
         (cp >= 0x20000 && cp <= 0x3FFFD);
}

}  // namespace

Table& Table::column(std::string header, Align align) {
  columns.push_back(Column{std::move(header), align});
  return *this;
}

Table& Table::add_row(std::vector<std::string> cells, RowTone tone) {
  cells.resize(std::max(cells.size(), columns.size()));
  rows.push_back(std::move(cells));
  tones.resize(rows.size() - 1, RowTone::normal);
  tones.push_back(tone);
  return *this;
}

void Table::drop_empty_columns() {
  for (std::size_t c = columns.size(); c-- > 0;) {
    bool all_empty = true;
    for (const auto& row : rows) {
      if (c < row.size() && !row[c].empty()) {
        all_empty = false;
        break;
      }
    }
    if (!all_empty) continue;
    columns.erase(columns.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& row : rows) {
      if (c < row.size()) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
    }
  }
}

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    std::size_t len = 1;
    std::uint32_t cp = c;
    if (c >= 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else if (c >= 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xC0) {
      len = 2;
      cp = c & 0x1F;
    }
    for (std::size_t k = 1; k < len && i + k < text.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    // Combining marks take no column.
    if (!(cp >= 0x0300 && cp <= 0x036F)) width += is_wide(cp) ? 2 : 1;
    i += len;
  }
  return width;
}

void render_text(const Table& table, std::ostream& out, const TextStyle& style) {
  const std::string indent(static_cast<std::size_t>(std::max(0, style.indent)), ' ');
  const std::size_t ncols = table.columns.size();
  std::vector<std::vector<std::string>> cells(table.rows.size());
  std::vector<std::size_t> widths(ncols, 0);
  for (std::size_t c = 0; c < ncols; ++c) {
    widths[c] = display_width(one_line(table.columns[c].header));
  }
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    for (std::size_t c = 0; c < ncols; ++c) {
      cells[r].push_back(one_line(cell_of(table, r, c)));
      widths[c] = std::max(widths[c], display_width(cells[r].back()));
    }
  }
  auto emit_row = [&](const std::vector<std::string>& row) {
    std::string line = indent;
    for (std::size_t c = 0; c < ncols; ++c) {
      const std::size_t pad = widths[c] - std::min(widths[c], display_width(row[c]));
      const bool last = c + 1 == ncols;
      if (table.columns[c].align == Align::right) {
        line.append(pad, ' ');
        line += row[c];
      } else {
        line += row[c];
        if (!last) line.append(pad, ' ');
      }
      if (!last) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
  };
  if (!table.title.empty()) {
    out << (style.colour ? "\x1b[1m" : "") << one_line(table.title)
        << (style.colour ? "\x1b[0m" : "") << '\n';
  }
  if (!table.caption.empty()) out << indent << one_line(table.caption) << '\n';
  std::vector<std::string> header;
  for (const auto& col : table.columns) header.push_back(one_line(col.header));
  const std::string head = emit_row(header);
  out << (style.colour ? "\x1b[1m" : "") << head << (style.colour ? "\x1b[0m" : "") << '\n';
  // The rule spans the columns; a long free-text last column (messages) counts only up to
  // its header or 24 columns.
  std::size_t rule = 0;
  for (std::size_t c = 0; c < ncols; ++c) {
    const bool last = c + 1 == ncols;
    const std::size_t w =
        last && table.columns[c].align == Align::left
            ? std::min(widths[c], std::max<std::size_t>(24, display_width(header[c])))
            : widths[c];
    rule += w + (last ? 0 : 2);
  }
  out << indent << std::string(rule, '-') << '\n';
  for (std::size_t r = 0; r < cells.size(); ++r) {
    const RowTone tone = tone_of(table, r);
    const bool coloured = style.colour && tone != RowTone::normal && tone != RowTone::good;
    out << (coloured ? tone_colour(tone) : "") << emit_row(cells[r]) << (coloured ? "\x1b[0m" : "")
        << '\n';
  }
  for (const auto& note : table.notes) out << indent << one_line(note) << '\n';
}

std::string render_markdown(const Table& table, int heading_level) {
  std::string out;
  if (!table.title.empty() && heading_level > 0) {
    out += std::string(static_cast<std::size_t>(heading_level), '#') + " " +
           escape_markdown(table.title) + "\n\n";
  }
  if (!table.caption.empty()) out += escape_markdown(table.caption) + "\n\n";
  if (table.columns.empty()) return out;
  out += "|";
  for (const auto& col : table.columns) out += " " + escape_markdown(col.header) + " |";
  out += "\n|";
  for (const auto& col : table.columns) out += col.align == Align::right ? " ---: |" : " :--- |";
  out += "\n";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    out += "|";
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      out += " " + escape_markdown(cell_of(table, r, c)) + " |";
    }
    out += "\n";
  }
  if (!table.notes.empty()) {
    out += "\n";
    for (const auto& note : table.notes) out += escape_markdown(note) + "  \n";
  }
  out += "\n";
  return out;
}

std::string render_html(const Table& table, int heading_level, const std::string& id) {
  std::string out;
  if (!table.title.empty() && heading_level > 0) {
    const std::string h = "h" + std::to_string(heading_level);
    out += "<" + h + (id.empty() ? "" : " id=\"" + escape_xml(id) + "\"") + ">" +
           escape_xml(table.title) + "</" + h + ">\n";
  }
  if (!table.caption.empty()) out += "<p class=\"caption\">" + escape_xml(table.caption) + "</p>\n";
  out += "<div class=\"table-wrap\"><table class=\"data\">\n<thead><tr>";
  for (const auto& col : table.columns) {
    out += std::string("<th") + (col.align == Align::right ? " class=\"num\"" : "") + ">" +
           escape_xml(col.header) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const char* cls = tone_class(tone_of(table, r));
    out += *cls ? std::string("<tr class=\"") + cls + "\">" : std::string("<tr>");
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      out += std::string("<td") + (table.columns[c].align == Align::right ? " class=\"num\"" : "") +
             ">" + escape_xml(cell_of(table, r, c)) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  for (const auto& note : table.notes) out += "<p class=\"note\">" + escape_xml(note) + "</p>\n";
  return out;
}

}  // namespace mgbench::reports
