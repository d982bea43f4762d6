// Escaping, number formatting and axis ticks of the report renderers.
#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/svg.hpp"
#include "mgbench/reports/table.hpp"

namespace mr = mgbench::reports;

TEST_CASE("escape_xml escapes markup characters and quotes", "[reports]") {
  CHECK(mr::escape_xml("<script>alert(\"x\") & 'y'</script>") ==
        "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;");
}

TEST_CASE("escape_xml replaces invalid UTF-8 and control characters", "[reports]") {
  const std::string out = mr::escape_xml(std::string("a\x01") + "b\xff" + "c\tè");
  CHECK(out ==
        "a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD"
        "c\t\xC3\xA8");
}

TEST_CASE("escape_markdown neutralises table pipes, markup and HTML", "[reports]") {
  CHECK(mr::escape_markdown("a|b *c* <d>\nnext") == "a\\|b \\*c\\* &lt;d&gt; next");
}

TEST_CASE("csv_field quotes separators and defuses formulas", "[reports]") {
  CHECK(mr::csv_field("plain") == "plain");
  CHECK(mr::csv_field("a,b") == "\"a,b\"");
  CHECK(mr::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(mr::csv_field("=HYPERLINK(\"x\")") == "\"'=HYPERLINK(\"\"x\"\")\"");
  CHECK(mr::csv_field("@sum") == "'@sum");
}

TEST_CASE("format_sig keeps about four significant digits without exponents", "[reports]") {
  CHECK(mr::format_sig(812.345) == "812.3");
  CHECK(mr::format_sig(45.678) == "45.68");
  CHECK(mr::format_sig(0.0123456) == "0.01235");
  CHECK(mr::format_sig(123456.7) == "123457");
  CHECK(mr::format_sig(0) == "0");
}

TEST_CASE("format_seconds picks ns, us, ms or s", "[reports]") {
  CHECK(mr::format_seconds(12.5e-6) == "12.50 us");
  CHECK(mr::format_seconds(0.004567) == "4.567 ms");
  CHECK(mr::format_seconds(1.5) == "1.500 s");
}

TEST_CASE("format_bytes_iec uses binary units and drops trailing zeros", "[reports]") {
  CHECK(mr::format_bytes_iec(8) == "8 B");
  CHECK(mr::format_bytes_iec(1536) == "1.5 KiB");
  CHECK(mr::format_bytes_iec(64.0 * 1024 * 1024) == "64 MiB");
  CHECK(mr::format_bytes_iec(1024.0 * 1024 * 1024) == "1 GiB");
}

TEST_CASE("nice_ticks covers the range with 1-2-5 steps", "[reports]") {
  const auto ticks = mr::svg::nice_ticks(0, 7.3, 4);
  REQUIRE(ticks.size() >= 2);
  CHECK(ticks.front() == 0);
  CHECK(ticks.back() >= 7.3);
  CHECK(ticks[1] - ticks[0] == Approx(2.0));
}

TEST_CASE("format_tick shortens large numbers and formats bytes", "[reports]") {
  CHECK(mr::svg::format_tick(120000, mr::svg::TickFormat::number, 20000) == "120k");
  CHECK(mr::svg::format_tick(0.25, mr::svg::TickFormat::number, 0.05) == "0.25");
  CHECK(mr::svg::format_tick(1 << 30, mr::svg::TickFormat::bytes) == "1 GiB");
}

TEST_CASE("text tables align columns by display width", "[reports]") {
  mr::Table t;
  t.column("name").column("value", mr::Align::right);
  t.add_row({"temperature °C", "71"});
  t.add_row({"x", "1234"});
  std::ostringstream out;
  mr::render_text(t, out, mr::TextStyle{false, 0});
  std::istringstream lines(out.str());
  std::string header, rule, a, b;
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, a);
  std::getline(lines, b);
  CHECK(mr::display_width(a) == mr::display_width(b));
  CHECK(b.substr(b.size() - 4) == "1234");
  CHECK(out.str().find('\x1b') == std::string::npos);
}

TEST_CASE("drop_empty_columns removes columns without any value", "[reports]") {
  mr::Table t;
  t.column("a").column("empty").column("c");
  t.add_row({"1", "", "3"});
  t.drop_empty_columns();
  REQUIRE(t.columns.size() == 2);
  CHECK(t.columns[1].header == "c");
  CHECK(t.rows[0][1] == "3");
}
