// SVG chart rendering: line charts and stacked bars with axes, ticks and legends.
// Layout is computed here (text widths estimated), so labels do not overlap: x tick labels
// are thinned until they fit, legends wrap below the plot, long category labels rotate.
#include "mgbench/reports/svg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "mgbench/reports/format.hpp"
#include "mgbench/reports/table.hpp"

namespace mgbench::reports::svg {
namespace {

constexpr double kTitleSize = 15;
constexpr double kSubtitleSize = 12;
constexpr double kTickSize = 11.5;
constexpr double kLabelSize = 12.5;
constexpr double kLegendSize = 12;
constexpr double kPadX = 12;  // inner padding of the plot along x, so edge markers show
constexpr const char* kFont =
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', 'DejaVu Sans', Arial, "
    "sans-serif";
constexpr const char* kInk = "#222222";
constexpr const char* kMuted = "#555555";
constexpr const char* kGrid = "#e4e4e4";
constexpr const char* kBand = "#9a9a9a";

double text_width(const std::string& text, double size) {
  return static_cast<double>(display_width(text)) * size * 0.6;
}

// Cuts text to fit `width` pixels at `size`, ending in an ellipsis (UTF-8 safe).
std::string fit_text(const std::string& text, double size, double width) {
  if (text_width(text, size) <= width) return text;
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t len = 1;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0xF0)
      len = 4;
    else if (c >= 0xE0)
      len = 3;
    else if (c >= 0xC0)
      len = 2;
    const std::string next = out + text.substr(i, len);
    if (text_width(next + "…", size) > width) break;
    out = next;
    i += len;
  }
  return out + "…";
}

std::string num(double v) {
  if (!std::isfinite(v)) return "0";
  const double r = std::round(v * 10.0) / 10.0;
  if (r == std::floor(r)) return fmt::format("{}", static_cast<long long>(r));
  return fmt::format("{:.1f}", r);
}

std::string esc(const std::string& s) { return escape_xml(s); }

// --- scales ----------------------------------------------------------------------------------

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

double step_decimals_step(const std::vector<double>& ticks) {
  return ticks.size() >= 2 ? std::fabs(ticks[1] - ticks[0]) : 0.0;
}

// Domain and ticks for one axis. `extent_px` is the axis length; for the x axis
// `label_room` says whether labels must fit horizontally.
Ticks make_ticks(const Axis& axis, double lo, double hi, double extent_px, bool horizontal,
                 bool snap_domain) {
  Ticks t;
  if (axis.min) lo = *axis.min;
  if (axis.max) hi = *axis.max;
  if (!(lo < hi)) {
    if (axis.scale == Scale::linear) {
      const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.5;
      lo -= pad;
      hi += pad;
      if (axis.zero_based && lo < 0 && hi > 0 && !axis.min) lo = 0;
    } else {
      lo /= 2;
      hi *= 2;
    }
  }
  auto fits = [&](const std::vector<std::string>& labels, const std::vector<double>& pos,
                  const std::vector<bool>& on) {
    if (!horizontal)
      return static_cast<double>(std::count(on.begin(), on.end(), true)) * 18 <= extent_px + 18;
    double last_right = -1e9;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (!on[i]) continue;
      const double w = text_width(labels[i], kTickSize);
      if (pos[i] - w / 2 < last_right + 10) return false;
      last_right = pos[i] + w / 2;
    }
    return true;
  };
  if (axis.scale == Scale::linear && !axis.ticks.empty()) {
    // Explicit ticks (e.g. GPU counts 1, 2, 4, 8): labels thinned from the largest down.
    t.lo = lo;
    t.hi = hi;
    std::vector<double> pos;
    for (double v : axis.ticks) {
      if (v < lo || v > hi) continue;
      t.major.push_back(v);
      t.labels.push_back(format_tick(v, axis.format, 0));
      pos.push_back((v - lo) / (hi - lo) * extent_px);
    }
    for (std::size_t stride = 1; stride <= std::max<std::size_t>(1, t.major.size()); ++stride) {
      std::vector<bool> on(t.major.size(), false);
      for (std::size_t k = 0; k < t.major.size(); ++k)
        on[k] = (t.major.size() - 1 - k) % stride == 0;
      t.labelled = on;
      if (fits(t.labels, pos, on)) break;
    }
    return t;
  }
  if (axis.scale == Scale::linear) {
    for (int target = std::max(2, static_cast<int>(extent_px / (horizontal ? 70 : 42)));
         target >= 2; --target) {
      std::vector<double> ticks = nice_ticks(lo, hi, target);
      if (ticks.size() < 2) break;
      const double step = step_decimals_step(ticks);
      double dlo = lo, dhi = hi;
      if (snap_domain) {
        dlo = std::min(lo, ticks.front());
        dhi = std::max(hi, ticks.back());
      } else {
        // Extend to the next tick when it is close, so the axis ends on a label.
        const double span = hi - lo;
        if (ticks.back() > hi && ticks.back() - hi <= 0.12 * span && !axis.max) dhi = ticks.back();
        if (ticks.front() < lo && lo - ticks.front() <= 0.12 * span && !axis.min)
          dlo = ticks.front();
      }
      std::vector<double> keep;
      for (double v : ticks) {
        if (v >= dlo - step * 1e-9 && v <= dhi + step * 1e-9) keep.push_back(v);
      }
      std::vector<std::string> labels;
      std::vector<double> pos;
      const double magnitude = std::max(std::fabs(keep.front()), std::fabs(keep.back()));
      for (double v : keep) {
        labels.push_back(format_tick(v, axis.format, step, magnitude));
        pos.push_back((v - dlo) / (dhi - dlo) * extent_px);
      }
      std::vector<bool> on(keep.size(), true);
      t.major = keep;
      t.labels = labels;
      t.labelled = on;
      t.lo = dlo;
      t.hi = dhi;
      if (fits(labels, pos, on)) break;
    }
    return t;
  }
  // Logarithmic axes: ticks at powers of the base; labels thinned to fit.
  const double base = axis.scale == Scale::log2 ? 2.0 : 10.0;
  const auto lg = [&](double v) { return std::log(v) / std::log(base); };
  int e_lo = static_cast<int>(std::floor(lg(lo) + 1e-9));
  int e_hi = static_cast<int>(std::ceil(lg(hi) - 1e-9));
  if (e_hi <= e_lo) e_hi = e_lo + 1;
  t.lo = snap_domain ? std::pow(base, e_lo) : lo;
  t.hi = snap_domain ? std::pow(base, e_hi) : hi;
  std::vector<double> values;
  for (int e = e_lo; e <= e_hi; ++e) {
    const double v = std::pow(base, e);
    if (v >= t.lo * (1 - 1e-9) && v <= t.hi * (1 + 1e-9)) values.push_back(v);
  }
  // log10 spanning less than ~2 decades: add 2 and 5 multiples.
  if (axis.scale == Scale::log10 && values.size() < 3) {
    std::vector<double> more;
    for (int e = e_lo - 1; e <= e_hi; ++e) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, e);
        if (v >= t.lo * (1 - 1e-9) && v <= t.hi * (1 + 1e-9)) more.push_back(v);
      }
    }
    values = more;
  }
  const double a = lg(t.lo), b = lg(t.hi);
  std::vector<std::string> labels;
  std::vector<double> pos;
  for (double v : values) {
    labels.push_back(format_tick(v, axis.format, 0));
    pos.push_back(b == a ? 0 : (lg(v) - a) / (b - a) * extent_px);
  }
  t.major = values;
  t.labels = labels;
  // Smallest stride that fits, anchored at the largest value (so "1 GiB" is labelled).
  for (std::size_t stride = 1; stride <= values.size(); ++stride) {
    std::vector<bool> on(values.size(), false);
    for (std::size_t k = 0; k < values.size(); ++k) {
      on[k] = (values.size() - 1 - k) % stride == 0;
    }
    t.labelled = on;
    if (fits(labels, pos, on)) break;
  }
  return t;
}

// --- marker shapes (vary per series, so print in grey stays readable) -----------------------

std::string marker(int shape, double x, double y, const std::string& colour,
                   const std::string& title, const std::string& cls) {
  const double r = 3.6;
  std::string body;
  const std::string tip = title.empty() ? "" : "<title>" + esc(title) + "</title>";
  const std::string common =
      fmt::format(" class=\"{}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"0.8\"", cls, colour);
  switch (shape % 5) {
    case 1:
      return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{}>{}</rect>",
                         num(x - r), num(y - r), num(2 * r), num(2 * r), common, tip);
    case 2:
      return fmt::format("<path d=\"M{} {}L{} {}L{} {}Z\"{}>{}</path>", num(x), num(y - r * 1.2),
                         num(x + r * 1.1), num(y + r * 0.9), num(x - r * 1.1), num(y + r * 0.9),
                         common, tip);
    case 3:
      return fmt::format("<path d=\"M{} {}L{} {}L{} {}L{} {}Z\"{}>{}</path>", num(x),
                         num(y - r * 1.3), num(x + r * 1.3), num(y), num(x), num(y + r * 1.3),
                         num(x - r * 1.3), num(y), common, tip);
    case 4:
      return fmt::format("<path d=\"M{} {}L{} {}L{} {}Z\"{}>{}</path>", num(x), num(y + r * 1.2),
                         num(x + r * 1.1), num(y - r * 0.9), num(x - r * 1.1), num(y - r * 0.9),
                         common, tip);
    default:
      return fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\"{}>{}</circle>", num(x), num(y),
                         num(r), common, tip);
  }
}

const char* dash_of(LineStyle style) {
  switch (style) {
    case LineStyle::dashed: return " stroke-dasharray=\"7 4\"";
    case LineStyle::dotted: return " stroke-dasharray=\"2 3\"";
    default: return "";
  }
}

// --- legend ----------------------------------------------------------------------------------

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

constexpr double kLegendRow = 19;
constexpr double kMaxLegendText = 560;  // legend entries longer than this are cut
constexpr double kSwatch = 26;

LegendLayout layout_legend(const std::vector<LegendItem>& items, double width) {
  LegendLayout layout;
  double x = 0;
  int row = 0;
  for (const auto& item : items) {
    const double w =
        kSwatch + 6 + std::min(text_width(item.name, kLegendSize), kMaxLegendText) + 18;
    if (x > 0 && x + w > width) {
      x = 0;
      ++row;
    }
    layout.pos.emplace_back(x, row);
    x += w;
  }
  layout.rows = items.empty() ? 0 : row + 1;
  return layout;
}

std::string draw_legend(const std::vector<LegendItem>& items, const LegendLayout& layout,
                        double left, double top) {
  std::string out = "<g class=\"legend\">";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    const double x = left + layout.pos[i].first;
    const double y = top + layout.pos[i].second * kLegendRow;
    if (item.swatch) {
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"11\" fill=\"{}\" fill-opacity=\"{}\" "
          "stroke=\"{}\" stroke-width=\"0.6\"/>",
          num(x + 4), num(y - 9), num(kSwatch - 8), item.colour, item.opacity, kMuted);
    } else {
      if (item.line != LineStyle::none) {
        out += fmt::format(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
            num(x), num(y - 4), num(x + kSwatch), num(y - 4), item.colour, dash_of(item.line));
      }
      if (item.shape >= 0) out += marker(item.shape, x + kSwatch / 2, y - 4, item.colour, "", "");
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\">{}</text>",
                       num(x + kSwatch + 6), num(y), kLegendSize, kInk,
                       esc(fit_text(item.name, kLegendSize, kMaxLegendText)));
  }
  out += "</g>";
  return out;
}

// The rotated y-axis label left of the plot ("" when there is none).
std::string y_axis_label(const std::string& label, double top, double plot_h) {
  if (label.empty()) return "";
  const double cx = 18, cy = top + plot_h / 2;
  return fmt::format(
      "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" "
      "transform=\"rotate(-90 {} {})\">{}</text>",
      num(cx), num(cy), kLabelSize, num(cx), num(cy),
      esc(fit_text(label, kLabelSize, plot_h + 10)));
}

// The end of a chart: "no data" when nothing was drawn, the legend below the plot, </svg>.
std::string close_chart(std::string out, bool any, double left, double right, double top,
                        double plot_h, const std::vector<LegendItem>& legend,
                        const LegendLayout& legend_layout, double legend_y) {
  if (!any) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" "
        "fill=\"{}\">no data</text>",
        num((left + right) / 2), num(top + plot_h / 2), kMuted);
  }
  if (!legend.empty()) out += draw_legend(legend, legend_layout, 12, legend_y);
  out += "</svg>";
  return out;
}

std::string svg_open(const std::string& id, double width, double height, const std::string& title,
                     const std::string& kind) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart {}\" id=\"{}\" "
      "viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-labelledby=\"{}-title\" font-family=\"{}\">"
      "<title id=\"{}-title\">{}</title>"
      "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>",
      kind, esc(id), num(width), num(height), num(width), num(height), esc(id), kFont, esc(id),
      esc(title), num(width), num(height));
}

double header_height(const std::string& subtitle) { return subtitle.empty() ? 30 : 48; }

std::string draw_header(const std::string& title, const std::string& subtitle, double width) {
  std::string out = fmt::format(
      "<text class=\"chart-title\" x=\"12\" y=\"21\" font-size=\"{}\" font-weight=\"600\" "
      "fill=\"{}\">{}</text>",
      kTitleSize, kInk, esc(fit_text(title, kTitleSize * 1.05, width - 24)));
  if (!subtitle.empty()) {
    const std::string shown = fit_text(subtitle, kSubtitleSize, width - 24);
    out += fmt::format("<text x=\"12\" y=\"39\" font-size=\"{}\" fill=\"{}\">{}{}</text>",
                       kSubtitleSize, kMuted,
                       shown == subtitle ? "" : "<title>" + esc(subtitle) + "</title>", esc(shown));
  }
  return out;
}

}  // namespace

// --- public helpers -------------------------------------------------------------------------

const std::vector<std::string>& palette() {
  // Okabe & Ito (2008): blue, vermillion, bluish green, reddish purple, orange, sky blue,
  // black, yellow (last: weak on white).
  static const std::vector<std::string> colours = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                   "#E69F00", "#56B4E9", "#000000", "#F0E442"};
  return colours;
}

const std::string& palette_colour(int index) {
  const auto& p = palette();
  const std::size_t n = p.size() - 1;  // skip yellow when cycling
  return p[static_cast<std::size_t>(std::max(0, index)) % n];
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!std::isfinite(lo) || !std::isfinite(hi) || target < 1) return ticks;
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    ticks.push_back(lo);
    return ticks;
  }
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  const double first = std::floor(lo / step + 1e-9) * step;
  const double last = std::ceil(hi / step - 1e-9) * step;
  for (double v = first; v <= last + step * 0.5; v += step) {
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    if (ticks.size() > 1000) break;
  }
  return ticks;
}

std::string format_tick(double value, TickFormat format, double step, double magnitude) {
  if (format == TickFormat::bytes) return format_bytes_iec(value);
  if (value == 0) return "0";
  const double a = std::max(std::fabs(value), std::fabs(magnitude));
  if (format == TickFormat::integer && a < 1e6 && value == std::floor(value)) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  double scale = 1;
  const char* suffix = "";
  if (a >= 1e9) {
    scale = 1e9;
    suffix = "G";
  } else if (a >= 1e6) {
    scale = 1e6;
    suffix = "M";
  } else if (a >= 1e4) {
    scale = 1e3;
    suffix = "k";
  }
  const double v = value / scale;
  const double s = step > 0 ? step / scale : 0;
  int decimals = 0;
  if (s > 0 && s < 1) decimals = static_cast<int>(std::ceil(-std::log10(s) - 1e-9));
  if (s == 0 && v != std::floor(v)) {
    return format_sig(v, 3) + suffix;
  }
  decimals = std::clamp(decimals, 0, 6);
  return fmt::format("{:.{}f}{}", v, decimals, suffix);
}

bool has_data(const LineChart& chart) {
  for (const auto& s : chart.series) {
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      const bool xok = std::isfinite(s.x[i]) && (chart.x.scale == Scale::linear || s.x[i] > 0);
      const bool yok = std::isfinite(s.y[i]) && (chart.y.scale == Scale::linear || s.y[i] > 0);
      if (xok && yok) return true;
    }
  }
  return false;
}

bool has_data(const StackedBarChart& chart) {
  for (const auto& st : chart.stacks) {
    for (double v : st.values) {
      if (std::isfinite(v) && v > 0) return true;
    }
  }
  return false;
}

std::string standalone(const std::string& svg_element) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg_element + "\n";
}

// --- line chart -----------------------------------------------------------------------------

std::string render(const LineChart& chart) {
  const double W = chart.width;
  double H = chart.height;
  ScaleMap xs, ys;
  xs.scale = chart.x.scale;
  ys.scale = chart.y.scale;

  // Data extents.
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& s : chart.series) {
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!xs.drawable(s.x[i]) || !ys.drawable(s.y[i])) continue;
      xlo = std::min(xlo, s.x[i]);
      xhi = std::max(xhi, s.x[i]);
      ylo = std::min(ylo, s.y[i]);
      yhi = std::max(yhi, s.y[i]);
    }
  }
  const bool any = std::isfinite(xlo);
  if (!any) {
    xlo = chart.x.scale == Scale::linear ? 0 : 1;
    xhi = xlo * 2 + 1;
    ylo = chart.y.scale == Scale::linear ? 0 : 1;
    yhi = ylo * 2 + 1;
  }
  for (const auto& b : chart.bands) {
    if (xs.drawable(b.x0)) xlo = std::min(xlo, b.x0);
    if (xs.drawable(b.x1)) xhi = std::max(xhi, b.x1);
  }
  for (const auto& r : chart.ref_lines) {
    if (r.vertical && xs.drawable(r.value)) {
      xlo = std::min(xlo, r.value);
      xhi = std::max(xhi, r.value);
    } else if (!r.vertical && ys.drawable(r.value)) {
      ylo = std::min(ylo, r.value);
      yhi = std::max(yhi, r.value);
    }
  }
  if (chart.y.scale == Scale::linear && chart.y.zero_based) {
    ylo = std::min(ylo, 0.0);
    yhi = std::max(yhi, 0.0);
  }
  if (chart.x.scale == Scale::linear && chart.x.zero_based) xlo = std::min(xlo, 0.0);
  // Headroom above the highest point on linear y axes.
  if (chart.y.scale == Scale::linear && yhi > ylo) yhi += (yhi - ylo) * 0.04;

  // Legend entries.
  std::vector<LegendItem> legend;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    if (!s.in_legend || s.name.empty()) continue;
    const int colour = s.colour >= 0 ? s.colour : static_cast<int>(i);
    legend.push_back({s.name, palette_colour(colour), s.line, s.markers ? colour : -1, false, 1});
  }
  if (!chart.bands.empty())
    legend.push_back({chart.band_label, kBand, LineStyle::none, -1, true, 0.3});

  const double header = header_height(chart.subtitle);
  const LegendLayout legend_layout = layout_legend(legend, W - 24);
  const double legend_h = legend_layout.rows * kLegendRow;

  // Y ticks first (their label width sets the left margin); the plot height is known.
  const double top = header + 8;
  const double x_axis_block = 8 + 16 + (chart.x.label.empty() ? 0 : 20);
  const double bottom_block = x_axis_block + (legend_h > 0 ? legend_h + 10 : 0) + 8;
  H = std::max(H, top + 200 + bottom_block);
  const double plot_h = H - top - bottom_block;
  const Ticks yt = make_ticks(chart.y, ylo, yhi, plot_h, false, true);
  double ylabel_w = 0;
  for (const auto& l : yt.labels) ylabel_w = std::max(ylabel_w, text_width(l, kTickSize));
  const double left = 12 + (chart.y.label.empty() ? 0 : 20) + ylabel_w + 8;
  const double right = W - 18;
  const double plot_w = right - left;
  const Ticks xt = make_ticks(chart.x, xlo, xhi, plot_w - 2 * kPadX, true, false);

  xs.lo = xt.lo;
  xs.hi = xt.hi;
  xs.p0 = left + kPadX;
  xs.p1 = right - kPadX;
  ys.lo = yt.lo;
  ys.hi = yt.hi;
  ys.p0 = top + plot_h;
  ys.p1 = top;

  const std::string& id = chart.id;
  std::string out = svg_open(id, W, H, chart.title, "line-chart");
  out += draw_header(chart.title, chart.subtitle, W);
  out += fmt::format(
      "<defs><clipPath id=\"{}-clip\"><rect x=\"{}\" y=\"{}\" width=\"{}\" "
      "height=\"{}\"/></clipPath></defs>",
      esc(id), num(left), num(top - 4), num(plot_w), num(plot_h + 8));

  // Bands (below the grid).
  if (!chart.bands.empty()) {
    out += "<g class=\"bands\">";
    for (const auto& b : chart.bands) {
      if (!xs.drawable(b.x0) || !xs.drawable(b.x1)) continue;
      double x0 = std::clamp(xs(b.x0), left, right), x1 = std::clamp(xs(b.x1), left, right);
      if (x1 - x0 < 1.5) {  // keep short intervals visible
        x0 -= 0.75;
        x1 += 0.75;
      }
      out += fmt::format(
          "<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
          "fill=\"{}\" fill-opacity=\"0.3\"/>",
          num(x0), num(top), num(x1 - x0), num(plot_h), kBand);
    }
    out += "</g>";
  }

  // Grid and axes.
  out += "<g class=\"grid\">";
  for (double v : yt.major) {
    const double y = ys(v);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(left),
                       num(y), num(right), num(y), kGrid);
  }
  for (double v : xt.major) {
    const double x = xs(v);
    if (x < left - 0.5 || x > right + 0.5) continue;
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(x),
                       num(top), num(x), num(top + plot_h), kGrid);
  }
  out += "</g><g class=\"axes\" font-size=\"" + num(kTickSize) + "\" fill=\"" + kInk + "\">";
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(left),
                     num(top + plot_h), num(right), num(top + plot_h), kMuted);
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(left),
                     num(top), num(left), num(top + plot_h), kMuted);
  for (std::size_t i = 0; i < yt.major.size(); ++i) {
    if (!yt.labelled.empty() && !yt.labelled[i]) continue;
    const double y = ys(yt.major[i]);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(left - 6),
                       num(y + 4), esc(yt.labels[i]));
  }
  for (std::size_t i = 0; i < xt.major.size(); ++i) {
    const double x = xs(xt.major[i]);
    if (x < left - 0.5 || x > right + 0.5) continue;
    const bool labelled = xt.labelled.empty() || xt.labelled[i];
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(x),
                       num(top + plot_h), num(x), num(top + plot_h + (labelled ? 5 : 3)), kMuted);
    if (!labelled) continue;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(x),
                       num(top + plot_h + 19), esc(xt.labels[i]));
  }
  if (!chart.x.label.empty()) {
    out += fmt::format(
        "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\">{}"
        "</text>",
        num((left + right) / 2), num(top + plot_h + 39), kLabelSize,
        esc(fit_text(chart.x.label, kLabelSize, plot_w)));
  }
  out += y_axis_label(chart.y.label, top, plot_h);
  out += "</g>";

  // Reference lines; labels of vertical ones are staggered so neighbours do not collide.
  int vertical_labels = 0;
  for (const auto& r : chart.ref_lines) {
    if (r.vertical) {
      if (!xs.drawable(r.value)) continue;
      const double x = xs(r.value);
      out += fmt::format(
          "<g class=\"ref-line\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>",
          num(x), num(top), num(x), num(top + plot_h), kInk);
      const std::string label = fit_text(r.label, kTickSize, plot_w * 0.6);
      const double w = text_width(label, kTickSize);
      const bool flip = x + 4 + w > right;
      const double label_y = top + 12 + 14 * (vertical_labels++ % 4);
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\">{}</text></g>",
          num(flip ? x - 4 : x + 4), num(label_y), kTickSize, flip ? "end" : "start", kInk,
          esc(label));
    } else {
      if (!ys.drawable(r.value)) continue;
      const double y = ys(r.value);
      out += fmt::format(
          "<g class=\"ref-line\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
          "stroke=\"{}\" stroke-width=\"1.2\" stroke-dasharray=\"5 3\"/>",
          num(left), num(y), num(right), num(y), kMuted);
      const bool below = y - 5 < top + 10;
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"end\" fill=\"{}\">{}</text></g>",
          num(right - 4), num(below ? y + 14 : y - 5), kTickSize, kMuted,
          esc(fit_text(r.label, kTickSize, plot_w * 0.6)));
    }
  }

  // Series.
  out += fmt::format("<g class=\"plot\" clip-path=\"url(#{}-clip)\">", esc(id));
  for (std::size_t si = 0; si < chart.series.size(); ++si) {
    const auto& s = chart.series[si];
    const int colour = s.colour >= 0 ? s.colour : static_cast<int>(si);
    const std::string& c = palette_colour(colour);
    out += "<g class=\"series\" data-name=\"" + esc(s.name) + "\">";
    std::vector<std::pair<double, double>> pts;
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!xs.drawable(s.x[i]) || !ys.drawable(s.y[i])) continue;
      pts.emplace_back(xs(s.x[i]), ys(s.y[i]));
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
    if (s.markers || pts.size() == 1) {
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
    }
    out += "</g>";
  }
  out += "</g>";
  return close_chart(std::move(out), any, left, right, top, plot_h, legend, legend_layout,
                     top + plot_h + x_axis_block + 16);
}

// --- stacked bars ---------------------------------------------------------------------------

std::string render(const StackedBarChart& chart) {
  const double W = chart.width;
  double H = chart.height;
  const std::size_t n = chart.categories.size();
  double yhi = 0;
  for (std::size_t c = 0; c < n; ++c) {
    double total = 0;
    for (const auto& st : chart.stacks) {
      if (c < st.values.size() && std::isfinite(st.values[c]) && st.values[c] > 0)
        total += st.values[c];
    }
    yhi = std::max(yhi, total);
  }
  const bool any = yhi > 0;
  if (!any) yhi = 1;
  yhi *= 1.04;

  std::vector<LegendItem> legend;
  for (std::size_t i = 0; i < chart.stacks.size(); ++i) {
    const auto& st = chart.stacks[i];
    const int colour = st.colour >= 0 ? st.colour : static_cast<int>(i);
    legend.push_back({st.name, palette_colour(colour), LineStyle::none, -1, true, 1});
  }
  const double header = header_height(chart.subtitle);
  const LegendLayout legend_layout = layout_legend(legend, W - 24);
  const double legend_h = legend_layout.rows * kLegendRow;

  // Category labels: split lines; rotate when the widest line does not fit its slot.
  std::vector<std::vector<std::string>> lines(n);
  std::size_t max_lines = 1;
  double max_line_w = 0;
  for (std::size_t c = 0; c < n; ++c) {
    std::string cur;
    for (char ch : chart.categories[c]) {
      if (ch == '\n') {
        lines[c].push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    lines[c].push_back(cur);
    max_lines = std::max(max_lines, lines[c].size());
    for (const auto& l : lines[c]) max_line_w = std::max(max_line_w, text_width(l, kTickSize));
  }

  const double top = header + 8;
  // Provisional left margin for the slot width estimate.
  const double approx_left = 12 + 20 + 40;
  const double slot = n ? (W - 18 - approx_left) / static_cast<double>(n) : 1;
  const bool rotate = max_line_w + 6 > slot;
  std::vector<std::string> flat(n);
  for (std::size_t c = 0; c < n; ++c) {
    for (std::size_t k = 0; k < lines[c].size(); ++k) flat[c] += (k ? " " : "") + lines[c][k];
  }
  double flat_w = 0;
  for (const auto& f : flat) flat_w = std::max(flat_w, text_width(f, kTickSize));
  const double cat_block =
      rotate ? std::min(flat_w, 160.0) * 0.6 + 14 : static_cast<double>(max_lines) * 14 + 6;
  const double x_axis_block = 6 + cat_block + (chart.x_label.empty() ? 0 : 20);
  const double bottom_block = x_axis_block + (legend_h > 0 ? legend_h + 10 : 0) + 8;
  H = std::max(H, top + 200 + bottom_block);
  const double plot_h = H - top - bottom_block;
  Axis yaxis = chart.y;
  yaxis.scale = Scale::linear;
  yaxis.zero_based = true;
  const Ticks yt = make_ticks(yaxis, 0, yhi, plot_h, false, true);
  double ylabel_w = 0;
  for (const auto& l : yt.labels) ylabel_w = std::max(ylabel_w, text_width(l, kTickSize));
  const double left = 12 + (chart.y.label.empty() ? 0 : 20) + ylabel_w + 8;
  const double right = W - 18;
  const double plot_w = right - left;
  ScaleMap ys;
  ys.lo = yt.lo;
  ys.hi = yt.hi;
  ys.p0 = top + plot_h;
  ys.p1 = top;

  const std::string& id = chart.id;
  std::string out = svg_open(id, W, H, chart.title, "bar-chart");
  out += draw_header(chart.title, chart.subtitle, W);
  out += "<g class=\"grid\">";
  for (double v : yt.major) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(left),
                       num(ys(v)), num(right), num(ys(v)), kGrid);
  }
  out += "</g><g class=\"axes\" font-size=\"" + num(kTickSize) + "\" fill=\"" + kInk + "\">";
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(left),
                     num(top + plot_h), num(right), num(top + plot_h), kMuted);
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(left),
                     num(top), num(left), num(top + plot_h), kMuted);
  for (std::size_t i = 0; i < yt.major.size(); ++i) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(left - 6),
                       num(ys(yt.major[i]) + 4), esc(yt.labels[i]));
  }
  const double band = n ? plot_w / static_cast<double>(n) : plot_w;
  const double bar_w = std::min(band * 0.62, 70.0);
  for (std::size_t c = 0; c < n; ++c) {
    const double cx = left + band * (static_cast<double>(c) + 0.5);
    if (rotate) {
      const double y = top + plot_h + 14;
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" "
          "transform=\"rotate(-35 {} {})\">{}</text>",
          num(cx + 4), num(y), num(cx + 4), num(y), esc(fit_text(flat[c], kTickSize, 160)));
    } else {
      for (std::size_t k = 0; k < lines[c].size(); ++k) {
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(cx),
                           num(top + plot_h + 18 + 14 * static_cast<double>(k)), esc(lines[c][k]));
      }
    }
  }
  if (!chart.x_label.empty()) {
    out += fmt::format(
        "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\">{}"
        "</text>",
        num((left + right) / 2), num(top + plot_h + 6 + cat_block + 16), kLabelSize,
        esc(fit_text(chart.x_label, kLabelSize, plot_w)));
  }
  out += y_axis_label(chart.y.label, top, plot_h);
  out += "</g><g class=\"plot\">";
  for (std::size_t c = 0; c < n; ++c) {
    const double cx = left + band * (static_cast<double>(c) + 0.5);
    double base = 0;
    for (std::size_t si = 0; si < chart.stacks.size(); ++si) {
      const auto& st = chart.stacks[si];
      if (c >= st.values.size()) continue;
      const double v = st.values[c];
      if (!std::isfinite(v) || v <= 0) continue;
      const int colour = st.colour >= 0 ? st.colour : static_cast<int>(si);
      const double y0 = ys(base), y1 = ys(base + v);
      out += fmt::format(
          "<rect class=\"data bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "stroke=\"#ffffff\" stroke-width=\"0.8\"><title>{}</title></rect>",
          num(cx - bar_w / 2), num(y1), num(bar_w), num(std::max(0.5, y0 - y1)),
          palette_colour(colour), esc(flat[c] + " · " + st.name + ": " + format_sig(v, 4)));
      base += v;
    }
  }
  out += "</g>";
  return close_chart(std::move(out), any, left, right, top, plot_h, legend, legend_layout,
                     top + plot_h + x_axis_block + 16);
}

}  // namespace mgbench::reports::svg
