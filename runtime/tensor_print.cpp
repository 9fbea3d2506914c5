// Tensor::str(): torch's repr. One formatter per tensor picks the element format from all values
// (torch/_tensor_str.py's rules): integers-valued floats print as "1.", others with 4 decimals,
// scientific notation when the range is wide; elements are right-aligned to a common width and
// wrapped at 80 columns; more than 1000 elements are summarized with 3 edge items.
#include <cmath>

#include "runtime/autograd/autograd.h"
#include "runtime/error.h"
#include "runtime/ops.h"

namespace ampjit {

namespace {

constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 80;

struct Formatter {
  bool floating = false, is_bool = false, int_mode = true, sci_mode = false;
  size_t width = 1;

  explicit Formatter(ScalarType dtype, const std::vector<double>& vals) {
    floating = is_floating(dtype);
    is_bool = dtype == ScalarType::Bool;
    if (floating) {
      double amax = 0, amin = INFINITY;
      bool any = false;
      for (double v : vals) {
        if (!std::isfinite(v) || v == 0) continue;
        any = true;
        amax = std::max(amax, std::fabs(v));
        amin = std::min(amin, std::fabs(v));
        if (v != std::ceil(v)) int_mode = false;
      }
      if (any) {
        if (int_mode)
          sci_mode = amax / amin > 1000.0 || amax > 1e8;
        else
          sci_mode = amax / amin > 1000.0 || amax > 1e8 || amin < 1e-4;
      }
    }
    for (double v : vals) width = std::max(width, raw(v).size());
  }

  std::string raw(double v) const {
    if (is_bool) return v != 0 ? "True" : "False";
    if (!floating) return fmt::format("{}", static_cast<int64_t>(v));
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_mode) return fmt::format("{:.{}e}", v, kPrecision);
    if (int_mode) return fmt::format("{:.0f}.", v);
    return fmt::format("{:.{}f}", v, kPrecision);
  }
  std::string operator()(double v) const {
    std::string s = raw(v);
    return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
  }
};

// Values to choose the format from: all of them, or the edges when summarizing.
void collect(const std::vector<double>& all, IntArrayRef sizes, bool summarize,
             std::vector<double>& out) {
  if (!summarize) {
    out = all;
    return;
  }
  // Walk every element and keep those within kEdgeItems of either end in every dimension.
  const size_t nd = sizes.size();
  std::vector<int64_t> idx(nd, 0);
  for (size_t i = 0; i < all.size(); ++i) {
    bool keep = true;
    for (size_t d = 0; d < nd; ++d) {
      if (sizes[d] > 2 * kEdgeItems && idx[d] >= kEdgeItems && idx[d] < sizes[d] - kEdgeItems)
        keep = false;
    }
    if (keep) out.push_back(all[i]);
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

void print_rec(std::string& s, const std::vector<double>& vals, IntArrayRef sizes,
               IntArrayRef strides, int64_t base, size_t dim, int indent, const Formatter& f,
               bool summarize) {
  const int64_t n = sizes[dim];
  const bool cut = summarize && n > 2 * kEdgeItems;
  if (dim + 1 == sizes.size()) {
    // Innermost: elements separated by ", ", wrapped at the line width.
    std::vector<std::string> items;
    for (int64_t i = 0; i < n; ++i) {
      if (cut && i == kEdgeItems) {
        items.push_back(" ...");  // torch pads the ellipsis of a vector with a space
        i = n - kEdgeItems;
      }
      items.push_back(f(vals[base + i * strides[dim]]));
    }
    const size_t elems_per_line = std::max<size_t>(1, (kLineWidth - indent) / (f.width + 2));
    s += "[";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) {
        s += ",";
        if (i % elems_per_line == 0)
          s += "\n" + std::string(indent + 1, ' ');
        else
          s += " ";
      }
      s += items[i];
    }
    s += "]";
    return;
  }
  s += "[";
  const std::string sep =
      "," + std::string(sizes.size() - dim - 1, '\n') + std::string(indent + 1, ' ');
  bool first = true;
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == kEdgeItems) {
      s += sep + "...";
      i = n - kEdgeItems;
    }
    if (!first) s += sep;
    first = false;
    print_rec(s, vals, sizes, strides, base + i * strides[dim], dim + 1, indent + 1, f, summarize);
  }
  s += "]";
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  std::vector<double> vals = device().is_cpu()
                                 ? to_double_vector()
                                 : Tensor(ops::to_device(*this, Device())).to_double_vector();
  const bool summarize = numel() > kThreshold;
  std::vector<double> sample;
  collect(vals, sizes(), summarize, sample);
  Formatter f(dtype(), sample);
  std::string s = "tensor(";
  if (dim() == 0) {
    s += f.raw(vals[0]);
  } else if (numel() == 0) {
    s += "[]";
  } else {
    DimVector st = contiguous_strides(sizes());
    print_rec(s, vals, sizes(), st, 0, 0, 7, f, summarize);
  }
  std::vector<std::string> suffix;
  if (numel() == 0 && dim() != 1) {
    std::string sz = "size=(";
    for (int64_t i = 0; i < dim(); ++i) sz += (i ? ", " : "") + std::to_string(sizes()[i]);
    suffix.push_back(sz + (dim() == 1 ? ",)" : ")"));
  }
  if (device().is_cuda()) suffix.push_back("device='" + device().str() + "'");
  const ScalarType dt = dtype();
  if (dt != ScalarType::Float32 && dt != ScalarType::Int64 && dt != ScalarType::Bool)
    suffix.push_back(std::string("dtype=torch.") + dtype_name(dt));
  else if (numel() == 0 && dt != ScalarType::Float32)
    suffix.push_back(std::string("dtype=torch.") + dtype_name(dt));
  if (std::shared_ptr<autograd::Node> fn = autograd::grad_fn(*this)) {
    std::string name = fn->name();  // torch prints CopySlices, not torch::autograd::CopySlices
    if (name.starts_with("torch::autograd::")) name = name.substr(17);
    suffix.push_back("grad_fn=<" + name + ">");
  } else if (requires_grad()) {
    suffix.push_back("requires_grad=True");
  }
  for (const auto& x : suffix) s += ", " + x;
  return s + ")";
}

}  // namespace ampjit
