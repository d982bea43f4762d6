// The FP64 host reference of the transformer step (see transformer_reference.hpp).
#include "training/transformer_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace mgbench::bench::transformer {

namespace {

using Vec = std::vector<double>;

// One layer's parameters (views into the flat array).
struct LayerWeights {
  const double* g1;
  const double* qkv;
  const double* out;
  const double* g2;
  const double* gate_up;
  const double* down;
};

LayerWeights weights_of(const ReferenceModel& m, const Vec& params, int layer) {
  const double* base = params.data() + static_cast<std::size_t>(layer) * m.layout.total;
  const auto at = [&](Segment s) { return base + m.layout.at(s).offset; };
  return {at(Segment::attn_norm), at(Segment::qkv),     at(Segment::out),
          at(Segment::mlp_norm),  at(Segment::gate_up), at(Segment::down)};
}

// Y[T x out] = store(X[T x in] W^T (+ R)); W row-major out x in.
Vec project(const Vec& x, const double* w, std::size_t tokens, std::size_t in, std::size_t out,
            StoreFn store, const Vec* residual = nullptr) {
  Vec y(tokens * out);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t o = 0; o < out; ++o) {
      double s = residual != nullptr ? (*residual)[t * out + o] : 0.0;
      for (std::size_t i = 0; i < in; ++i) s += x[t * in + i] * w[o * in + i];
      y[t * out + o] = store(s);
    }
  }
  return y;
}

// dX[T x in] = store(dY[T x out] W).
Vec project_back(const Vec& dy, const double* w, std::size_t tokens, std::size_t in,
                 std::size_t out, StoreFn store) {
  Vec dx(tokens * in, 0.0);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t i = 0; i < in; ++i) {
      double s = 0;
      for (std::size_t o = 0; o < out; ++o) s += dy[t * out + o] * w[o * in + i];
      dx[t * in + i] = store(s);
    }
  }
  return dx;
}

// dW[out x in] += dY^T X (fp32 gradients on the device: not rounded to 16 bits).
void weight_grad(const Vec& dy, const Vec& x, double* dw, std::size_t tokens, std::size_t in,
                 std::size_t out) {
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t o = 0; o < out; ++o) {
      const double d = dy[t * out + o];
      for (std::size_t i = 0; i < in; ++i) dw[o * in + i] += d * x[t * in + i];
    }
  }
}

// y = store(x / rms(x) * g) per token; rstd[t] = 1 / rms.
Vec rmsnorm(const Vec& x, const double* g, std::size_t tokens, std::size_t h, Vec& rstd,
            StoreFn store) {
  Vec y(tokens * h);
  rstd.assign(tokens, 0.0);
  for (std::size_t t = 0; t < tokens; ++t) {
    double ss = 0;
    for (std::size_t i = 0; i < h; ++i) ss += x[t * h + i] * x[t * h + i];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(h) + kNormEpsilon);
    rstd[t] = r;
    for (std::size_t i = 0; i < h; ++i) y[t * h + i] = store(x[t * h + i] * r * g[i]);
  }
  return y;
}

// dx = store(resid + r (g*dy - xhat mean(g*dy*xhat))); dg += sum_t dy * xhat.
Vec rmsnorm_back(const Vec& dy, const Vec& x, const double* g, const Vec& rstd, const Vec& resid,
                 double* dg, std::size_t tokens, std::size_t h, StoreFn store) {
  Vec dx(tokens * h);
  for (std::size_t t = 0; t < tokens; ++t) {
    const double r = rstd[t];
    double dot = 0;
    for (std::size_t i = 0; i < h; ++i) dot += g[i] * dy[t * h + i] * x[t * h + i] * r;
    dot /= static_cast<double>(h);
    for (std::size_t i = 0; i < h; ++i) {
      const double xhat = x[t * h + i] * r;
      dg[i] += dy[t * h + i] * xhat;
      dx[t * h + i] = store(resid[t * h + i] + r * (g[i] * dy[t * h + i] - xhat * dot));
    }
  }
  return dx;
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

struct LayerCache {
  Vec x, n1, rstd1, qkv, probs, ao, h1, n2, rstd2, gu, act;
};

// Column offsets of q head h and of kv head g's k and v in a qkv row.
struct HeadOffsets {
  std::size_t q, k, v;
};
HeadOffsets head_offsets(const LocalDims& d, std::size_t h) {
  const auto hd = static_cast<std::size_t>(d.head_dim);
  const std::size_t g = h / static_cast<std::size_t>(d.group());
  return {h * hd, static_cast<std::size_t>(d.q_heads) * hd + g * hd,
          static_cast<std::size_t>(d.q_heads + d.kv_heads) * hd + g * hd};
}

// Causal attention of every sequence and head: probs (sequences x heads x S x S, zero above the
// diagonal) and the attention output (tokens x heads*hd).
void attention(const ReferenceModel& m, LayerCache& c, StoreFn store) {
  const LocalDims& d = m.dims;
  const auto hd = static_cast<std::size_t>(d.head_dim), nq = static_cast<std::size_t>(d.q_heads);
  const std::size_t S = m.seq, qw = static_cast<std::size_t>(d.qkv_width()), aw = nq * hd;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  c.probs.assign(m.sequences * nq * S * S, 0.0);
  c.ao.assign(m.tokens() * aw, 0.0);
  for (std::size_t b = 0; b < m.sequences; ++b) {
    for (std::size_t h = 0; h < nq; ++h) {
      const HeadOffsets o = head_offsets(d, h);
      double* p = c.probs.data() + (b * nq + h) * S * S;
      for (std::size_t i = 0; i < S; ++i) {
        const double* q = c.qkv.data() + (b * S + i) * qw + o.q;
        double mx = -INFINITY;
        for (std::size_t j = 0; j <= i; ++j) {
          double s = 0;
          for (std::size_t e = 0; e < hd; ++e) s += q[e] * c.qkv[(b * S + j) * qw + o.k + e];
          p[i * S + j] = store(scale * s);
          mx = std::fmax(mx, p[i * S + j]);
        }
        double sum = 0;
        for (std::size_t j = 0; j <= i; ++j) sum += std::exp(p[i * S + j] - mx);
        for (std::size_t j = 0; j <= i; ++j) {
          p[i * S + j] = store(std::exp(p[i * S + j] - mx) / sum);
        }
        for (std::size_t e = 0; e < hd; ++e) {
          double s = 0;
          for (std::size_t j = 0; j <= i; ++j) {
            s += p[i * S + j] * c.qkv[(b * S + j) * qw + o.v + e];
          }
          c.ao[(b * S + i) * aw + h * hd + e] = store(s);
        }
      }
    }
  }
}

// The backward pass of attention: dao (tokens x heads*hd) -> dqkv (tokens x qkv width).
Vec attention_back(const ReferenceModel& m, const LayerCache& c, const Vec& dao, StoreFn store) {
  const LocalDims& d = m.dims;
  const auto hd = static_cast<std::size_t>(d.head_dim), nq = static_cast<std::size_t>(d.q_heads);
  const std::size_t S = m.seq, qw = static_cast<std::size_t>(d.qkv_width()), aw = nq * hd;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  Vec dqkv(m.tokens() * qw, 0.0), ds(S * S);
  for (std::size_t b = 0; b < m.sequences; ++b) {
    for (std::size_t h = 0; h < nq; ++h) {
      const HeadOffsets o = head_offsets(d, h);
      const double* p = c.probs.data() + (b * nq + h) * S * S;
      const auto row = [&](std::size_t tok) { return (b * S + tok); };
      for (std::size_t i = 0; i < S; ++i) {
        const double* g = dao.data() + row(i) * aw + h * hd;
        double dot = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          double dp = 0;
          for (std::size_t e = 0; e < hd; ++e) dp += g[e] * c.qkv[row(j) * qw + o.v + e];
          ds[i * S + j] = store(dp);
          dot += p[i * S + j] * ds[i * S + j];
          for (std::size_t e = 0; e < hd; ++e) dqkv[row(j) * qw + o.v + e] += p[i * S + j] * g[e];
        }
        for (std::size_t j = 0; j <= i; ++j) {
          ds[i * S + j] = store(p[i * S + j] * (ds[i * S + j] - dot));
        }
      }
      for (std::size_t i = 0; i < S; ++i) {
        for (std::size_t j = 0; j <= i; ++j) {
          for (std::size_t e = 0; e < hd; ++e) {
            dqkv[row(i) * qw + o.q + e] += scale * ds[i * S + j] * c.qkv[row(j) * qw + o.k + e];
            dqkv[row(j) * qw + o.k + e] += scale * ds[i * S + j] * c.qkv[row(i) * qw + o.q + e];
          }
        }
      }
    }
  }
  for (double& v : dqkv) v = store(v);
  return dqkv;
}

// Forward pass of every layer; returns the output and fills one cache per layer.
Vec forward(const ReferenceModel& m, const Vec& params, const Vec& x,
            std::vector<LayerCache>& caches, StoreFn store) {
  const LocalDims& d = m.dims;
  const std::size_t T = m.tokens(), h = static_cast<std::size_t>(d.hidden),
                    qw = static_cast<std::size_t>(d.qkv_width()),
                    aw = static_cast<std::size_t>(d.attn_width()),
                    mlp = static_cast<std::size_t>(d.mlp);
  caches.assign(static_cast<std::size_t>(m.layers), LayerCache{});
  Vec cur = x;
  for (int l = 0; l < m.layers; ++l) {
    LayerCache& c = caches[static_cast<std::size_t>(l)];
    const LayerWeights w = weights_of(m, params, l);
    c.x = cur;
    c.n1 = rmsnorm(c.x, w.g1, T, h, c.rstd1, store);
    c.qkv = project(c.n1, w.qkv, T, h, qw, store);
    attention(m, c, store);
    c.h1 = project(c.ao, w.out, T, aw, h, store, &c.x);
    c.n2 = rmsnorm(c.h1, w.g2, T, h, c.rstd2, store);
    c.gu = project(c.n2, w.gate_up, T, h, 2 * mlp, store);
    c.act.assign(T * mlp, 0.0);
    for (std::size_t t = 0; t < T; ++t) {
      for (std::size_t i = 0; i < mlp; ++i) {
        const double g = c.gu[t * 2 * mlp + i], u = c.gu[t * 2 * mlp + mlp + i];
        c.act[t * mlp + i] = store(g * sigmoid(g) * u);
      }
    }
    cur = project(c.act, w.down, T, mlp, h, store, &c.h1);
  }
  return cur;
}

// d(gate, up) from d(activation) (tokens x 2 mlp).
Vec swiglu_back(const Vec& dact, const Vec& gu, std::size_t tokens, std::size_t mlp,
                StoreFn store) {
  Vec dgu(tokens * 2 * mlp);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t i = 0; i < mlp; ++i) {
      const double g = gu[t * 2 * mlp + i], u = gu[t * 2 * mlp + mlp + i];
      const double sg = sigmoid(g), da = dact[t * mlp + i];
      dgu[t * 2 * mlp + i] = store(da * u * sg * (1.0 + g * (1.0 - sg)));
      dgu[t * 2 * mlp + mlp + i] = store(da * g * sg);
    }
  }
  return dgu;
}

// One layer's backward pass: dy (d of its output) -> d of its input; adds its gradients.
Vec backward_layer(const ReferenceModel& m, const LayerCache& c, const LayerWeights& w,
                   const Vec& dy, double* grads, StoreFn store) {
  const LocalDims& d = m.dims;
  const std::size_t T = m.tokens(), h = static_cast<std::size_t>(d.hidden),
                    qw = static_cast<std::size_t>(d.qkv_width()),
                    aw = static_cast<std::size_t>(d.attn_width()),
                    mlp = static_cast<std::size_t>(d.mlp);
  const auto grad = [&](Segment s) { return grads + m.layout.at(s).offset; };
  weight_grad(dy, c.act, grad(Segment::down), T, mlp, h);
  const Vec dact = project_back(dy, w.down, T, mlp, h, store);
  const Vec dgu = swiglu_back(dact, c.gu, T, mlp, store);
  weight_grad(dgu, c.n2, grad(Segment::gate_up), T, h, 2 * mlp);
  const Vec dn2 = project_back(dgu, w.gate_up, T, h, 2 * mlp, store);
  const Vec dh1 = rmsnorm_back(dn2, c.h1, w.g2, c.rstd2, dy, grad(Segment::mlp_norm), T, h, store);
  weight_grad(dh1, c.ao, grad(Segment::out), T, aw, h);
  const Vec dao = project_back(dh1, w.out, T, aw, h, store);
  const Vec dqkv = attention_back(m, c, dao, store);
  weight_grad(dqkv, c.n1, grad(Segment::qkv), T, h, qw);
  const Vec dn1 = project_back(dqkv, w.qkv, T, h, qw, store);
  return rmsnorm_back(dn1, c.x, w.g1, c.rstd1, dh1, grad(Segment::attn_norm), T, h, store);
}

}  // namespace

double store_exact(double v) { return v; }

double store_bf16(double v) {
  float f = static_cast<float>(v);
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) return static_cast<double>(f);  // inf, nan
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, sizeof f);
  return static_cast<double>(f);
}

double store_fp16(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  int exponent = 0;
  (void)std::frexp(v, &exponent);  // v = f 2^exponent, 0.5 <= |f| < 1
  const double quantum = std::ldexp(1.0, std::max(exponent - 11, -24));  // 11 significant bits
  return std::nearbyint(v / quantum) * quantum;
}

ReferenceModel reference_model(const ModelShape& shape, int layers, std::size_t seq,
                               std::size_t sequences) {
  ReferenceModel m;
  m.dims = local_dims(shape, 1);
  m.layout = layer_layout(m.dims);
  m.layers = layers;
  m.seq = seq;
  m.sequences = sequences;
  return m;
}

std::vector<double> reference_gradients(const ReferenceModel& m, const Vec& params, const Vec& x,
                                        const Vec& t, StoreFn store) {
  std::vector<LayerCache> caches;
  const Vec y = forward(m, params, x, caches, store);
  Vec dy(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) dy[i] = store(y[i] - t[i]);
  Vec grads(static_cast<std::size_t>(m.layers) * m.layout.total, 0.0);
  for (int l = m.layers - 1; l >= 0; --l) {
    double* g = grads.data() + static_cast<std::size_t>(l) * m.layout.total;
    dy = backward_layer(m, caches[static_cast<std::size_t>(l)], weights_of(m, params, l), dy, g,
                        store);
  }
  return grads;
}

Vec reference_output(const ReferenceModel& m, const Vec& params, const Vec& x, StoreFn store) {
  std::vector<LayerCache> caches;
  return forward(m, params, x, caches, store);
}

double reference_loss(const ReferenceModel& m, const Vec& params, const Vec& x, const Vec& t,
                      StoreFn store) {
  const Vec y = reference_output(m, params, x, store);
  double loss = 0;
  for (std::size_t i = 0; i < y.size(); ++i) loss += 0.5 * (y[i] - t[i]) * (y[i] - t[i]);
  return loss;
}

TensorErrors tensor_errors(const ReferenceModel& m, const Vec& got, const Vec& ref) {
  TensorErrors e;
  for (int l = 0; l < m.layers; ++l) {
    for (const SegmentSlot& s : m.layout.segments) {
      const std::size_t base = static_cast<std::size_t>(l) * m.layout.total + s.offset;
      double diff = 0, norm = 0;
      for (std::size_t i = base; i < base + s.count() && i < got.size() && i < ref.size(); ++i) {
        if (!std::isfinite(got[i])) ++e.nonfinite;
        diff += (got[i] - ref[i]) * (got[i] - ref[i]);
        norm += ref[i] * ref[i];
      }
      const double rel = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
      if (!(rel <= e.worst)) {  // NaN counts as the worst
        e.worst = rel;
        e.worst_layer = l;
        e.worst_segment = s.kind;
      }
    }
  }
  if (got.size() != ref.size()) e.worst = INFINITY;
  return e;
}

}  // namespace mgbench::bench::transformer
