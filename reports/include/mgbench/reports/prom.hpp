#pragma once
// Prometheus text exposition (version 0.0.4) of a run's headline figures, for node_exporter's
// textfile collector: one series per point and figure, labelled as dcgm-exporter labels its GPU
// series where the two overlap (gpu, UUID, modelName, Hostname), plus workload, gpus and the
// point's parameters. A point on one device carries its UUID and model; a point on several lists
// their indices in `gpu` (and their model when they share one), and `mgbench_gpu_info` has one
// series per device with its UUID and model. Label values are cut to kPromMaxLabelBytes and names
// taken from the file to kPromMaxNameBytes, so the output grows with the points and figures, not
// with the devices per point. No timestamps (the textfile collector refuses them).
#include <cstddef>
#include <ostream>
#include <string>

#include "mgbench/model/results.hpp"
#include "mgbench/reports/printer.hpp"

namespace mgbench::reports {

// A longer label value keeps its first bytes (at a character boundary) and ends in "...".
inline constexpr std::size_t kPromMaxLabelBytes = 256;
inline constexpr std::size_t kPromMaxNameBytes = 128;

// "mgbench_" + `name` with every character outside [a-zA-Z0-9_:] replaced by '_'.
std::string prom_metric_name(const std::string& name);
// A label name: [a-zA-Z_][a-zA-Z0-9_]*, never starting with "__" (reserved).
std::string prom_label_name(const std::string& name);
// A label value inside its quotes: valid UTF-8 with \ " and newline escaped.
std::string prom_label_value(const std::string& value);

// Streams the exposition: nothing but the points' labels is held in memory.
void write_prom(const RunResult& run, std::ostream& out);

class PromPrinter final : public Printer {
 public:
  std::string name() const override { return "prom"; }
  std::vector<std::string> extensions() const override { return {".prom"}; }
  void print(const Printable& what, std::ostream& out) const override;
};

}  // namespace mgbench::reports
