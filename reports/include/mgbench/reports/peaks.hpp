#pragma once
// "% of peak" in the reports, from the run's derived shares (RunResult::peaks) and the
// presentation's peak declarations only: the column beside a metric, the summary's cell, the
// flag lines of values below what their GPU model usually reaches, and the note that says which
// GPU model row the percentages come from.
#include <string>
#include <vector>

#include "mgbench/model/results.hpp"

namespace mgbench::reports {

// The header of the "% of peak" column.
inline constexpr const char* kOfPeakHeader = "% of peak";

// "69 %" of `metric` of the point; "" when the run has no share for it.
std::string of_peak_cell(const RunResult& run, const PointResult& point, const std::string& metric);
// True for the one metric column of a table after which the "% of peak" column goes: the first
// whose metric declares a peak.
bool peak_column_after(const Presentation& presentation, const TableSpec& table,
                       const ColumnSpec& column);
// One line per point whose value is below what its GPU model usually reaches, with the causes.
std::vector<std::string> below_range_lines(const RunResult& run);
// Which datasheet row the percentages use (model, figures, source), or why there is none; ""
// when the run holds no shares and no GPU.
std::string gpu_model_note(const RunResult& run);

}  // namespace mgbench::reports
