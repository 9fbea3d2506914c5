// The FFT primitives on the CPU (runtime/ops/fft.def): ampjit::_fft_r2c, _fft_c2r and _fft_c2c,
// complex values as (real, imaginary) pairs in a trailing dimension of 2 (Note [FFTs without a
// complex dtype] in kernels/fft_meta.h). A transform copies its input into a contiguous array of
// complex doubles, transforms it one dim at a time with KISS FFT (every line of a dim in parallel,
// each thread with its own plan: a plan keeps scratch space), scales it once and rounds it once
// into the result's dtype.
#include <kissfft.hh>

#include <complex>
#include <vector>

#include "kernels/fft_meta.h"
#include "runtime/boxing.h"
#include "runtime/strided_loop.h"

namespace ampjit::cpu {

namespace {

using cpx = std::complex<double>;

// A signal being transformed: its values, contiguous in `sizes`.
struct Signal {
  DimVector sizes;
  std::vector<cpx> values;

  int64_t inner(int64_t d) const {  // the stride of dim d
    int64_t s = 1;
    for (size_t k = static_cast<size_t>(d) + 1; k < sizes.size(); ++k) s *= sizes[k];
    return s;
  }
};

// `self` as a Signal: a real tensor with zero imaginary parts, or pairs (the last dim).
Signal load(const Tensor& self, bool pairs) {
  Signal s;
  s.sizes.assign(self.sizes().begin(), self.sizes().end() - (pairs ? 1 : 0));
  const Tensor x = self.to(ScalarType::Float64).contiguous();
  const double* p = x.data<double>();
  s.values.resize(static_cast<size_t>(numel_of(s.sizes)));
  for (size_t i = 0; i < s.values.size(); ++i)
    s.values[i] = pairs ? cpx(p[2 * i], p[2 * i + 1]) : cpx(p[i], 0.0);
  return s;
}

// Runs body(state, base) for every line of `s` along dim d in parallel, where the line's
// elements are values[base + k * stride]. `make` builds a thread's state once per chunk.
template <typename Make, typename Body>
void for_lines(const Signal& s, int64_t d, int64_t len, Make&& make, Body&& body) {
  const int64_t stride = s.inner(d);
  int64_t lines = stride;
  for (int64_t k = 0; k < d; ++k) lines *= s.sizes[k];
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, len));
  parallel_for(lines, grain, [&](int64_t begin, int64_t end) {
    auto state = make();
    for (int64_t l = begin; l < end; ++l) body(state, (l / stride) * len * stride + l % stride);
  });
}

// Transforms `s` along dim d in place, unnormalized (inverse: exp(+2 pi i jk / n)).
void transform_dim(Signal& s, int64_t d, bool inverse) {
  const int64_t n = s.sizes[d];
  const int64_t stride = s.inner(d);
  if (s.values.empty()) return;
  struct State {
    kissfft<double> plan;
    std::vector<cpx> out;
  };
  for_lines(
      s, d, n,
      [&] {
        return State{kissfft<double>(static_cast<size_t>(n), inverse),
                     std::vector<cpx>(static_cast<size_t>(n))};
      },
      [&](State& st, int64_t base) {
        cpx* line = s.values.data() + base;
        st.plan.transform(line, st.out.data(), 0, 1, static_cast<size_t>(stride));
        for (int64_t k = 0; k < n; ++k) line[k * stride] = st.out[static_cast<size_t>(k)];
      });
}

// The inverse transform of Hermitian-symmetric lines along dim d, of which `s` holds the first
// n / 2 + 1 values: each line is completed by symmetry (the imaginary parts of the values at 0 and,
// for even n, at n / 2 are dropped, as pocketfft's c2r drops them) and transformed; the real parts
// of the result have n values along d.
Signal c2r_dim(const Signal& s, int64_t d, int64_t n) {
  Signal out;
  out.sizes = s.sizes;
  out.sizes[d] = n;
  out.values.resize(static_cast<size_t>(numel_of(out.sizes)));
  if (out.values.empty()) return out;
  const int64_t half = s.sizes[d];
  const int64_t in_stride = s.inner(d), out_stride = out.inner(d);
  struct State {
    kissfft<double> plan;
    std::vector<cpx> full, res;
  };
  // The lines of `out` along d, and the same line of `s`.
  for_lines(
      out, d, n,
      [&] {
        return State{kissfft<double>(static_cast<size_t>(n), true),
                     std::vector<cpx>(static_cast<size_t>(n)),
                     std::vector<cpx>(static_cast<size_t>(n))};
      },
      [&](State& st, int64_t base) {
        const int64_t line = base / (n * out_stride) * (half * in_stride) + base % out_stride;
        const cpx* x = s.values.data() + line;
        for (int64_t k = 0; k <= n / 2; ++k) {
          const cpx v = x[k * in_stride];
          const bool real_only = k == 0 || 2 * k == n;
          st.full[static_cast<size_t>(k)] = real_only ? cpx(v.real(), 0.0) : v;
          if (!real_only) st.full[static_cast<size_t>(n - k)] = std::conj(v);
        }
        st.plan.transform(st.full.data(), st.res.data());
        cpx* y = out.values.data() + base;
        for (int64_t k = 0; k < n; ++k)
          y[k * out_stride] = cpx(st.res[static_cast<size_t>(k)].real());
      });
  return out;
}

// The result tensor in `dtype`: the signal's values times `scale`, as pairs or real parts.
Tensor store(const Signal& s, double scale, bool pairs, ScalarType dtype) {
  DimVector sizes = s.sizes;
  if (pairs) sizes.push_back(2);
  Tensor out = Tensor::empty(sizes, ScalarType::Float64);
  double* p = out.data<double>();
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (pairs) {
      p[2 * i] = s.values[i].real() * scale;
      p[2 * i + 1] = s.values[i].imag() * scale;
    } else {
      p[i] = s.values[i].real() * scale;
    }
  }
  return dtype == ScalarType::Float64 ? out : out.to(dtype);
}

int64_t signal_numel(const DimVector& sizes, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[d];
  return n;
}

Tensor fft_r2c_k(const Tensor& self, std::vector<int64_t> dim, int64_t normalization,
                 bool onesided) {
  meta::check_fft_input(self, false, "_fft_r2c");
  const std::vector<int64_t> dims = meta::fft_dims(dim, self.dim(), "_fft_r2c");
  const DimVector out_sizes = meta::fft_r2c_sizes(self, dims, onesided);
  Signal s = load(self, false);
  const double scale = meta::fft_scale(normalization, signal_numel(s.sizes, dims));
  for (int64_t d : dims) transform_dim(s, d, false);
  if (onesided) {  // the first n / 2 + 1 values along the last dim
    const int64_t d = dims.back(), n = s.sizes[d], half = out_sizes[d];
    Signal kept;
    kept.sizes = s.sizes;
    kept.sizes[d] = half;
    kept.values.resize(static_cast<size_t>(numel_of(kept.sizes)));
    const int64_t inner = s.inner(d);
    for (size_t i = 0; i < kept.values.size(); ++i) {
      const int64_t o = static_cast<int64_t>(i) / (half * inner),
                    r = static_cast<int64_t>(i) % (half * inner);
      kept.values[i] = s.values[static_cast<size_t>(o * n * inner + r)];
    }
    s = std::move(kept);
  }
  return store(s, scale, true, self.dtype());
}

Tensor fft_c2r_k(const Tensor& self, std::vector<int64_t> dim, int64_t normalization,
                 int64_t last_dim_size) {
  meta::check_fft_input(self, true, "_fft_c2r");
  const std::vector<int64_t> dims = meta::fft_dims(dim, self.dim() - 1, "_fft_c2r");
  const DimVector out_sizes = meta::fft_c2r_sizes(self, dims, last_dim_size);
  Signal s = load(self, true);
  for (size_t k = 0; k + 1 < dims.size(); ++k) transform_dim(s, dims[k], true);
  const Signal out = c2r_dim(s, dims.back(), last_dim_size);
  return store(out, meta::fft_scale(normalization, signal_numel(out_sizes, dims)), false,
               self.dtype());
}

Tensor fft_c2c_k(const Tensor& self, std::vector<int64_t> dim, int64_t normalization,
                 bool forward) {
  meta::check_fft_input(self, true, "_fft_c2c");
  const std::vector<int64_t> dims = meta::fft_dims(dim, self.dim() - 1, "_fft_c2c");
  Signal s = load(self, true);
  for (int64_t d : dims) transform_dim(s, d, !forward);
  return store(s, meta::fft_scale(normalization, signal_numel(s.sizes, dims)), true, self.dtype());
}

}  // namespace

}  // namespace ampjit::cpu

AMPJIT_KERNEL(fft_r2c_pairs, cpu::fft_r2c_k)
AMPJIT_KERNEL(fft_c2r_pairs, cpu::fft_c2r_k)
AMPJIT_KERNEL(fft_c2c_pairs, cpu::fft_c2c_k)
