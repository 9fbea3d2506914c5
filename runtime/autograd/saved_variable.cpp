// Saved tensors (see saved_variable.h).
#include "runtime/autograd/saved_variable.h"

#include <fmt/format.h>

#include "runtime/autograd/autograd.h"
#include "runtime/error.h"
#include "runtime/grad_mode.h"

namespace ampjit::autograd {

namespace {
Tensor alias_without_history(const Tensor& t) {
  Tensor a = Tensor::make_view(t, t.sizes(), t.strides(), t.storage_offset());
  a.impl()->is_view = t.is_view();
  return a;
}
}  // namespace

std::string legacy_type_name(const Tensor& t) {
  const char* name = "FloatTensor";
  switch (t.dtype()) {
    case ScalarType::Float64:
      name = "DoubleTensor";
      break;
    case ScalarType::Float16:
      name = "HalfTensor";
      break;
    case ScalarType::BFloat16:
      name = "BFloat16Tensor";
      break;
    case ScalarType::Int64:
      name = "LongTensor";
      break;
    case ScalarType::Int32:
      name = "IntTensor";
      break;
    case ScalarType::Int16:
      name = "ShortTensor";
      break;
    case ScalarType::Int8:
      name = "CharTensor";
      break;
    case ScalarType::UInt8:
      name = "ByteTensor";
      break;
    case ScalarType::Bool:
      name = "BoolTensor";
      break;
    default:
      break;
  }
  return fmt::format("torch.{}{}", t.device().is_cpu() ? "" : "cuda.", name);
}

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  AMPJIT_CHECK(!t.impl()->is_inference,
               "Inference tensors cannot be saved for backward. To work around you can make a "
               "clone to get a normal tensor and use it in autograd.");
  was_defined_ = true;
  is_output_ = is_output;
  saved_version_ = t.impl()->storage->version();
  if (is_output) {
    output_nr_ = autograd::output_nr(t);
    data_ = alias_without_history(t);
  } else {
    data_ = t;
  }
}

void SavedVariable::reset() {
  data_ = Tensor();
  freed_ = true;
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& owner) const {
  if (!was_defined_) return Tensor();
  AMPJIT_CHECK(
      !freed_,
      "Trying to backward through the graph a second time (or directly access saved "
      "tensors after they have already been freed). Saved intermediate values of the graph "
      "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
      "you need to backward through the graph a second time or if you need to access saved "
      "tensors after calling backward.");
  const uint32_t now = data_.impl()->storage->version();
  if (now != saved_version_) {
    std::shared_ptr<Node> fn = is_output_ ? owner : grad_fn(data_);
    std::string which;
    if (fn)
      which = fmt::format(", which is output {} of {},", is_output_ ? output_nr_ : output_nr(data_),
                          fn->name());
    throw Error(fmt::format(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [{} [{}]]{} is at version {}; expected version {} instead. Hint: enable "
        "anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True).",
        legacy_type_name(data_), fmt::join(data_.sizes(), ", "), which, now, saved_version_));
  }
  if (is_output_ && owner && grad_enabled()) {
    // create_graph: the output, with its history, so that what backward computes from it is
    // connected to the forward graph.
    Tensor t = alias_without_history(data_);
    set_history(t, owner, output_nr_);
    return t;
  }
  return data_;
}

}  // namespace ampjit::autograd
