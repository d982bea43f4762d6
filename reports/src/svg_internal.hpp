#pragma once
// Internal to the SVG charts: layout constants, text measuring, scales and ticks, markers,
// legends and the chart frame shared by the line and bar renderers.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/reports/svg.hpp"

namespace mgbench::reports::svg::detail {

inline constexpr double kTitleSize = 15;
inline constexpr double kSubtitleSize = 12;
inline constexpr double kTickSize = 11.5;
inline constexpr double kLabelSize = 12.5;
inline constexpr double kLegendSize = 12;
inline constexpr double kPadX = 12;  // inner padding of the plot along x, so edge markers show
inline constexpr const char* kFont =
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', 'DejaVu Sans', Arial, "
    "sans-serif";
inline constexpr const char* kInk = "#222222";
inline constexpr const char* kMuted = "#555555";
inline constexpr const char* kGrid = "#e4e4e4";
inline constexpr const char* kBand = "#9a9a9a";

inline constexpr double kLegendRow = 19;
inline constexpr double kMaxLegendText = 560;  // legend entries longer than this are cut
inline constexpr double kSwatch = 26;

double text_width(const std::string& text, double size);
// Cuts text to fit `width` pixels at `size`, ending in an ellipsis (UTF-8 safe).
std::string fit_text(const std::string& text, double size, double width);
std::string num(double v);
std::string esc(const std::string& s);

struct ScaleMap {
  Scale scale = Scale::linear;
  double lo = 0, hi = 1;  // domain
  double p0 = 0, p1 = 1;  // pixel range
  double t(double v) const {
    switch (scale) {
      case Scale::log2: return std::log2(v);
      case Scale::log10: return std::log10(v);
      case Scale::linear: break;
    }
    return v;
  }
  double operator()(double v) const {
    const double a = t(lo), b = t(hi);
    const double f = b == a ? 0.5 : (t(v) - a) / (b - a);
    return p0 + f * (p1 - p0);
  }
  bool drawable(double v) const { return std::isfinite(v) && (scale == Scale::linear || v > 0); }
};

struct Ticks {
  std::vector<double> major;   // gridlines
  std::vector<bool> labelled;  // parallel to major
  std::vector<std::string> labels;
  double lo = 0, hi = 1;  // domain chosen
};

// Domain and ticks for one axis over `extent_px` pixels; `horizontal`: labels must fit side by
// side; `snap_domain`: the domain grows to the outer ticks.
Ticks make_ticks(const Axis& axis, double lo, double hi, double extent_px, bool horizontal,
                 bool snap_domain);

std::string marker(int shape, double x, double y, const std::string& colour,
                   const std::string& title, const std::string& cls);
const char* dash_of(LineStyle style);

struct LegendItem {
  std::string name;
  std::string colour;
  LineStyle line = LineStyle::solid;
  int shape = -1;       // -1: no marker
  bool swatch = false;  // filled box (bars, bands)
  double opacity = 1;
};

struct LegendLayout {
  std::vector<std::pair<double, double>> pos;  // x, row
  int rows = 0;
};
LegendLayout layout_legend(const std::vector<LegendItem>& items, double width);

// The plot area of a chart.
struct Frame {
  double left = 0, right = 0, top = 0, plot_h = 0;
};
// The left margin: y tick labels, and the y label when there is one.
double left_margin(const Axis& y, const Ticks& ticks);
// Opens the grid group with horizontal grid lines at `grid_y` (pixels); the caller closes it.
std::string draw_frame(const Frame& f, const std::vector<double>& grid_y);
// Opens the axes group (tick font) with both axis lines; the caller closes it.
std::string open_axes(const Frame& f);
std::string x_axis_label(const std::string& label, const Frame& f, double y);
// The rotated y-axis label left of the plot ("" when there is none).
std::string y_axis_label(const std::string& label, double top, double plot_h);
// The end of a chart: "no data" when nothing was drawn, the legend below the plot, </svg>.
std::string close_chart(std::string out, bool any, const Frame& f,
                        const std::vector<LegendItem>& legend, const LegendLayout& legend_layout,
                        double legend_y);
std::string svg_open(const std::string& id, double width, double height, const std::string& title,
                     const std::string& kind);
double header_height(const std::string& subtitle);
std::string draw_header(const std::string& title, const std::string& subtitle, double width);

}  // namespace mgbench::reports::svg::detail
