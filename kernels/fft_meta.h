// What the FFT primitives (runtime/ops/fft.def) decide before any element is read, for every
// backend: the dims they transform, the dtypes they take and the shapes of their results.
// kernels/cpu/fft_ops.cpp supplies the transforms.
//
// Note [FFTs without a complex dtype]
// ampjit has no complex dtype (DESIGN.md), and most of torch.fft returns complex tensors. What it
// does:
//  - every torch.fft function whose result is real is implemented, for the real inputs torch takes:
//    irfft, irfft2, irfftn, hfft, hfft2, hfftn (torch reads a real input as complex with zero
//    imaginary parts), fftshift, ifftshift, fftfreq, rfftfreq; so are the window functions,
//    torch.stft with return_complex=False (torch's real layout, [..., 2]) and torch.istft of that
//    layout, which torch 1.13 still takes;
//  - every function whose result would be a complex tensor (fft, ifft, rfft, ihfft and their 2-d
//    and n-d forms, stft or istft with return_complex=True) checks its arguments as torch does,
//    then raises NotImplementedError naming complex tensors as out of scope. No function returns
//    the real view of a complex result instead: that is not torch's API.
// Inside, the complex values of an intermediate result are pairs in a trailing dimension of size 2
// (the layout of torch.view_as_real, and of torch.stft's real result). The three primitives are
// ATen's _fft_r2c, _fft_c2r and _fft_c2c on that layout, named ampjit::_fft_r2c, ampjit::_fft_c2r
// and ampjit::_fft_c2c: script-only, each with its derivative (runtime/autograd/derivatives.cpp).
// torch.fft's functions, stft and istft are decompositions over them written as torch 1.13's
// SpectralOps.cpp writes them (frontend/ampjit/_decompositions.py), so they script, trace and
// differentiate like any decomposed op. The factories among them (fftfreq, rfftfreq, the windows)
// take dtype= and device=; their Python functions add torch's requires_grad=, which a
// decomposition cannot set.
//
// The transforms are KISS FFT's (Debian's libkissfft-dev, BSD-3-Clause): its C++ header's
// mixed-radix template, instantiated for double. Every transform runs in double, float32 inputs
// included, and is rounded once: torch computes float32 transforms in float (pocketfft), but KISS
// FFT's float transform is too coarse for torch's float32 tolerance on long prime lengths, where
// its generic butterfly sums p terms per output (length 4099: 5e-4 from the exact result, against
// torch's 6e-5 and a tolerance of 1e-5 + 1.3e-6 |x|).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/error.h"
#include "runtime/tensor.h"
#include "runtime/type_promotion.h"

namespace ampjit::meta {

// ATen's fft_norm_mode (aten/src/ATen/native/SpectralOpsUtils.h): the `normalization` argument.
enum class FftNorm : int64_t {
  kNone = 0,     // no scaling
  kByRootN = 1,  // 1 / sqrt(signal numel)
  kByN = 2,      // 1 / signal numel
};

// The factor a transform of `signal_numel` points is scaled by.
inline double fft_scale(int64_t normalization, int64_t signal_numel) {
  switch (static_cast<FftNorm>(normalization)) {
    case FftNorm::kNone:
      return 1.0;
    case FftNorm::kByRootN:
      return 1.0 / std::sqrt(static_cast<double>(signal_numel));
    case FftNorm::kByN:
      return 1.0 / static_cast<double>(signal_numel);
  }
  AMPJIT_CHECK(false, "Invalid normalization mode: {}", normalization);
}

// The transformed dims of a primitive, wrapped against the `ndim` dims of its signal (the pair
// dimension excluded), in order; at least one, each once.
inline std::vector<int64_t> fft_dims(IntArrayRef dim, int64_t ndim, const char* op) {
  AMPJIT_CHECK(!dim.empty(), "{} must transform at least one axis", op);
  std::vector<int64_t> out;
  for (int64_t d : dim) {
    const int64_t w = wrap_dim(d, ndim, op);
    AMPJIT_CHECK(std::find(out.begin(), out.end(), w) == out.end(), "FFT dims must be unique");
    out.push_back(w);
  }
  return out;
}

// The input of a primitive: float32 or float64 (the decompositions promote the others, as torch
// does); `pairs`: a trailing dimension of size 2 holds the real and imaginary parts.
inline void check_fft_input(const Tensor& self, bool pairs, const char* op) {
  AMPJIT_CHECK(self.dtype() == ScalarType::Float32 || self.dtype() == ScalarType::Float64,
               "Unsupported dtype {}", torch_type_name(self.dtype()));
  if (pairs)
    AMPJIT_CHECK(self.dim() >= 2 && self.size(-1) == 2,
                 "{} expects the complex values as (real, imaginary) pairs in a last dimension "
                 "of size 2, but got a tensor of shape {}",
                 op, self.shape_str());
}

// The sizes of _fft_r2c's result: self's, the last transformed dim halved when onesided
// (n / 2 + 1), and the pair dimension.
inline DimVector fft_r2c_sizes(const Tensor& self, const std::vector<int64_t>& dims,
                               bool onesided) {
  DimVector out(self.sizes().begin(), self.sizes().end());
  if (onesided) out[dims.back()] = out[dims.back()] / 2 + 1;
  out.push_back(2);
  return out;
}

// The sizes of _fft_c2r's result: self's without the pair dimension, the last transformed dim
// `last_dim_size`, of which self holds the first last_dim_size / 2 + 1 values.
inline DimVector fft_c2r_sizes(const Tensor& self, const std::vector<int64_t>& dims,
                               int64_t last_dim_size) {
  AMPJIT_CHECK(last_dim_size >= 1, "Invalid number of data points ({}) specified", last_dim_size);
  const int64_t half = self.size(dims.back());
  AMPJIT_CHECK(half == last_dim_size / 2 + 1,
               "_fft_c2r: expected {} values along dim {} for last_dim_size={}, but got {}",
               last_dim_size / 2 + 1, dims.back(), last_dim_size, half);
  DimVector out(self.sizes().begin(), self.sizes().end() - 1);
  out[dims.back()] = last_dim_size;
  return out;
}

}  // namespace ampjit::meta
