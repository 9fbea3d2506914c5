// Tensors: ref-counted storage plus a strided view of it (sizes, strides, offset), a dtype and a
// device. Metadata-only operations (views, shape queries) live here; everything that computes
// goes through the op table and the dispatcher (runtime/ops.h).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device.h"
#include "runtime/dtype.h"
#include "runtime/grad_mode.h"
#include "runtime/intrusive_ptr.h"
#include "runtime/scalar.h"
#include "runtime/small_vector.h"

namespace ampjit {

using DimVector = SmallVector<int64_t, 6>;
using IntArrayRef = std::span<const int64_t>;

// A block of device memory. CPU storages made by ampjit keep their bytes in the same allocation as
// this header (one malloc per tensor's data); external memory (NumPy arrays, CUDA) comes with a
// release callback.
class Storage : public RefCounted {
 public:
  using Release = void (*)(void* ctx, void* data);

  static Ref<Storage> allocate(size_t nbytes, Device device = Device());
  static Ref<Storage> wrap(void* data, size_t nbytes, Device device, Release release, void* ctx);
  ~Storage() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // A hook the CUDA backend installs to allocate and free device memory.
  struct DeviceAllocator {
    void* (*allocate)(size_t nbytes, Device device);
    void (*free)(void* ptr, Device device);
  };
  static void set_device_allocator(DeviceType type, DeviceAllocator a);
  static bool has_device_allocator(DeviceType type);

  // Note [Frozen storage]
  // A frozen module's weights are constants that nothing in its graph writes (Note [Freezing] in
  // script/passes/freeze.h), so freezing marks their storages frozen, and a kernel may keep data
  // derived from a frozen storage's bytes -- oneDNN's pre-packed convolution weights (Note
  // [Pre-packed weights] in kernels/cpu/onednn.cpp) -- with the storage: made on first use, shared
  // by every later call and every thread, dropped with the storage.
  bool frozen() const { return frozen_.load(std::memory_order_acquire); }
  void mark_frozen() { frozen_.store(true, std::memory_order_release); }
  // The object derived under `key`, or null.
  std::shared_ptr<const void> find_derived(std::string_view key) const;
  // Keeps `value` under `key` and returns it, or returns the one another thread kept first.
  std::shared_ptr<const void> add_derived(std::string_view key,
                                          std::shared_ptr<const void> value) const;

 private:
  Storage() = default;
  void destroy() const override;
  struct Derived;

  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Release release_ = nullptr;
  void* ctx_ = nullptr;
  bool inline_ = false;
  std::atomic<bool> frozen_{false};
  mutable std::atomic<Derived*> derived_{nullptr};

 public:
  // Note [Version counter]
  // Every in-place write through the dispatcher (an op that writes an argument: add_, copy_, an
  // out= form) bumps the version of the storage it writes, so the views of a tensor share their
  // base's count, as torch's views share its version counter. Autograd records the version of each
  // tensor it saves for backward and refuses, with torch's message, a saved tensor whose storage
  // was written since (runtime/autograd/saved_variable.cpp).
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() const { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint32_t> version_{0};
};

class Tensor;

// What a device backend does for the runtime's own (undispatched) tensor operations, so that
// Tensor::copy_, fill_, to(), clone(), item() and everything built on them work on its tensors.
// The CUDA backend installs it at load time (kernels/cuda/device_backend.cpp).
struct DeviceBackend {
  // dst = src converted to dst's dtype; same sizes; one or both on the backend's device type, the
  // other possibly on the CPU.
  void (*copy)(const Tensor& dst, const Tensor& src) = nullptr;
  void (*fill)(const Tensor& dst, const Scalar& value) = nullptr;
};
void set_device_backend(DeviceType type, DeviceBackend backend);
// The backend of a device type; throws a clear Error when none is installed.
const DeviceBackend& device_backend(DeviceType type);

namespace autograd {
struct AutogradMeta;
}

class TensorImpl : public RefCounted {
 public:
  Ref<Storage> storage;
  DimVector sizes;
  DimVector strides;
  int64_t offset = 0;  // in elements
  int64_t numel = 0;
  ScalarType dtype = ScalarType::Float32;
  Device device;
  bool requires_grad = false;
  bool is_leaf = true;
  bool is_view = false;
  bool is_wrapped_number = false;  // a Python number turned into a 0-dim tensor (type promotion)
  bool is_inference = maybe_inference_mode();  // made in inference mode (runtime/grad_mode.h)
  bool is_contiguous = true;                   // cached by refresh(): asked several times per op
  // The gradient, grad_fn and hooks (runtime/autograd/autograd.h); null until one is needed.
  std::shared_ptr<autograd::AutogradMeta> autograd;
  // A view made by a view op knows its root base, so that an in-place change through it can
  // rewrite the base's history (Note [Views and in-place changes] in runtime/autograd/views.h);
  // null for every other tensor, the untracked views kernels make among them.
  Ref<TensorImpl> view_base;
  uint32_t view_version = 0;  // the storage version its grad_fn was last derived at
  uint8_t view_creation = 0;  // how the view was made (autograd::CreationMeta)

  // Recomputes numel and contiguity after sizes or strides change.
  void refresh();
  // Whether autograd follows this tensor: a view made by a view op when its base is followed.
  bool grad_required() const { return requires_grad || (view_base && view_base->requires_grad); }
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Ref<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A new contiguous tensor with uninitialized contents.
  static Tensor empty(IntArrayRef sizes, ScalarType dtype = ScalarType::Float32,
                      Device device = Device());
  // A new tensor sharing `storage`.
  static Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides,
                          int64_t offset);

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const Ref<TensorImpl>& impl_ref() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  IntArrayRef sizes() const { return impl_->sizes; }
  IntArrayRef strides() const { return impl_->strides; }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(impl_->sizes.size()); }
  int64_t numel() const { return impl_->numel; }
  int64_t storage_offset() const { return impl_->offset; }
  ScalarType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->device; }
  size_t itemsize() const { return ::ampjit::itemsize(impl_->dtype); }
  bool is_contiguous() const { return impl_->is_contiguous; }
  bool is_floating_point() const { return is_floating(dtype()); }
  // A view made by a view op requires grad when its base does, as torch's do.
  bool requires_grad() const { return impl_->grad_required(); }
  Tensor& set_requires_grad(bool r);
  bool is_leaf() const { return impl_->is_leaf; }
  bool is_view() const { return impl_->is_view; }

  void* raw_data() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * itemsize();
  }
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }
  const Ref<Storage>& storage() const { return impl_->storage; }

  // The single value of a one-element tensor.
  Scalar item() const;
  template <typename T>
  T item() const {
    return item().to<T>();
  }
  // All elements, converted to double, in row-major order (tests, printing).
  std::vector<double> to_double_vector() const;
  std::string shape_str() const;  // "[2, 3]"
  std::string str() const;        // the torch-style repr

  // Metadata-only views (no dispatch; ops.h has the dispatched versions the tracer sees).
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const;
  Tensor view(IntArrayRef sizes) const;
  Tensor reshape(IntArrayRef sizes) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
               int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor contiguous() const;  // self when already contiguous
  Tensor clone() const;       // a contiguous copy
  Tensor to(ScalarType dtype, bool copy = false) const;
  Tensor& copy_(const Tensor& src);  // broadcasting, converting copy
  Tensor& fill_(const Scalar& v);

 private:
  Ref<TensorImpl> impl_;
};

// Shape helpers shared by kernels.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op = "");
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op = "");
DimVector contiguous_strides(IntArrayRef sizes);
std::string shape_str(IntArrayRef sizes);
// The element count of `sizes`; raises torch's "numel: integer multiplication overflow"
// (Note [Checked sizes] in tensor.cpp).
int64_t numel_of(IntArrayRef sizes);
// The bytes of a contiguous tensor of `sizes`; raises torch's "Storage size calculation
// overflowed" when they do not fit in int64.
size_t storage_nbytes(IntArrayRef sizes, size_t itemsize);
// Computes the strides of a view with new sizes, or nullopt when the memory layout does not allow
// it (torch's "view size is not compatible with input tensor's size and stride").
std::optional<DimVector> compute_view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                              IntArrayRef new_sizes);
// Resolves one -1 entry in a requested shape.
DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op);

}  // namespace ampjit
