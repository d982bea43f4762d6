// What issue review found already safe stays so: HTML/SVG escaping under a default-src 'none'
// CSP, Markdown table cells that cannot break the table, CSV formula prefixing with RFC 4180
// quoting, SQL values only as bound parameters, no shell from product code, slugged chart names.
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/html.hpp"
#include "support.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kRoot = MGBENCH_SOURCE_DIR;

// Product sources (harness, reports, benchmarks, kernels) with their text.
std::vector<std::pair<std::string, std::string>> product_sources() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* dir : {"app", "harness", "reports", "benchmarks", "kernels"}) {
    for (const auto& e : fs::recursive_directory_iterator(kRoot + "/" + dir)) {
      const std::string ext = e.path().extension().string();
      if (ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh") {
        out.emplace_back(e.path().string(), mgbench::test::read_text(e.path().string()));
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("already safe: HTML escapes every special character") {
  const std::string out = mgbench::reports::escape_html("<script>\"x\"&'y'</script>");
  CHECK(out == "&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;");
}

TEST_CASE("already safe: the HTML page carries a default-src 'none' CSP") {
  mgbench::RunResult run;
  run.host = "<b>host</b>";
  const std::string html = mgbench::reports::render_html_report(run);
  CHECK(html.find("Content-Security-Policy") != std::string::npos);
  CHECK(html.find("default-src 'none'") != std::string::npos);
  CHECK(html.find("<b>host</b>") == std::string::npos);
}

TEST_CASE("already safe: a Markdown cell cannot break its table or inject markup") {
  const std::string cell = mgbench::reports::escape_markdown("a | b\n| c |\n[x](javascript:1) <i>");
  CHECK(cell.find('\n') == std::string::npos);
  CHECK(cell.find(" | ") == std::string::npos);
  CHECK(cell.find("\\|") != std::string::npos);
  CHECK(cell.find("<i>") == std::string::npos);
  CHECK(cell.find("\\[x\\]") != std::string::npos);
}

TEST_CASE("already safe: CSV fields are formula-prefixed and RFC 4180 quoted") {
  using mgbench::reports::csv_field;
  CHECK(csv_field("=cmd|' /C calc'!A0") == "'=cmd|' /C calc'!A0");
  CHECK(csv_field("+1") == "'+1");
  CHECK(csv_field("-1+2") == "'-1+2");
  CHECK(csv_field("@SUM(A1)") == "'@SUM(A1)");
  CHECK(csv_field("a,\"b\"\nc") == "\"a,\"\"b\"\"\nc\"");
  CHECK(csv_field("plain") == "plain");
}

TEST_CASE("already safe: chart file names are slugs") {
  CHECK(mgbench::reports::slug("../../etc/passwd <x>") .find_first_not_of(
            "abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos);
}

TEST_CASE("already safe: no system() or popen() in product code, one execv of mgbench") {
  const std::regex shell(R"((^|[^A-Za-z0-9_:.])(std::)?(system|popen)\s*\()");
  for (const auto& [path, text] : product_sources()) {
    INFO(path);
    CHECK_FALSE(std::regex_search(text, shell));
  }
}

TEST_CASE("already safe: SQL statements are built from literals only, values bound") {
  // A prepare()/exec() argument that concatenates may join only string literals and named
  // constants (kSomething): never a runtime value spliced into SQL; no formatting either.
  const std::regex call(R"([.>]\s*(prepare|exec)\(([^;]*?)\);)");
  const std::regex literal(R"("(\\.|[^"\\])*")");
  const std::regex allowed(R"(^[\s+()]*((std::string|k[A-Z][A-Za-z0-9_]*|"")[\s+()]*)*$)");
  std::size_t calls = 0;
  for (const auto& [path, text] : product_sources()) {
    if (path.find("/store/") == std::string::npos) continue;
    for (std::sregex_iterator it(text.begin(), text.end(), call), end; it != end; ++it) {
      const std::string args = std::regex_replace((*it)[2].str(), literal, "\"\"");
      INFO(path << ": " << (*it)[0].str());
      if (args.find('+') != std::string::npos) CHECK(std::regex_match(args, allowed));
      CHECK(args.find("format") == std::string::npos);
      CHECK(args.find("to_string") == std::string::npos);
      ++calls;
    }
  }
  CHECK(calls > 5);
}
