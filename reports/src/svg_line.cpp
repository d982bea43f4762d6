// SVG line charts in named phases: data extents, layout (legend, margins, ticks), bands, grid
// and axes, reference lines, series, legend.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "mgbench/reports/format.hpp"
#include "svg_internal.hpp"

namespace mgbench::reports::svg {
namespace {

using namespace detail;

struct Extents {
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  bool any = false;
};

Extents data_extents(const LineChart& chart, const ScaleMap& xs, const ScaleMap& ys) {
  Extents e;
  for (const auto& s : chart.series) {
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!xs.drawable(s.x[i]) || !ys.drawable(s.y[i])) continue;
      e.xlo = std::min(e.xlo, s.x[i]);
      e.xhi = std::max(e.xhi, s.x[i]);
      e.ylo = std::min(e.ylo, s.y[i]);
      e.yhi = std::max(e.yhi, s.y[i]);
    }
  }
  e.any = std::isfinite(e.xlo);
  if (!e.any) {
    e.xlo = chart.x.scale == Scale::linear ? 0 : 1;
    e.xhi = e.xlo * 2 + 1;
    e.ylo = chart.y.scale == Scale::linear ? 0 : 1;
    e.yhi = e.ylo * 2 + 1;
  }
  for (const auto& b : chart.bands) {
    if (xs.drawable(b.x0)) e.xlo = std::min(e.xlo, b.x0);
    if (xs.drawable(b.x1)) e.xhi = std::max(e.xhi, b.x1);
  }
  for (const auto& r : chart.ref_lines) {
    if (r.vertical && xs.drawable(r.value)) {
      e.xlo = std::min(e.xlo, r.value);
      e.xhi = std::max(e.xhi, r.value);
    } else if (!r.vertical && ys.drawable(r.value)) {
      e.ylo = std::min(e.ylo, r.value);
      e.yhi = std::max(e.yhi, r.value);
    }
  }
  if (chart.y.scale == Scale::linear && chart.y.zero_based) {
    e.ylo = std::min(e.ylo, 0.0);
    e.yhi = std::max(e.yhi, 0.0);
  }
  if (chart.x.scale == Scale::linear && chart.x.zero_based) e.xlo = std::min(e.xlo, 0.0);
  // Headroom above the highest point on linear y axes.
  if (chart.y.scale == Scale::linear && e.yhi > e.ylo) e.yhi += (e.yhi - e.ylo) * 0.04;
  return e;
}

std::vector<LegendItem> legend_of(const LineChart& chart) {
  std::vector<LegendItem> legend;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    if (!s.in_legend || s.name.empty()) continue;
    const int colour = s.colour >= 0 ? s.colour : static_cast<int>(i);
    legend.push_back({s.name, palette_colour(colour), s.line, s.markers ? colour : -1, false, 1});
  }
  if (!chart.bands.empty())
    legend.push_back({chart.band_label, kBand, LineStyle::none, -1, true, 0.3});
  return legend;
}

struct Layout {
  Frame f;
  double height = 0, x_axis_block = 0;
  Ticks xt, yt;
  ScaleMap xs, ys;
  LegendLayout legend;
};

// Y ticks first (their label width sets the left margin); the plot height is known.
Layout layout_of(const LineChart& chart, const Extents& e, const std::vector<LegendItem>& legend) {
  Layout l;
  l.legend = layout_legend(legend, chart.width - 24);
  const double legend_h = l.legend.rows * kLegendRow;
  l.f.top = header_height(chart.subtitle) + 8;
  l.x_axis_block = 8 + 16 + (chart.x.label.empty() ? 0 : 20);
  const double bottom_block = l.x_axis_block + (legend_h > 0 ? legend_h + 10 : 0) + 8;
  l.height = std::max<double>(chart.height, l.f.top + 200 + bottom_block);
  l.f.plot_h = l.height - l.f.top - bottom_block;
  l.yt = make_ticks(chart.y, e.ylo, e.yhi, l.f.plot_h, false, true);
  l.f.left = left_margin(chart.y, l.yt);
  l.f.right = chart.width - 18;
  l.xt = make_ticks(chart.x, e.xlo, e.xhi, l.f.right - l.f.left - 2 * kPadX, true, false);
  l.xs = ScaleMap{chart.x.scale, l.xt.lo, l.xt.hi, l.f.left + kPadX, l.f.right - kPadX};
  l.ys = ScaleMap{chart.y.scale, l.yt.lo, l.yt.hi, l.f.top + l.f.plot_h, l.f.top};
  return l;
}

// Shaded x intervals, below the grid.
std::string draw_bands(const LineChart& chart, const Layout& l) {
  if (chart.bands.empty()) return {};
  std::string out = "<g class=\"bands\">";
  for (const auto& b : chart.bands) {
    if (!l.xs.drawable(b.x0) || !l.xs.drawable(b.x1)) continue;
    double x0 = std::clamp(l.xs(b.x0), l.f.left, l.f.right);
    double x1 = std::clamp(l.xs(b.x1), l.f.left, l.f.right);
    if (x1 - x0 < 1.5) {  // keep short intervals visible
      x0 -= 0.75;
      x1 += 0.75;
    }
    out += fmt::format(
        "<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
        "fill=\"{}\" fill-opacity=\"0.3\"/>",
        num(x0), num(l.f.top), num(x1 - x0), num(l.f.plot_h), kBand);
  }
  return out + "</g>";
}

std::string draw_axes(const LineChart& chart, const Layout& l) {
  const Frame& f = l.f;
  const double bottom = f.top + f.plot_h;
  std::vector<double> grid_y;
  for (double v : l.yt.major) grid_y.push_back(l.ys(v));
  std::string out = draw_frame(f, grid_y);
  for (double v : l.xt.major) {
    const double x = l.xs(v);
    if (x < f.left - 0.5 || x > f.right + 0.5) continue;
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(x),
                       num(f.top), num(x), num(bottom), kGrid);
  }
  out += "</g>" + open_axes(f);
  for (std::size_t i = 0; i < l.yt.major.size(); ++i) {
    if (!l.yt.labelled.empty() && !l.yt.labelled[i]) continue;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(f.left - 6),
                       num(l.ys(l.yt.major[i]) + 4), esc(l.yt.labels[i]));
  }
  for (std::size_t i = 0; i < l.xt.major.size(); ++i) {
    const double x = l.xs(l.xt.major[i]);
    if (x < f.left - 0.5 || x > f.right + 0.5) continue;
    const bool labelled = l.xt.labelled.empty() || l.xt.labelled[i];
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(x),
                       num(bottom), num(x), num(bottom + (labelled ? 5 : 3)), kMuted);
    if (!labelled) continue;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(x),
                       num(bottom + 19), esc(l.xt.labels[i]));
  }
  out += x_axis_label(chart.x.label, f, bottom + 39);
  return out + y_axis_label(chart.y.label, f.top, f.plot_h) + "</g>";
}

// Reference lines; labels of vertical ones are staggered so neighbours do not collide.
std::string draw_ref_lines(const LineChart& chart, const Layout& l) {
  const Frame& f = l.f;
  const double plot_w = f.right - f.left;
  std::string out;
  int vertical_labels = 0;
  for (const auto& r : chart.ref_lines) {
    if (r.vertical) {
      if (!l.xs.drawable(r.value)) continue;
      const double x = l.xs(r.value);
      out += fmt::format(
          "<g class=\"ref-line\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>",
          num(x), num(f.top), num(x), num(f.top + f.plot_h), kInk);
      const std::string label = fit_text(r.label, kTickSize, plot_w * 0.6);
      const bool flip = x + 4 + text_width(label, kTickSize) > f.right;
      const double label_y = f.top + 12 + 14 * (vertical_labels++ % 4);
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\">{}</text></g>",
          num(flip ? x - 4 : x + 4), num(label_y), kTickSize, flip ? "end" : "start", kInk,
          esc(label));
    } else {
      if (!l.ys.drawable(r.value)) continue;
      const double y = l.ys(r.value);
      out += fmt::format(
          "<g class=\"ref-line\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"{}\" stroke-width=\"1.2\" stroke-dasharray=\"5 3\"/>",
          num(f.left), num(y), num(f.right), num(y), kMuted);
      const bool below = y - 5 < f.top + 10;
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"end\" fill=\"{}\">{}</text></g>",
          num(f.right - 4), num(below ? y + 14 : y - 5), kTickSize, kMuted,
          esc(fit_text(r.label, kTickSize, plot_w * 0.6)));
    }
  }
  return out;
}

std::string draw_series(const LineChart& chart, const Series& s, int colour, const Layout& l) {
  const std::string& c = palette_colour(colour);
  std::string out = "<g class=\"series\" data-name=\"" + esc(s.name) + "\">";
  std::vector<std::pair<double, double>> pts;
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
    if (!l.xs.drawable(s.x[i]) || !l.ys.drawable(s.y[i])) continue;
    pts.emplace_back(l.xs(s.x[i]), l.ys(s.y[i]));
    idx.push_back(i);
  }
  if (s.line != LineStyle::none && pts.size() >= 2) {
    std::string points;
    for (const auto& p : pts) points += num(p.first) + "," + num(p.second) + " ";
    points.pop_back();
    out += fmt::format(
        "<polyline class=\"data line\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"{}\" stroke-linejoin=\"round\"{}/>",
        points, c, s.line == LineStyle::solid ? "2.2" : "1.6", dash_of(s.line));
  }
  if (!s.markers && pts.size() != 1) return out + "</g>";
  for (std::size_t k = 0; k < pts.size(); ++k) {
    const std::size_t i = idx[k];
    const int mc =
        i < s.marker_colours.size() && s.marker_colours[i] >= 0 ? s.marker_colours[i] : colour;
    std::string tip = i < s.point_titles.size() ? s.point_titles[i] : std::string();
    if (tip.empty()) {
      tip = (s.name.empty() ? "" : s.name + ": ") + format_tick(s.x[i], chart.x.format) + ", " +
            format_sig(s.y[i], 4);
    }
    out += marker(colour, pts[k].first, pts[k].second, palette_colour(mc), tip, "data point");
  }
  return out + "</g>";
}

}  // namespace

std::string render(const LineChart& chart) {
  const ScaleMap xs{chart.x.scale}, ys{chart.y.scale};
  const Extents e = data_extents(chart, xs, ys);
  const std::vector<LegendItem> legend = legend_of(chart);
  const Layout l = layout_of(chart, e, legend);
  const std::string& id = chart.id;
  std::string out = svg_open(id, chart.width, l.height, chart.title, "line-chart");
  out += draw_header(chart.title, chart.subtitle, chart.width);
  out += fmt::format(
      "<defs><clipPath id=\"{}-clip\"><rect x=\"{}\" y=\"{}\" width=\"{}\" "
      "height=\"{}\"/></clipPath></defs>",
      esc(id), num(l.f.left), num(l.f.top - 4), num(l.f.right - l.f.left), num(l.f.plot_h + 8));
  out += draw_bands(chart, l) + draw_axes(chart, l) + draw_ref_lines(chart, l);
  out += fmt::format("<g class=\"plot\" clip-path=\"url(#{}-clip)\">", esc(id));
  for (std::size_t si = 0; si < chart.series.size(); ++si) {
    const auto& s = chart.series[si];
    out += draw_series(chart, s, s.colour >= 0 ? s.colour : static_cast<int>(si), l);
  }
  out += "</g>";
  return close_chart(std::move(out), e.any, l.f, legend, l.legend,
                     l.f.top + l.f.plot_h + l.x_axis_block + 16);
}

}  // namespace mgbench::reports::svg
