// The printers of every output format (printer.hpp), in one list.
#include "mgbench/reports/printer.hpp"

#include "mgbench/core/file_io.hpp"
#include "mgbench/reports/console.hpp"
#include "mgbench/reports/csv.hpp"
#include "mgbench/reports/gbench_json.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/junit.hpp"
#include "mgbench/reports/markdown.hpp"
#include "mgbench/reports/prom.hpp"

namespace mgbench::reports {

void Printer::write(const Printable& what, const std::string& path) const {
  write_file_atomic(path, [&](std::ostream& out) { print(what, out); });
}

const std::vector<std::unique_ptr<Printer>>& printers() {
  static const std::vector<std::unique_ptr<Printer>> all = [] {
    std::vector<std::unique_ptr<Printer>> list;
    list.push_back(std::make_unique<HtmlPrinter>());
    list.push_back(std::make_unique<MarkdownPrinter>());
    list.push_back(std::make_unique<CsvPrinter>());
    list.push_back(std::make_unique<ConsolePrinter>());
    list.push_back(std::make_unique<PromPrinter>());
    list.push_back(std::make_unique<GbenchPrinter>());
    list.push_back(std::make_unique<JunitPrinter>());
    return list;
  }();
  return all;
}

const Printer* find_printer(const std::string& name) {
  const std::string wanted = name == "markdown" ? "md" : name;
  for (const auto& p : printers()) {
    if (p->name() == wanted) return p.get();
  }
  return nullptr;
}

const Printer& printer(const std::string& name) {
  const Printer* found = find_printer(name);
  if (found == nullptr) throw std::logic_error("no printer '" + name + "'");
  return *found;
}

}  // namespace mgbench::reports
