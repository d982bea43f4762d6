// SVG charts: the shared pieces (text, markers, legend, frame, header) and the public helpers
// (palette, ticks, formats). Line charts are in svg_line.cpp, bars in svg_bars.cpp, ticks in
// svg_ticks.cpp. Every string is XML-escaped.
#include "mgbench/reports/svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "mgbench/reports/format.hpp"
#include "mgbench/reports/table.hpp"
#include "svg_internal.hpp"

namespace mgbench::reports::svg {
namespace detail {

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

// Marker shapes vary per series, so print in grey stays readable.
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

namespace {
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
}  // namespace

double left_margin(const Axis& y, const Ticks& ticks) {
  double label_w = 0;
  for (const auto& l : ticks.labels) label_w = std::max(label_w, text_width(l, kTickSize));
  return 12 + (y.label.empty() ? 0 : 20) + label_w + 8;
}

std::string draw_frame(const Frame& f, const std::vector<double>& grid_y) {
  std::string out = "<g class=\"grid\">";
  for (double y : grid_y) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(f.left),
                       num(y), num(f.right), num(y), kGrid);
  }
  return out;
}

std::string open_axes(const Frame& f) {
  std::string out = "<g class=\"axes\" font-size=\"" + num(kTickSize) + "\" fill=\"" + kInk + "\">";
  const double bottom = f.top + f.plot_h;
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(f.left),
                     num(bottom), num(f.right), num(bottom), kMuted);
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>", num(f.left),
                     num(f.top), num(f.left), num(bottom), kMuted);
  return out;
}

std::string x_axis_label(const std::string& label, const Frame& f, double y) {
  if (label.empty()) return "";
  return fmt::format(
      "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\">{}"
      "</text>",
      num((f.left + f.right) / 2), num(y), kLabelSize,
      esc(fit_text(label, kLabelSize, f.right - f.left)));
}

std::string y_axis_label(const std::string& label, double top, double plot_h) {
  if (label.empty()) return "";
  const double cx = 18, cy = top + plot_h / 2;
  return fmt::format(
      "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" "
      "transform=\"rotate(-90 {} {})\">{}</text>",
      num(cx), num(cy), kLabelSize, num(cx), num(cy),
      esc(fit_text(label, kLabelSize, plot_h + 10)));
}

std::string close_chart(std::string out, bool any, const Frame& f,
                        const std::vector<LegendItem>& legend, const LegendLayout& legend_layout,
                        double legend_y) {
  if (!any) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" "
        "fill=\"{}\">no data</text>",
        num((f.left + f.right) / 2), num(f.top + f.plot_h / 2), kMuted);
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

}  // namespace detail

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

}  // namespace mgbench::reports::svg
