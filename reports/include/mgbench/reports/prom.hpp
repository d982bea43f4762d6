#pragma once
// Prometheus text exposition (version 0.0.4) of a run's headline figures, for node_exporter's
// textfile collector: one series per point and figure, labelled as dcgm-exporter labels its GPU
// series where the two overlap (gpu, UUID, modelName, Hostname), plus workload, gpus and the
// point's parameters. No timestamps (the textfile collector refuses them).
#include <ostream>
#include <string>

#include "mgbench/model/results.hpp"

namespace mgbench::reports {

// "mgbench_" + `name` with every character outside [a-zA-Z0-9_:] replaced by '_'.
std::string prom_metric_name(const std::string& name);
// A label name: [a-zA-Z_][a-zA-Z0-9_]*, never starting with "__" (reserved).
std::string prom_label_name(const std::string& name);
// A label value inside its quotes: valid UTF-8 with \ " and newline escaped.
std::string prom_label_value(const std::string& value);

void write_prom(const RunResult& run, std::ostream& out);
// Writes to a file atomically; throws EnvironmentError when it cannot be written.
void write_prom_file(const RunResult& run, const std::string& path);

}  // namespace mgbench::reports
