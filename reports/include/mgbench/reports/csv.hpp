#pragma once
// CSV: one row per point with every parameter, the statistics (seconds), the derived metrics,
// scaling figures, memory and telemetry summary. Columns are the union over all points.
#include <ostream>
#include <string>

#include "mgbench/model/results.hpp"
#include "mgbench/reports/printer.hpp"

namespace mgbench::reports {

void write_csv(const mgbench::RunResult& run, std::ostream& out);

class CsvPrinter final : public Printer {
 public:
  std::string name() const override { return "csv"; }
  std::vector<std::string> extensions() const override { return {".csv"}; }
  void print(const Printable& what, std::ostream& out) const override;
};

}  // namespace mgbench::reports
