#pragma once
// CSV: one row per point with every parameter, the statistics (seconds), the derived metrics,
// scaling figures, memory and telemetry summary. Columns are the union over all points.
#include <ostream>
#include <string>

#include "mgbench/model/results.hpp"

namespace mgbench::reports {

void write_csv(const mgbench::RunResult& run, std::ostream& out);
// Writes to a file; throws UsageError when it cannot be written.
void write_csv_file(const mgbench::RunResult& run, const std::string& path);

}  // namespace mgbench::reports
