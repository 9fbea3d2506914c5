// Ops written with other ops, for every device (kComposite): roll, flip, meshgrid, masked_fill,
// all/any, isclose/allclose, the new_* factories and the in-place random fills. Each follows
// torch 1.13's ATen definition (TensorShape.cpp, TensorCompare.cpp, Distributions.cpp), with its
// checks and messages.
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <mutex>
#include <string_view>

#include "kernels/operands.h"
#include "runtime/boxing.h"
#include "runtime/diagnostic.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"
#include "runtime/type_promotion.h"

namespace ampjit {

// torch's CPU uniform_ and normal_ fills (kernels/cpu/creation.cpp).
void cpu_random_fill(Tensor& t, bool normal, double a, double b);

namespace {

using OptDtype = std::optional<ScalarType>;
using OptDevice = std::optional<Device>;

std::vector<int64_t> shape_of(const Tensor& t) {
  return {t.sizes().begin(), t.sizes().end()};
}

// ---- Shapes ------------------------------------------------------------------------------------

Tensor roll_one(const Tensor& self, int64_t shift, int64_t dim) {
  const int64_t size = self.size(dim);
  if (size == 0) return self.clone();
  int64_t start = (size - shift) % size;
  if (start < 0) start += size;
  if (start == 0) return self.clone();
  return ops::cat(
      std::vector<Tensor>{self.narrow(dim, start, size - start), self.narrow(dim, 0, start)}, dim);
}

Tensor roll_k(const Tensor& self, std::vector<int64_t> shifts, std::vector<int64_t> dims) {
  AMPJIT_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {  // roll the flattened tensor, then restore the shape
    return roll_one(self.flatten(), shifts[0], 0).view(self.sizes());
  }
  AMPJIT_CHECK(shifts.size() == dims.size(),
               "shifts and dimensions must align. shifts: {}, dims:{}", shifts.size(), dims.size());
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); ++i)
    out = roll_one(out, shifts[i], wrap_dim(dims[i], self.dim(), "roll"));
  return dims.empty() ? self.clone() : out;
}

Tensor flip_k(const Tensor& self, std::vector<int64_t> dims) {
  // a 0-dim tensor has one dim to name (0 or -1), of one element
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  Tensor out = self;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, self.dim(), "flip");
    if (self.dim() == 0) {
      AMPJIT_CHECK(!seen[0], "dim {} appears multiple times in the list of dims", w);
      seen[0] = true;
      continue;
    }
    AMPJIT_CHECK(!seen[static_cast<size_t>(w)], "dim {} appears multiple times in the list of dims",
                 w);
    seen[static_cast<size_t>(w)] = true;
    const int64_t n = self.size(w);
    const Tensor index =
        ops::arange_start_step(Scalar(n - 1), Scalar(int64_t{-1}), Scalar(int64_t{-1}),
                               OptDtype(ScalarType::Int64), OptDevice(self.device()), false);
    out = ops::index_select(out, w, index);
  }
  return dims.empty() ? self.clone() : out;
}

// The tensor tiled repeats[i] times along each dim (leading repeats add dims): each dim viewed as
// (1, size), expanded to (repeat, size) and merged.
Tensor repeat_k(const Tensor& self, std::vector<int64_t> repeats) {
  AMPJIT_CHECK(
      static_cast<int64_t>(repeats.size()) >= self.dim(),
      "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
      "tensor");
  const size_t lead = repeats.size() - static_cast<size_t>(self.dim());
  std::vector<int64_t> sizes(lead, 1), view, expanded, out;
  sizes.insert(sizes.end(), self.sizes().begin(), self.sizes().end());
  for (size_t i = 0; i < repeats.size(); ++i) {
    AMPJIT_CHECK(repeats[i] >= 0, "Trying to create tensor with negative dimension {}: {}",
                 repeats[i], fmt::format("[{}]", fmt::join(repeats, ", ")));
    view.insert(view.end(), {1, sizes[i]});
    expanded.insert(expanded.end(), {repeats[i], sizes[i]});
    out.push_back(repeats[i] * sizes[i]);
  }
  return self.reshape(view).expand(expanded).reshape(out);
}

bool is_floating_point_k(const Tensor& self) {
  return self.is_floating_point();
}
// Tensor metadata as ops, so script and traced code read them as torch's do.
std::vector<int64_t> stride_k(const Tensor& self) {
  return {self.strides().begin(), self.strides().end()};
}
int64_t stride_int_k(const Tensor& self, int64_t dim) {
  return self.stride(wrap_dim(dim, self.dim(), "stride"));
}
int64_t storage_offset_k(const Tensor& self) {
  return self.storage_offset();
}
bool is_contiguous_k(const Tensor& self) {
  return self.is_contiguous();
}
int64_t element_size_k(const Tensor& self) {
  return static_cast<int64_t>(self.itemsize());
}
bool is_complex_k(const Tensor&) {
  return false;  // complex dtypes are out of scope (docs/api.md)
}
bool is_signed_k(const Tensor& self) {
  return self.dtype() != ScalarType::UInt8 && self.dtype() != ScalarType::Bool;
}
bool is_same_size_k(const Tensor& self, const Tensor& other) {
  return std::equal(self.sizes().begin(), self.sizes().end(), other.sizes().begin(),
                    other.sizes().end());
}
// Type promotion as ops (torch.promote_types, torch.result_type, torch.can_cast).
ScalarType promote_types_k(ScalarType a, ScalarType b) {
  return promote_types(a, b);
}
ScalarType result_type_k(const Tensor& a, const Tensor& b) {
  return result_type(a, b);
}
ScalarType result_type_scalar_k(const Tensor& a, const Scalar& b) {
  return result_type(a, b);
}
ScalarType result_type_scalar_tensor_k(const Scalar& a, const Tensor& b) {
  return result_type(b, a);
}
ScalarType result_type_scalar_scalar_k(const Scalar& a, const Scalar& b) {
  return result_type(kernels::wrap_scalar(a), b);
}
bool can_cast_k(ScalarType from, ScalarType to) {
  return can_cast(from, to);
}

// torch.repeat_interleave(repeats): each i of arange(len(repeats)) repeats[i] times.
Tensor repeat_interleave_k(const Tensor& repeats, std::optional<int64_t> output_size) {
  AMPJIT_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  AMPJIT_CHECK(repeats.dtype() == ScalarType::Int64 || repeats.dtype() == ScalarType::Int32,
               "repeats has to be Long or Int tensor");
  const Tensor r = repeats.to(ScalarType::Int64).contiguous();
  const int64_t* p = r.data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < r.numel(); ++i) {
    AMPJIT_CHECK(p[i] >= 0, "repeats can not be negative");
    total += p[i];
  }
  AMPJIT_CHECK(!output_size || *output_size == total,
               "allocated size does not match required size");
  Tensor out = Tensor::empty(std::vector<int64_t>{total}, ScalarType::Int64, repeats.device());
  int64_t* o = out.data<int64_t>();
  for (int64_t i = 0, k = 0; i < r.numel(); ++i)
    for (int64_t j = 0; j < p[i]; ++j) o[k++] = i;
  return out;
}

// torch's is_nonzero: the truth of a one-element tensor.
bool is_nonzero_k(const Tensor& self) {
  AMPJIT_CHECK(self.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  AMPJIT_CHECK(self.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return self.item().to_double() != 0.0;
}

std::vector<Tensor> meshgrid_impl(std::vector<Tensor> tensors, const std::string& indexing) {
  AMPJIT_CHECK(!tensors.empty(), "meshgrid expects a non-empty TensorList");
  for (size_t i = 0; i + 1 < tensors.size(); ++i) {
    AMPJIT_CHECK(tensors[i].dtype() == tensors[i + 1].dtype(),
                 "meshgrid expects all tensors to have the same dtype");
    AMPJIT_CHECK(tensors[i].device() == tensors[i + 1].device(),
                 "meshgrid expects all tensors to have the same device");
  }
  AMPJIT_CHECK(indexing == "ij" || indexing == "xy",
               "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {}",
               indexing);
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  if (swap) std::swap(tensors[0], tensors[1]);
  std::vector<int64_t> shape;
  for (const Tensor& t : tensors) {
    AMPJIT_CHECK(t.dim() <= 1,
                 "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {}",
                 t.str());
    shape.push_back(t.numel());
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::vector<int64_t> view(tensors.size(), 1);
    view[i] = -1;
    // through the dispatcher, so that autograd records the views (meshgrid is kComposite)
    out.push_back(ops::expand(ops::view(tensors[i], view), shape, false));
  }
  if (swap) std::swap(out[0], out[1]);  // the grids of the swapped inputs, swapped back
  return out;
}
std::vector<Tensor> meshgrid_k(std::vector<Tensor> tensors) {
  static std::once_flag once;  // TORCH_WARN_ONCE
  std::call_once(once, [] {
    warn(WarningCategory::User,
         "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
         "argument.");
  });
  return meshgrid_impl(std::move(tensors), "ij");
}
std::vector<Tensor> meshgrid_indexing_k(std::vector<Tensor> tensors, std::string indexing) {
  return meshgrid_impl(std::move(tensors), indexing);
}

// ---- einsum
// --------------------------------------------------------------------------------------

// Note [einsum]
// Subscripts are letters (spaces ignored); without "->" the output is the letters seen once, A-Z
// before a-z, as torch orders them. One operand: summed letters reduced, the rest permuted. Two
// operands contract as one bmm (batch letters in both and the output, contracted letters in both
// only, each side's own letters kept or summed first), which goes through the dispatcher, so
// under autocast it runs in the lower precision as torch's einsum does; with nothing to contract
// it is a multiply, as torch's sumproduct_pair (no autocast cast). More operands contract left to
// right. Every step is a dispatched op, so autograd records einsum through them. A letter repeated
// in one operand takes the diagonal of its dims; '...' stands for the dims the letters leave,
// broadcast across the operands and kept first in an implicit output, as torch's.
struct Term {
  std::string letters;
  Tensor t;
};

Term einsum_pair(const Term& a, const Term& b, const std::string& keep) {
  const auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  std::string batch, contracted, a_kept, b_kept;
  Term x = a, y = b;
  // Letters of one side only that the result does not keep are summed out first.
  const auto sum_own = [&](Term& t, const std::string& other) {
    for (size_t i = t.letters.size(); i-- > 0;) {
      const char c = t.letters[i];
      if (!in(other, c) && !in(keep, c)) {
        t.t = ops::sum_dim_IntList(t.t, std::vector<int64_t>{static_cast<int64_t>(i)}, false);
        t.letters.erase(i, 1);
      }
    }
  };
  sum_own(x, y.letters);
  sum_own(y, x.letters);
  // A shared letter neither the result nor a later operand keeps, of size 1 on both sides, is
  // squeezed rather than contracted, as torch's einsum squeezes size-1 dims first.
  for (size_t i = x.letters.size(); i-- > 0;) {
    const char c = x.letters[i];
    const size_t j = y.letters.find(c);
    if (j == std::string::npos || in(keep, c) || x.t.size(static_cast<int64_t>(i)) != 1 ||
        y.t.size(static_cast<int64_t>(j)) != 1)
      continue;
    x.t = ops::squeeze_dim(x.t, static_cast<int64_t>(i));
    x.letters.erase(i, 1);
    y.t = ops::squeeze_dim(y.t, static_cast<int64_t>(j));
    y.letters.erase(j, 1);
  }
  for (char c : x.letters) {
    if (in(y.letters, c))
      (in(keep, c) ? batch : contracted) += c;
    else
      a_kept += c;
  }
  for (char c : y.letters)
    if (!in(x.letters, c)) b_kept += c;
  const auto size_of = [](const Term& t, char c) {
    return t.t.size(static_cast<int64_t>(t.letters.find(c)));
  };
  const auto product = [&](const Term& t, const std::string& ls) {
    int64_t n = 1;
    for (char c : ls) n *= size_of(t, c);
    return n;
  };
  for (char c : batch + contracted) {
    AMPJIT_CHECK(size_of(x, c) == size_of(y, c),
                 "einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                 "subscript {} has size {} for one operand and {} for another",
                 c, size_of(x, c), size_of(y, c));
  }
  const auto permuted = [](const Term& t, const std::string& order) {
    std::vector<int64_t> dims;
    for (char c : order) dims.push_back(static_cast<int64_t>(t.letters.find(c)));
    return Tensor(ops::permute(t.t, dims));
  };
  const int64_t B = product(x, batch), M = product(x, a_kept), K = product(x, contracted),
                N = product(y, b_kept);
  std::vector<int64_t> shape;
  for (char c : batch) shape.push_back(size_of(x, c));
  for (char c : a_kept) shape.push_back(size_of(x, c));
  for (char c : b_kept) shape.push_back(size_of(y, c));
  if (contracted.empty()) {
    // nothing to contract: torch's sumproduct_pair multiplies (type promotion, no autocast cast)
    const Tensor l = ops::reshape(permuted(x, batch + a_kept), std::vector<int64_t>{B, M, 1});
    const Tensor r = ops::reshape(permuted(y, batch + b_kept), std::vector<int64_t>{B, 1, N});
    return {batch + a_kept + b_kept, ops::reshape(ops::mul(l, r), shape)};
  }
  // An integer operand summed alone above is int64 (torch's sum): the product promotes.
  if (x.t.dtype() != y.t.dtype()) {
    const ScalarType common = promote_types(x.t.dtype(), y.t.dtype());
    x.t = x.t.to(common);
    y.t = y.t.to(common);
  }
  const Tensor lhs =
      ops::reshape(permuted(x, batch + a_kept + contracted), std::vector<int64_t>{B, M, K});
  const Tensor rhs =
      ops::reshape(permuted(y, batch + contracted + b_kept), std::vector<int64_t>{B, K, N});
  return {batch + a_kept + b_kept, ops::reshape(ops::bmm(lhs, rhs), shape)};
}

// Labels einsum_k gives the dims an ellipsis stands for, right-aligned across the operands (no
// letter, no character of the equation's syntax).
constexpr std::string_view kEllipsisLabels = "0123456789!#$%&*+:;<=?@[]^_{|}~";

Tensor einsum_k(std::string equation, std::vector<Tensor> tensors) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> subs;
  for (size_t b = 0;;) {
    const size_t e = lhs.find(',', b);
    subs.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  AMPJIT_CHECK(subs.size() == tensors.size(),
               "einsum(): more operands were provided than specified in the equation");
  for (size_t i = 0; i < subs.size(); ++i) {
    const size_t at = subs[i].find("...");
    for (size_t k = 0; k < subs[i].size(); ++k) {
      if (at != std::string::npos && k >= at && k < at + 3) continue;
      AMPJIT_CHECK(
          std::isalpha(static_cast<unsigned char>(subs[i][k])),
          "einsum(): invalid subscript given at index {} in the equation string, subscripts "
          "must be in [a-zA-Z]",
          k);
    }
  }
  // An ellipsis covers the dims its operand's letters leave: the same labels in every operand,
  // right-aligned, broadcast (size 1 against any) as torch does.
  int64_t n_ell = 0;
  std::vector<int64_t> ell_dims(subs.size(), -1);
  for (size_t i = 0; i < subs.size(); ++i) {
    const size_t at = subs[i].find("...");
    if (at == std::string::npos) continue;
    const int64_t letters = static_cast<int64_t>(subs[i].size()) - 3;
    AMPJIT_CHECK(tensors[i].dim() >= letters,
                 "einsum(): the number of subscripts in the equation ({}) is more than the number "
                 "of dimensions ({}) for operand {}",
                 letters, tensors[i].dim(), i);
    ell_dims[i] = tensors[i].dim() - letters;
    n_ell = std::max(n_ell, ell_dims[i]);
  }
  AMPJIT_CHECK(n_ell <= static_cast<int64_t>(kEllipsisLabels.size()),
               "einsum(): too many dimensions under the ellipsis");
  const std::string ell_all(kEllipsisLabels.substr(0, static_cast<size_t>(n_ell)));
  std::vector<int64_t> ell_shape(static_cast<size_t>(n_ell), 1);
  for (size_t i = 0; i < subs.size(); ++i) {
    if (ell_dims[i] < 0) continue;
    const size_t at = subs[i].find("...");
    for (int64_t k = 0; k < ell_dims[i]; ++k) {
      const int64_t size = tensors[i].size(static_cast<int64_t>(at) + k);
      int64_t& have = ell_shape[static_cast<size_t>(n_ell - ell_dims[i] + k)];
      AMPJIT_CHECK(have == 1 || size == 1 || have == size,
                   "einsum(): operands do not broadcast with remapped shapes (original->remapped)");
      if (size != 1) have = size;
    }
  }
  for (size_t i = 0; i < subs.size(); ++i) {
    if (ell_dims[i] < 0) continue;
    const size_t at = subs[i].find("...");
    // as many ellipsis dims as the widest operand's, each broadcast to the common size
    Tensor t = tensors[i];
    for (int64_t k = ell_dims[i]; k < n_ell; ++k) t = ops::unsqueeze(t, static_cast<int64_t>(at));
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    for (int64_t k = 0; k < n_ell; ++k)
      shape[at + static_cast<size_t>(k)] = ell_shape[static_cast<size_t>(k)];
    tensors[i] = ops::expand(t, shape, false);
    subs[i] = subs[i].substr(0, at) + ell_all + subs[i].substr(at + 3);
  }
  int count[128] = {};
  for (size_t i = 0; i < subs.size(); ++i) {
    AMPJIT_CHECK(static_cast<int64_t>(subs[i].size()) == tensors[i].dim(),
                 "einsum(): the number of subscripts in the equation ({}) does not match the "
                 "number of dimensions ({}) for operand {} and no ellipsis was given",
                 subs[i].size(), tensors[i].dim(), i);
    for (size_t k = 0; k < subs[i].size(); ++k) {
      const char c = subs[i][k];
      AMPJIT_CHECK(
          std::isalpha(static_cast<unsigned char>(c)) || ell_all.find(c) != std::string::npos,
          "einsum(): invalid subscript given at index {} in the equation string, subscripts "
          "must be in [a-zA-Z]",
          k);
    }
    // A label repeated in one operand takes the diagonal of its dims (torch: a strided view),
    // the diagonal moved last.
    for (size_t k = 0; k < subs[i].size();) {
      const char c = subs[i][k];
      const size_t again = subs[i].find(c, k + 1);
      if (again == std::string::npos) {
        ++k;
        continue;
      }
      const auto d1 = static_cast<int64_t>(k), d2 = static_cast<int64_t>(again);
      AMPJIT_CHECK(tensors[i].size(d1) == tensors[i].size(d2),
                   "einsum(): subscript {} is repeated for operand {} but the sizes don't match, "
                   "{} != {}",
                   c, i, tensors[i].size(d1), tensors[i].size(d2));
      const Tensor& t = tensors[i];
      std::vector<int64_t> sizes, strides;
      for (int64_t d = 0; d < t.dim(); ++d) {
        if (d == d1 || d == d2) continue;
        sizes.push_back(t.size(d));
        strides.push_back(t.stride(d));
      }
      sizes.push_back(t.size(d1));
      strides.push_back(t.stride(d1) + t.stride(d2));
      // contiguous: the product's kernels take no overlapping strides
      tensors[i] = ops::contiguous(ops::as_strided(t, sizes, strides, t.storage_offset()));
      subs[i].erase(again, 1);
      subs[i].erase(k, 1);
      subs[i] += c;
    }
    for (char c : subs[i]) ++count[static_cast<unsigned char>(c)];
  }
  // The implicit output counts the letters of the equation as written (a diagonal's letter is
  // seen twice there, so "ii" is the trace).
  int written[128] = {};
  for (char c : lhs)
    if (std::isalpha(static_cast<unsigned char>(c))) ++written[static_cast<unsigned char>(c)];
  std::string out;
  if (arrow != std::string::npos) {
    std::string given = eq.substr(arrow + 2);
    const size_t at = given.find("...");
    if (at != std::string::npos) given = given.substr(0, at) + ell_all + given.substr(at + 3);
    for (char c : given)
      AMPJIT_CHECK(count[static_cast<unsigned char>(c)] > 0,
                   "einsum(): output subscript {} does not appear in the equation for any input "
                   "operand",
                   c);
    out = given;
  } else {
    out = ell_all;  // the ellipsis dims first, then the letters that occur once, sorted
    for (char c = 'A'; c <= 'Z'; ++c)
      if (written[static_cast<unsigned char>(c)] == 1) out += c;
    for (char c = 'a'; c <= 'z'; ++c)
      if (written[static_cast<unsigned char>(c)] == 1) out += c;
  }
  Term acc{subs[0], tensors[0]};
  for (size_t i = 1; i < tensors.size(); ++i) {
    // Keep what the output or a later operand still needs.
    std::string keep = out;
    for (size_t j = i + 1; j < subs.size(); ++j) keep += subs[j];
    acc = einsum_pair(acc, Term{subs[i], tensors[i]}, keep);
  }
  for (size_t i = acc.letters.size(); i-- > 0;) {  // one operand, or letters summed last
    if (out.find(acc.letters[i]) == std::string::npos) {
      acc.t = ops::sum_dim_IntList(acc.t, std::vector<int64_t>{static_cast<int64_t>(i)}, false);
      acc.letters.erase(i, 1);
    }
  }
  std::vector<int64_t> dims;
  for (char c : out) dims.push_back(static_cast<int64_t>(acc.letters.find(c)));
  return ops::permute(acc.t, dims);
}

// ---- masked_fill -------------------------------------------------------------------------------

// A bool mask, or a uint8 one with torch's deprecation warning. torch 1.13 takes any other dtype
// and reads its bytes as the mask (a float 1.0 masks nothing): an error here instead.
Tensor bool_mask(const Tensor& mask) {
  if (mask.dtype() == ScalarType::UInt8) {
    warn(WarningCategory::User,
         "masked_fill_ received a mask with dtype torch.uint8, this behavior is now "
         "deprecated,please use a mask with dtype torch.bool instead.");
    return ops::ne_Scalar(mask, Scalar(int64_t{0}));
  }
  AMPJIT_CHECK(mask.dtype() == ScalarType::Bool,
               "masked_fill_ only supports boolean masks, but got mask with dtype {}",
               dtype_name(mask.dtype()));
  return mask;
}
// The result has self's dtype (an int tensor filled with 0.5 holds 0), broadcast with the mask.
Tensor masked_fill_Scalar_k(const Tensor& self, const Tensor& mask, const Scalar& value) {
  Tensor filled = ops::full_like(self, value);
  return ops::where(bool_mask(mask), filled, self).tensor().to(self.dtype());
}
Tensor masked_fill_Tensor_k(const Tensor& self, const Tensor& mask, const Tensor& value) {
  AMPJIT_CHECK(value.dim() == 0,
               "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} "
               "dimension(s).",
               value.dim());
  return masked_fill_Scalar_k(self, mask, value.item());
}

// ---- all / any
// -----------------------------------------------------------------------------------

// all: no element is zero; any: some element is not (NaN is not zero). Bool results, as torch's for
// every input but uint8.
Tensor zeros_count(const Tensor& self, std::optional<int64_t> dim, bool keepdim, bool nonzero) {
  const Tensor hits =
      nonzero ? ops::ne_Scalar(self, Scalar(int64_t{0})) : ops::eq_Scalar(self, Scalar(int64_t{0}));
  if (!dim) return ops::sum(hits);
  return ops::sum_dim_IntList(hits, std::vector<int64_t>{*dim}, keepdim);
}
Tensor finish(Tensor count, bool nonzero, ScalarType in) {
  Tensor r = nonzero ? ops::ne_Scalar(count, Scalar(int64_t{0}))
                     : ops::eq_Scalar(count, Scalar(int64_t{0}));
  return in == ScalarType::UInt8 ? r.to(ScalarType::UInt8) : r;
}
Tensor all_k(const Tensor& s) {
  return finish(zeros_count(s, std::nullopt, false, false), false, s.dtype());
}
Tensor any_k(const Tensor& s) {
  return finish(zeros_count(s, std::nullopt, false, true), true, s.dtype());
}
Tensor all_dim_k(const Tensor& s, int64_t dim, bool keepdim) {
  return finish(zeros_count(s, dim, keepdim, false), false, s.dtype());
}
Tensor any_dim_k(const Tensor& s, int64_t dim, bool keepdim) {
  return finish(zeros_count(s, dim, keepdim, true), true, s.dtype());
}

// ---- isclose / allclose
// --------------------------------------------------------------------------

Tensor isclose_k(const Tensor& self, const Tensor& other, double rtol, double atol,
                 bool equal_nan) {
  AMPJIT_CHECK(self.dtype() == other.dtype(), "{} did not match {}", torch_type_name(self.dtype()),
               torch_type_name(other.dtype()));
  AMPJIT_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got {}", rtol);
  AMPJIT_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got {}", atol);
  Tensor close = ops::eq(self, other);
  if (equal_nan && self.is_floating_point()) {
    close = ops::logical_or(close, ops::logical_and(ops::ne(self, self), ops::ne(other, other)));
  }
  if (rtol == 0 && atol == 0) return close;
  Tensor a = self, b = other;
  if (!self.is_floating_point()) {
    a = self.to(ScalarType::Float32);
    b = other.to(ScalarType::Float32);
  }
  const Tensor allowed = ops::add_Scalar(ops::abs(ops::mul_Scalar(b, Scalar(rtol))), Scalar(atol));
  const Tensor actual = ops::abs(ops::sub(a, b));
  const Tensor finite =
      ops::logical_and(ops::eq(actual, actual),
                       ops::ne_Scalar(actual, Scalar(std::numeric_limits<double>::infinity())));
  return ops::logical_or(close, ops::logical_and(finite, ops::le(actual, allowed)));
}
bool allclose_k(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return all_k(isclose_k(self, other, rtol, atol, equal_nan)).item().to_bool();
}

// ---- new_* factories: self's dtype and device unless given ------------------------------------

OptDtype dtype_or(const Tensor& s, OptDtype dt) {
  return dt ? dt : OptDtype(s.dtype());
}
OptDevice device_or(const Tensor& s, OptDevice d) {
  return d ? d : OptDevice(s.device());
}
Tensor new_zeros_k(const Tensor& s, std::vector<int64_t> size, OptDtype dt, OptDevice d, bool rg) {
  return ops::zeros(size, dtype_or(s, dt), device_or(s, d), rg);
}
Tensor new_ones_k(const Tensor& s, std::vector<int64_t> size, OptDtype dt, OptDevice d, bool rg) {
  return ops::ones(size, dtype_or(s, dt), device_or(s, d), rg);
}
Tensor new_empty_k(const Tensor& s, std::vector<int64_t> size, OptDtype dt, OptDevice d, bool rg) {
  return ops::empty(size, dtype_or(s, dt), device_or(s, d), rg);
}
Tensor new_full_k(const Tensor& s, std::vector<int64_t> size, const Scalar& v, OptDtype dt,
                  OptDevice d, bool rg) {
  return ops::full(size, v, dtype_or(s, dt), device_or(s, d), rg);
}

// ---- In-place random fills: drawn in float32 (float64 for double), rounded once into self -----

Tensor draw(const Tensor& self, bool normal, const char* op) {
  AMPJIT_CHECK(self.is_floating_point(), "\"{}\" not implemented for '{}'", op,
               torch_type_name(self.dtype()));
  const ScalarType t =
      self.dtype() == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  return normal ? ops::randn(shape_of(self), OptDtype(t), OptDevice(self.device()), false)
                : ops::rand(shape_of(self), OptDtype(t), OptDevice(self.device()), false);
}
// normal_ and uniform_ on the CPU draw torch's numbers in place (Note [Random fills as torch's] in
// creation.cpp); on other devices, from that device's rand/randn.
Tensor normal__k(Tensor self, double mean, double std) {
  AMPJIT_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std {}", std);
  if (self.device().is_cpu()) {
    cpu_random_fill(self, true, mean, std);
    return self;
  }
  self.copy_(ops::add_Scalar(ops::mul_Scalar(draw(self, true, "normal_kernel_cpu"), Scalar(std)),
                             Scalar(mean)));
  return self;
}
Tensor uniform__k(Tensor self, double from, double to) {
  AMPJIT_CHECK(from <= to,
               "uniform_ expects to return a [from, to) range, but found from={} > to={}", from,
               to);
  if (self.device().is_cpu()) {
    cpu_random_fill(self, false, from, to);
    return self;
  }
  self.copy_(ops::add_Scalar(
      ops::mul_Scalar(draw(self, false, "uniform_kernel_cpu"), Scalar(to - from)), Scalar(from)));
  return self;
}
Tensor bernoulli__float_k(Tensor self, double p) {
  AMPJIT_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p={}", p);
  const ScalarType t =
      self.dtype() == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  const Tensor u = ops::rand(shape_of(self), OptDtype(t), OptDevice(self.device()), false);
  self.copy_(ops::lt_Scalar(u, Scalar(p)));
  return self;
}
Tensor bernoulli_k(const Tensor& self) {
  AMPJIT_CHECK(self.is_floating_point(), "\"bernoulli_tensor_cpu_self_\" not implemented for '{}'",
               torch_type_name(self.dtype()));
  const Tensor in_range =
      ops::logical_and(ops::ge_Scalar(self, Scalar(0.0)), ops::le_Scalar(self, Scalar(1.0)));
  AMPJIT_CHECK(all_k(in_range).item().to_bool(),
               "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  const Tensor u = draw(self, false, "bernoulli");
  return ops::lt(u, self).tensor().to(self.dtype());
}

// torch.floor_divide (what traces record for `//` on tensors): division rounded down, as torch
// 1.13's (it rounded toward zero before 1.13).
Tensor floor_divide_k(const Tensor& self, const Tensor& other) {
  return ops::div_Tensor_mode(self, other, std::string("floor"));
}
Tensor floor_divide_scalar_k(const Tensor& self, const Scalar& other) {
  return ops::div_Scalar_mode(self, other, std::string("floor"));
}

}  // namespace
}  // namespace ampjit

AMPJIT_KERNEL(roll, roll_k)
AMPJIT_KERNEL(flip, flip_k)
AMPJIT_KERNEL(einsum, einsum_k)
AMPJIT_KERNEL(floor_divide, floor_divide_k)
AMPJIT_KERNEL(floor_divide_Scalar, floor_divide_scalar_k)
AMPJIT_KERNEL(repeat, repeat_k)
AMPJIT_KERNEL(is_floating_point, is_floating_point_k)
AMPJIT_KERNEL(stride, stride_k)
AMPJIT_KERNEL(stride_int, stride_int_k)
AMPJIT_KERNEL(storage_offset, storage_offset_k)
AMPJIT_KERNEL(is_contiguous, is_contiguous_k)
AMPJIT_KERNEL(element_size, element_size_k)
AMPJIT_KERNEL(is_complex, is_complex_k)
AMPJIT_KERNEL(is_signed, is_signed_k)
AMPJIT_KERNEL(is_same_size, is_same_size_k)
AMPJIT_KERNEL(is_nonzero, is_nonzero_k)
AMPJIT_KERNEL(promote_types, promote_types_k)
AMPJIT_KERNEL(result_type, result_type_k)
AMPJIT_KERNEL(result_type_Scalar, result_type_scalar_k)
AMPJIT_KERNEL(result_type_Scalar_Tensor, result_type_scalar_tensor_k)
AMPJIT_KERNEL(result_type_Scalar_Scalar, result_type_scalar_scalar_k)
AMPJIT_KERNEL(can_cast, can_cast_k)
AMPJIT_KERNEL(repeat_interleave_Tensor, repeat_interleave_k)
AMPJIT_KERNEL(meshgrid, meshgrid_k)
AMPJIT_KERNEL(meshgrid_indexing, meshgrid_indexing_k)
AMPJIT_KERNEL(masked_fill_Scalar, masked_fill_Scalar_k)
AMPJIT_KERNEL(masked_fill_Tensor, masked_fill_Tensor_k)
AMPJIT_KERNEL(all, all_k)
AMPJIT_KERNEL(any, any_k)
AMPJIT_KERNEL(all_dim, all_dim_k)
AMPJIT_KERNEL(any_dim, any_dim_k)
AMPJIT_KERNEL(isclose, isclose_k)
AMPJIT_KERNEL(allclose, allclose_k)
AMPJIT_KERNEL(new_zeros, new_zeros_k)
AMPJIT_KERNEL(new_ones, new_ones_k)
AMPJIT_KERNEL(new_empty, new_empty_k)
AMPJIT_KERNEL(new_full, new_full_k)
AMPJIT_KERNEL(normal_, normal__k)
AMPJIT_KERNEL(uniform_, uniform__k)
AMPJIT_KERNEL(bernoulli__float, bernoulli__float_k)
AMPJIT_KERNEL(bernoulli, bernoulli_k)
