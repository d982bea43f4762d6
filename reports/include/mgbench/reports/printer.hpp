#pragma once
// One interface for every output format, as nvbench's printer_base and Google Benchmark's
// BenchmarkReporter: a printer renders what it is given (a run and, for a comparison format, the
// comparison of that run with a base) onto a stream or into a file. Each format is one class in
// its own file (console, Markdown, CSV, HTML, Prometheus, JUnit, gbench JSON); printers() lists
// them, and `mgbench report --format`, `compare --junit` and the sweep's sinks pick them by name.
// Adding a format is one class and one line in printers() (printer.cpp).
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "mgbench/analysis/compare.hpp"
#include "mgbench/analysis/prediction.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench::reports {

// What a printer renders: a run and, for a comparison format, the comparison of a base run with
// it (`run` is then the new one); `prediction`, when given, the prediction of the run
// (`report --predict`) that a format with charts draws beside the measured scaling.
struct Printable {
  const RunResult& run;
  const Comparison* comparison = nullptr;
  const Prediction* prediction = nullptr;
};

class Printer {
 public:
  virtual ~Printer() = default;
  // The --format name ("html").
  virtual std::string name() const = 0;
  // What `mgbench report` writes without -o: this file beside the results ("report.html"), or,
  // when empty, standard output.
  virtual std::string default_file() const { return ""; }
  // The extensions of -o that choose this format (".md"); none: only --format names it.
  virtual std::vector<std::string> extensions() const { return {}; }
  // Whether it renders a comparison (Printable::comparison) rather than a run alone.
  virtual bool needs_comparison() const { return false; }
  // Whether print() works: false where the format writes files beside its own (Markdown's
  // charts), which only write() does.
  virtual bool streams() const { return true; }
  // Whether it draws the run's charts (and so Printable::prediction on the efficiency chart).
  virtual bool draws_charts() const { return false; }
  // Renders onto `out`.
  virtual void print(const Printable& what, std::ostream& out) const = 0;
  // Writes `path` atomically (print() into it, unless the format writes more); throws
  // EnvironmentError or UsageError when it cannot be written.
  virtual void write(const Printable& what, const std::string& path) const;
};

// Every printer, in the order the help names them: html, md, csv, text, prom, gbench, junit.
const std::vector<std::unique_ptr<Printer>>& printers();
// The printer of the --format `name` ("markdown" is md); nullptr when none has it.
const Printer* find_printer(const std::string& name);
// The printer `name`, which must exist (the callers name built-in formats).
const Printer& printer(const std::string& name);

}  // namespace mgbench::reports
