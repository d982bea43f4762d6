// The heat-map chart kind (svg.hpp): a grid of cells on one colour ramp, row and column labels,
// a legend of the ramp.
#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "svg_internal.hpp"

namespace mgbench::reports::svg {

namespace {

using namespace detail;

// Dark red to the lightest cream (ColorBrewer OrRd): one hue, lightness carries the value.
constexpr std::array<std::array<double, 4>, 4> kRamp = {{{0.0, 0x7f, 0x00, 0x00},
                                                        {0.45, 0xd7, 0x30, 0x1f},
                                                        {0.8, 0xfd, 0xbb, 0x84},
                                                        {1.0, 0xff, 0xf7, 0xec}}};
constexpr const char* kNoValue = "#e6e6e6";

double position(const HeatMap& chart, double value) {
  if (!(chart.high > chart.low)) return value >= chart.high ? 1.0 : 0.0;
  return std::clamp((value - chart.low) / (chart.high - chart.low), 0.0, 1.0);
}

std::string ramp(double t) {
  for (std::size_t i = 1; i < kRamp.size(); ++i) {
    if (t > kRamp[i][0] && i + 1 < kRamp.size()) continue;
    const auto& a = kRamp[i - 1];
    const auto& b = kRamp[i];
    const double f = b[0] > a[0] ? std::clamp((t - a[0]) / (b[0] - a[0]), 0.0, 1.0) : 0.0;
    const auto mix = [&](std::size_t k) {
      return static_cast<int>(std::lround(a[k] + f * (b[k] - a[k])));
    };
    return fmt::format("#{:02x}{:02x}{:02x}", mix(1), mix(2), mix(3));
  }
  return "#fff7ec";
}

const std::string& cell_of(const std::vector<std::vector<std::string>>& grid, std::size_t r,
                           std::size_t c) {
  static const std::string none;
  return r < grid.size() && c < grid[r].size() ? grid[r][c] : none;
}

}  // namespace

std::string heat_colour(const HeatMap& chart, double value) {
  return ramp(position(chart, value));
}

bool heat_dark(const HeatMap& chart, double value) { return position(chart, value) < 0.5; }

bool has_data(const HeatMap& chart) {
  for (const auto& row : chart.values) {
    for (const auto& v : row) {
      if (v && std::isfinite(*v)) return true;
    }
  }
  return false;
}

std::string render(const HeatMap& chart) {
  double label_w = 0, column_w = chart.cell_width;
  for (const auto& r : chart.rows) label_w = std::max(label_w, text_width(r, kTickSize));
  for (const auto& c : chart.columns) column_w = std::max(column_w, text_width(c, kTickSize) + 12);
  label_w = std::min(label_w, 220.0);
  column_w = std::min(column_w, 150.0);
  const double left = 12 + label_w + 10;
  const double top = header_height(chart.subtitle) + 22;
  const double cell_h = chart.cell_height;
  const double rows_h = cell_h * static_cast<double>(chart.rows.size());
  const double header_w = std::max(text_width(chart.title, kTitleSize * 1.05),
                                    text_width(chart.subtitle, kSubtitleSize)) + 24;
  const double width = std::max({360.0, std::min(header_w, 900.0),
                                 left + column_w * static_cast<double>(chart.columns.size()) + 12});
  const double height = top + rows_h + 46;
  std::string out = svg_open(chart.id, width, height, chart.title, "heatmap");
  out += draw_header(chart.title, chart.subtitle, width);
  for (std::size_t c = 0; c < chart.columns.size(); ++c) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" "
                       "fill=\"{}\">{}</text>",
                       num(left + column_w * (static_cast<double>(c) + 0.5)), num(top - 7),
                       kTickSize, kInk, esc(fit_text(chart.columns[c], kTickSize, column_w - 4)));
  }
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const double y = top + cell_h * static_cast<double>(r);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"{}\" "
                       "fill=\"{}\">{}</text>",
                       num(left - 8), num(y + cell_h / 2 + 4), kTickSize, kInk,
                       esc(fit_text(chart.rows[r], kTickSize, label_w)));
    for (std::size_t c = 0; c < chart.columns.size(); ++c) {
      const double x = left + column_w * static_cast<double>(c);
      double value = 0;
      bool has = false;
      if (r < chart.values.size() && c < chart.values[r].size() && chart.values[r][c]) {
        value = chart.values[r][c].value_or(0.0);
        has = std::isfinite(value);
      }
      std::string text = cell_of(chart.text, r, c);
      if (text.empty()) text = has ? fmt::format("{:.3g}", value) : "–";
      const std::string& title = cell_of(chart.titles, r, c);
      out += fmt::format("<g class=\"cell\">{}<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                         "fill=\"{}\" stroke=\"#ffffff\"/><text x=\"{}\" y=\"{}\" "
                         "text-anchor=\"middle\" font-size=\"{}\" fill=\"{}\">{}</text></g>",
                         title.empty() ? "" : "<title>" + esc(title) + "</title>", num(x), num(y),
                         num(column_w), num(cell_h), has ? heat_colour(chart, value) : kNoValue,
                         num(x + column_w / 2), num(y + cell_h / 2 + 4), kTickSize,
                         has && heat_dark(chart, value) ? "#ffffff" : kInk,
                         esc(fit_text(text, kTickSize, column_w - 6)));
    }
  }
  // The legend: the ramp in five steps from `low` to `high`.
  const double ly = top + rows_h + 16;
  out += fmt::format("<text x=\"12\" y=\"{}\" font-size=\"{}\" fill=\"{}\">{}</text>",
                     num(ly + 11), kLegendSize, kMuted, esc(chart.low_label));
  const double lx = 18 + text_width(chart.low_label, kLegendSize);
  for (int i = 0; i < 5; ++i) {
    const double value = chart.low + (chart.high - chart.low) * i / 4.0;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"22\" height=\"14\" fill=\"{}\"/>",
                       num(lx + 22.0 * i), num(ly), heat_colour(chart, value));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\">{}</text>",
                     num(lx + 22 * 5 + 6), num(ly + 11), kLegendSize, kMuted,
                     esc(chart.high_label));
  if (!has_data(chart)) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" "
                       "fill=\"{}\">no data</text>",
                       num(width / 2), num(top + rows_h / 2 + 4), kMuted);
  }
  return out + "</svg>";
}

}  // namespace mgbench::reports::svg
