#pragma once
// A format-neutral table (header, aligned columns, rows with a status class) rendered as
// aligned console text, a Markdown table or an HTML table. Cells hold plain text; every
// renderer escapes for its own format.
#include <ostream>
#include <string>
#include <vector>

namespace mgbench::reports {

enum class Align { left, right };

// How a row is emphasised (console colour, HTML class).
enum class RowTone { normal, good, warn, bad };

struct Column {
  std::string header;
  Align align = Align::left;
};

struct Table {
  std::string title;    // e.g. a workload (rendered as a heading by Markdown/HTML, a line by console)
  std::string caption;  // one line under the title (fixed parameters...)
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<RowTone> tones;      // one per row (missing entries: normal)
  std::vector<std::string> notes;  // lines printed after the table

  Table& column(std::string header, Align align = Align::left);
  Table& add_row(std::vector<std::string> cells, RowTone tone = RowTone::normal);
  // Drops columns whose cells are all empty (e.g. telemetry columns without telemetry).
  void drop_empty_columns();
  bool empty() const { return rows.empty(); }
};

struct TextStyle {
  bool colour = false;  // ANSI colours for row tones and headers
  int indent = 2;
};

// Columns padded to their widest cell (display width of UTF-8 text), two spaces apart.
void render_text(const Table& table, std::ostream& out, const TextStyle& style = {});
// GitHub-flavoured Markdown table (title as a heading of `heading_level`, caption as a line).
std::string render_markdown(const Table& table, int heading_level = 3);
// <table class="data"> with header, alignment classes and tone classes; title as <h3>
// (or none when `heading_level` is 0), caption as <p class="caption">.
std::string render_html(const Table& table, int heading_level = 3, const std::string& id = "");

// Display width of UTF-8 text in terminal columns (code points; East Asian wide = 2).
std::size_t display_width(const std::string& text);

}  // namespace mgbench::reports
