// Axis domains and ticks of the SVG charts: explicit ticks, "nice" linear ticks and powers of
// the base on log axes, labels thinned until they fit.
#include <algorithm>
#include <cmath>

#include "svg_internal.hpp"

namespace mgbench::reports::svg::detail {
namespace {

struct TickFit {
  double extent_px = 0;
  bool horizontal = false;
};

bool labels_fit(const TickFit& fit, const std::vector<std::string>& labels,
                const std::vector<double>& pos, const std::vector<bool>& on) {
  if (!fit.horizontal) {
    return static_cast<double>(std::count(on.begin(), on.end(), true)) * 18 <= fit.extent_px + 18;
  }
  double last_right = -1e9;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (!on[i]) continue;
    const double w = text_width(labels[i], kTickSize);
    if (pos[i] - w / 2 < last_right + 10) return false;
    last_right = pos[i] + w / 2;
  }
  return true;
}

// The smallest stride that fits, anchored at the largest value (so "1 GiB" is labelled).
void thin_labels(Ticks& t, const std::vector<double>& pos, const TickFit& fit) {
  const std::size_t n = t.major.size();
  for (std::size_t stride = 1; stride <= std::max<std::size_t>(1, n); ++stride) {
    std::vector<bool> on(n, false);
    for (std::size_t k = 0; k < n; ++k) on[k] = (n - 1 - k) % stride == 0;
    t.labelled = on;
    if (labels_fit(fit, t.labels, pos, on)) break;
  }
}

// An empty or inverted range widened so the axis has a span.
void pad_domain(const Axis& axis, double& lo, double& hi) {
  if (lo < hi) return;
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

// Explicit ticks (e.g. GPU counts 1, 2, 4, 8): labels thinned from the largest down.
Ticks explicit_ticks(const Axis& axis, double lo, double hi, const TickFit& fit) {
  Ticks t;
  t.lo = lo;
  t.hi = hi;
  std::vector<double> pos;
  for (double v : axis.ticks) {
    if (v < lo || v > hi) continue;
    t.major.push_back(v);
    t.labels.push_back(format_tick(v, axis.format, 0));
    pos.push_back((v - lo) / (hi - lo) * fit.extent_px);
  }
  thin_labels(t, pos, fit);
  return t;
}

// The domain of nice `ticks` over [lo, hi]: snapped to the outer ticks, or extended to a tick
// that is close, so the axis ends on a label.
std::pair<double, double> linear_domain(const Axis& axis, const std::vector<double>& ticks,
                                        double lo, double hi, bool snap_domain) {
  if (snap_domain) return {std::min(lo, ticks.front()), std::max(hi, ticks.back())};
  const double span = hi - lo;
  double dlo = lo, dhi = hi;
  if (ticks.back() > hi && ticks.back() - hi <= 0.12 * span && !axis.max) dhi = ticks.back();
  if (ticks.front() < lo && lo - ticks.front() <= 0.12 * span && !axis.min) dlo = ticks.front();
  return {dlo, dhi};
}

Ticks linear_ticks(const Axis& axis, double lo, double hi, const TickFit& fit, bool snap_domain) {
  Ticks t;
  for (int target = std::max(2, static_cast<int>(fit.extent_px / (fit.horizontal ? 70 : 42)));
       target >= 2; --target) {
    const std::vector<double> ticks = nice_ticks(lo, hi, target);
    if (ticks.size() < 2) break;
    const double step = std::fabs(ticks[1] - ticks[0]);
    const auto [dlo, dhi] = linear_domain(axis, ticks, lo, hi, snap_domain);
    std::vector<double> keep;
    for (double v : ticks) {
      if (v >= dlo - step * 1e-9 && v <= dhi + step * 1e-9) keep.push_back(v);
    }
    std::vector<std::string> labels;
    std::vector<double> pos;
    const double magnitude = std::max(std::fabs(keep.front()), std::fabs(keep.back()));
    for (double v : keep) {
      labels.push_back(format_tick(v, axis.format, step, magnitude));
      pos.push_back((v - dlo) / (dhi - dlo) * fit.extent_px);
    }
    const std::vector<bool> on(keep.size(), true);
    t.major = keep;
    t.labels = labels;
    t.labelled = on;
    t.lo = dlo;
    t.hi = dhi;
    if (labels_fit(fit, labels, pos, on)) break;
  }
  return t;
}

// Powers of the base within [lo, hi]; log10 spanning less than ~2 decades adds 2 and 5 multiples.
std::vector<double> log_values(const Axis& axis, const Ticks& t, int e_lo, int e_hi, double base) {
  std::vector<double> values;
  const auto inside = [&](double v) { return v >= t.lo * (1 - 1e-9) && v <= t.hi * (1 + 1e-9); };
  for (int e = e_lo; e <= e_hi; ++e) {
    const double v = std::pow(base, e);
    if (inside(v)) values.push_back(v);
  }
  if (axis.scale != Scale::log10 || values.size() >= 3) return values;
  std::vector<double> more;
  for (int e = e_lo - 1; e <= e_hi; ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (inside(v)) more.push_back(v);
    }
  }
  return more;
}

Ticks log_ticks(const Axis& axis, double lo, double hi, const TickFit& fit, bool snap_domain) {
  Ticks t;
  const double base = axis.scale == Scale::log2 ? 2.0 : 10.0;
  const auto lg = [&](double v) { return std::log(v) / std::log(base); };
  const int e_lo = static_cast<int>(std::floor(lg(lo) + 1e-9));
  int e_hi = static_cast<int>(std::ceil(lg(hi) - 1e-9));
  if (e_hi <= e_lo) e_hi = e_lo + 1;
  t.lo = snap_domain ? std::pow(base, e_lo) : lo;
  t.hi = snap_domain ? std::pow(base, e_hi) : hi;
  t.major = log_values(axis, t, e_lo, e_hi, base);
  const double a = lg(t.lo), b = lg(t.hi);
  std::vector<double> pos;
  for (double v : t.major) {
    t.labels.push_back(format_tick(v, axis.format, 0));
    pos.push_back(b == a ? 0 : (lg(v) - a) / (b - a) * fit.extent_px);
  }
  thin_labels(t, pos, fit);
  return t;
}

}  // namespace

Ticks make_ticks(const Axis& axis, double lo, double hi, double extent_px, bool horizontal,
                 bool snap_domain) {
  if (axis.min) lo = *axis.min;
  if (axis.max) hi = *axis.max;
  pad_domain(axis, lo, hi);
  const TickFit fit{extent_px, horizontal};
  if (axis.scale == Scale::linear && !axis.ticks.empty()) return explicit_ticks(axis, lo, hi, fit);
  if (axis.scale == Scale::linear) return linear_ticks(axis, lo, hi, fit, snap_domain);
  return log_ticks(axis, lo, hi, fit, snap_domain);
}

}  // namespace mgbench::reports::svg::detail
