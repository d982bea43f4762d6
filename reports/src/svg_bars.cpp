// SVG stacked bar charts in named phases: totals, category labels (split lines, rotated when
// they do not fit), layout, axes, bars, legend.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "mgbench/reports/format.hpp"
#include "svg_internal.hpp"

namespace mgbench::reports::svg {
namespace {

using namespace detail;

struct Categories {
  std::vector<std::vector<std::string>> lines;  // per category, split at '\n'
  std::vector<std::string> flat;                // lines joined by spaces
  std::size_t max_lines = 1;
  double max_line_w = 0, flat_w = 0;
};

Categories categories_of(const StackedBarChart& chart) {
  Categories c;
  const std::size_t n = chart.categories.size();
  c.lines.resize(n);
  c.flat.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string cur;
    for (char ch : chart.categories[i]) {
      if (ch == '\n') {
        c.lines[i].push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    c.lines[i].push_back(cur);
    c.max_lines = std::max(c.max_lines, c.lines[i].size());
    for (std::size_t k = 0; k < c.lines[i].size(); ++k) {
      c.max_line_w = std::max(c.max_line_w, text_width(c.lines[i][k], kTickSize));
      c.flat[i] += (k ? " " : "") + c.lines[i][k];
    }
    c.flat_w = std::max(c.flat_w, text_width(c.flat[i], kTickSize));
  }
  return c;
}

double stacked_max(const StackedBarChart& chart) {
  double yhi = 0;
  for (std::size_t c = 0; c < chart.categories.size(); ++c) {
    double total = 0;
    for (const auto& st : chart.stacks) {
      if (c < st.values.size() && std::isfinite(st.values[c]) && st.values[c] > 0)
        total += st.values[c];
    }
    yhi = std::max(yhi, total);
  }
  return yhi;
}

struct BarLayout {
  Frame f;
  double height = 0, cat_block = 0, x_axis_block = 0, band = 0, bar_w = 0;
  bool rotate = false;
  Ticks yt;
  ScaleMap ys;
  LegendLayout legend;
};

BarLayout layout_of(const StackedBarChart& chart, const Categories& cats, double yhi,
                    const std::vector<LegendItem>& legend) {
  BarLayout l;
  const std::size_t n = chart.categories.size();
  l.legend = layout_legend(legend, chart.width - 24);
  const double legend_h = l.legend.rows * kLegendRow;
  l.f.top = header_height(chart.subtitle) + 8;
  // Provisional left margin for the slot width estimate.
  const double slot = n ? (chart.width - 18 - (12 + 20 + 40)) / static_cast<double>(n) : 1;
  l.rotate = cats.max_line_w + 6 > slot;
  l.cat_block = l.rotate ? std::min(cats.flat_w, 160.0) * 0.6 + 14
                         : static_cast<double>(cats.max_lines) * 14 + 6;
  l.x_axis_block = 6 + l.cat_block + (chart.x_label.empty() ? 0 : 20);
  const double bottom_block = l.x_axis_block + (legend_h > 0 ? legend_h + 10 : 0) + 8;
  l.height = std::max<double>(chart.height, l.f.top + 200 + bottom_block);
  l.f.plot_h = l.height - l.f.top - bottom_block;
  Axis yaxis = chart.y;
  yaxis.scale = Scale::linear;
  yaxis.zero_based = true;
  l.yt = make_ticks(yaxis, 0, yhi, l.f.plot_h, false, true);
  l.f.left = left_margin(chart.y, l.yt);
  l.f.right = chart.width - 18;
  l.ys = ScaleMap{Scale::linear, l.yt.lo, l.yt.hi, l.f.top + l.f.plot_h, l.f.top};
  const double plot_w = l.f.right - l.f.left;
  l.band = n ? plot_w / static_cast<double>(n) : plot_w;
  l.bar_w = std::min(l.band * 0.62, 70.0);
  return l;
}

std::string draw_axes(const StackedBarChart& chart, const Categories& cats, const BarLayout& l) {
  const Frame& f = l.f;
  std::vector<double> grid_y;
  for (double v : l.yt.major) grid_y.push_back(l.ys(v));
  std::string out = draw_frame(f, grid_y) + "</g>" + open_axes(f);
  for (std::size_t i = 0; i < l.yt.major.size(); ++i) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(f.left - 6),
                       num(l.ys(l.yt.major[i]) + 4), esc(l.yt.labels[i]));
  }
  for (std::size_t c = 0; c < cats.lines.size(); ++c) {
    const double cx = f.left + l.band * (static_cast<double>(c) + 0.5);
    if (l.rotate) {
      const double y = f.top + f.plot_h + 14;
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" "
          "transform=\"rotate(-35 {} {})\">{}</text>",
          num(cx + 4), num(y), num(cx + 4), num(y), esc(fit_text(cats.flat[c], kTickSize, 160)));
      continue;
    }
    for (std::size_t k = 0; k < cats.lines[c].size(); ++k) {
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(cx),
                         num(f.top + f.plot_h + 18 + 14 * static_cast<double>(k)),
                         esc(cats.lines[c][k]));
    }
  }
  out += x_axis_label(chart.x_label, f, f.top + f.plot_h + 6 + l.cat_block + 16);
  return out + y_axis_label(chart.y.label, f.top, f.plot_h) + "</g>";
}

std::string draw_bars(const StackedBarChart& chart, const Categories& cats, const BarLayout& l) {
  std::string out = "<g class=\"plot\">";
  for (std::size_t c = 0; c < cats.flat.size(); ++c) {
    const double cx = l.f.left + l.band * (static_cast<double>(c) + 0.5);
    double base = 0;
    for (std::size_t si = 0; si < chart.stacks.size(); ++si) {
      const auto& st = chart.stacks[si];
      if (c >= st.values.size()) continue;
      const double v = st.values[c];
      if (!std::isfinite(v) || v <= 0) continue;
      const int colour = st.colour >= 0 ? st.colour : static_cast<int>(si);
      const double y0 = l.ys(base), y1 = l.ys(base + v);
      out += fmt::format(
          "<rect class=\"data bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "stroke=\"#ffffff\" stroke-width=\"0.8\"><title>{}</title></rect>",
          num(cx - l.bar_w / 2), num(y1), num(l.bar_w), num(std::max(0.5, y0 - y1)),
          palette_colour(colour), esc(cats.flat[c] + " · " + st.name + ": " + format_sig(v, 4)));
      base += v;
    }
  }
  return out + "</g>";
}

}  // namespace

std::string render(const StackedBarChart& chart) {
  double yhi = stacked_max(chart);
  const bool any = yhi > 0;
  yhi = (any ? yhi : 1) * 1.04;
  std::vector<LegendItem> legend;
  for (std::size_t i = 0; i < chart.stacks.size(); ++i) {
    const auto& st = chart.stacks[i];
    const int colour = st.colour >= 0 ? st.colour : static_cast<int>(i);
    legend.push_back({st.name, palette_colour(colour), LineStyle::none, -1, true, 1});
  }
  const Categories cats = categories_of(chart);
  const BarLayout l = layout_of(chart, cats, yhi, legend);
  std::string out = svg_open(chart.id, chart.width, l.height, chart.title, "bar-chart");
  out += draw_header(chart.title, chart.subtitle, chart.width);
  out += draw_axes(chart, cats, l) + draw_bars(chart, cats, l);
  return close_chart(std::move(out), any, l.f, legend, l.legend,
                     l.f.top + l.f.plot_h + l.x_axis_block + 16);
}

}  // namespace mgbench::reports::svg
