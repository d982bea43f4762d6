#pragma once
// Self-contained SVG charts: line/scatter charts (linear, log2 or log10 axes, reference
// lines, shaded intervals) and stacked bar charts. No scripts, no external fonts; every
// string is XML-escaped. Reusable by other renderers (e.g. a comparison report overlays
// several runs' curves: one Series per run, per-point marker colours for verdicts).
#include <optional>
#include <string>
#include <vector>

namespace mgbench::reports::svg {

enum class Scale { linear, log2, log10 };
enum class TickFormat { number, bytes, integer };

struct Axis {
  std::string label;  // with unit, e.g. "busbw (GB/s)"
  Scale scale = Scale::linear;
  TickFormat format = TickFormat::number;
  std::optional<double> min, max;  // forced range (data range otherwise)
  bool zero_based = true;          // linear axes start at 0 unless the data go below
  std::vector<double> ticks;       // explicit tick values (linear axes), e.g. GPU counts
};

enum class LineStyle { solid, dashed, dotted, none };

struct Series {
  std::string name;
  std::vector<double> x, y;  // same length; non-finite values (and <= 0 on log axes) skipped
  int colour = -1;           // palette index; -1: the series' position in the chart
  LineStyle line = LineStyle::solid;
  bool markers = true;
  bool in_legend = true;
  std::vector<std::string> point_titles;  // optional tooltip per point
  std::vector<int> marker_colours;        // optional palette index per point (-1: series colour)
};

struct Band {  // a shaded x interval, e.g. throttled time
  double x0 = 0, x1 = 0;
};

struct RefLine {  // a labelled dashed reference line
  double value = 0;
  std::string label;
  bool vertical = false;  // vertical: at x = value; horizontal: at y = value
};

struct LineChart {
  std::string id;  // unique within a page; [a-z0-9-]
  std::string title, subtitle;
  Axis x, y;
  std::vector<Series> series;
  std::vector<Band> bands;
  std::string band_label;  // legend entry for bands (when there are any)
  std::vector<RefLine> ref_lines;
  int width = 640, height = 380;
};

struct Stack {
  std::string name;
  std::vector<double> values;  // one per category; non-finite or <= 0: nothing drawn
  int colour = -1;
};

struct StackedBarChart {
  std::string id, title, subtitle;
  std::vector<std::string> categories;  // x labels; '\n' splits a label into lines
  std::string x_label;
  Axis y;
  std::vector<Stack> stacks;  // drawn bottom to top
  int width = 640, height = 380;
};

// A grid of coloured cells (rows x columns), e.g. nodes x metrics or GPU x GPU: each value is
// placed on one colour ramp from dark (at or below `low`) to light (at or above `high`), so
// that, with "higher is better" values, the bad cells stand out. A cell without a value is
// grey with a dash.
struct HeatMap {
  std::string id, title, subtitle;
  std::vector<std::string> rows, columns;               // labels
  std::vector<std::vector<std::optional<double>>> values;  // [row][column]
  std::vector<std::vector<std::string>> text;    // optional text per cell (else the value)
  std::vector<std::vector<std::string>> titles;  // optional tooltip per cell
  double low = 0, high = 1;
  std::string low_label, high_label;  // the legend's ends
  int cell_width = 64, cell_height = 24;  // at least; a cell widens for its column's label
};

// Okabe–Ito colour-blind-safe palette ordered for lines on white.
const std::vector<std::string>& palette();
const std::string& palette_colour(int index);

// "Nice" ticks (1, 2, 5 x 10^k) covering [lo, hi]; about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target);
// `magnitude`: the axis' largest absolute tick, so all its labels share one suffix (k, M, G).
std::string format_tick(double value, TickFormat format, double step = 0, double magnitude = 0);

std::string render(const LineChart& chart);
std::string render(const StackedBarChart& chart);
std::string render(const HeatMap& chart);
// The ramp's colour of `value` ("#rrggbb"), and whether text on it should be white.
std::string heat_colour(const HeatMap& chart, double value);
bool heat_dark(const HeatMap& chart, double value);
// A complete standalone .svg file (XML declaration, white background).
std::string standalone(const std::string& svg_element);

// True when any series has at least one drawable point.
bool has_data(const LineChart& chart);
bool has_data(const StackedBarChart& chart);
bool has_data(const HeatMap& chart);

}  // namespace mgbench::reports::svg
