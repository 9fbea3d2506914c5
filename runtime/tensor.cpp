// Storage allocation, tensor construction, metadata views and converting copies.
#include "runtime/tensor.h"

#include "runtime/autograd/autograd.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>

#include "runtime/cpu_allocator.h"
#include "runtime/error.h"
#include "runtime/layout.h"
#include "runtime/reduced_float.h"
#include "runtime/strided_loop.h"
#include "runtime/threads.h"

namespace ampjit {

namespace {
std::atomic<int> g_max_threads{0};  // 0: not read yet
}  // namespace

int max_threads() {
  int n = g_max_threads.load(std::memory_order_relaxed);
  if (n == 0) {
    n = omp_get_max_threads();
    g_max_threads.store(n, std::memory_order_relaxed);
  }
  return n;
}

void set_max_threads(int n) {
  AMPJIT_CHECK(n >= 1, "set_num_threads expects a positive integer");
  omp_set_num_threads(n);
  g_max_threads.store(n, std::memory_order_relaxed);
}

// ---- Storage ----------------------------------------------------------------------------------

namespace {
// A CPU copy of a device tensor, for the host-side readers (item, to_double_vector).
Tensor to_cpu(const Tensor& t) {
  Tensor c = Tensor::empty(t.sizes(), t.dtype(), Device());
  c.copy_(t);
  return c;
}

constexpr size_t kAlign = 64;
constexpr size_t kHeader = sizeof(Storage);
Storage::DeviceAllocator g_device_allocators[kNumDeviceTypes] = {};
DeviceBackend g_device_backends[kNumDeviceTypes] = {};
}  // namespace

void Storage::set_device_allocator(DeviceType type, DeviceAllocator a) {
  g_device_allocators[static_cast<int>(type)] = a;
}

bool Storage::has_device_allocator(DeviceType type) {
  return g_device_allocators[static_cast<int>(type)].allocate != nullptr;
}

void set_device_backend(DeviceType type, DeviceBackend backend) {
  g_device_backends[static_cast<int>(type)] = backend;
}

const DeviceBackend& device_backend(DeviceType type) {
  const DeviceBackend& b = g_device_backends[static_cast<int>(type)];
  AMPJIT_CHECK(b.copy && b.fill, "device {} is not available: ampjit was built without its backend",
               device_type_name(type));
  return b;
}

Ref<Storage> Storage::allocate(size_t nbytes, Device device) {
  if (device.is_cpu() && nbytes >= kLargeCpuBytes) {  // Note [Large CPU buffers]
    Ref<Storage> s(new Storage());
    s->data_ = cpu_large_alloc(nbytes);
    s->nbytes_ = nbytes;
    s->device_ = device;
    return s;
  }
  if (device.is_cpu()) {
    // Note [Inline storage]: header and bytes share one malloc'd block; the bytes start at the
    // next 64-byte boundary after the header. Plain malloc (not memalign) keeps small tensors on
    // glibc's thread cache, which matters for eager dispatch overhead.
    void* mem = std::malloc(kHeader + nbytes + kAlign);
    AMPJIT_CHECK(mem, "out of memory: could not allocate {} bytes on cpu", nbytes);
    Storage* s = new (mem) Storage();
    const uintptr_t data =
        (reinterpret_cast<uintptr_t>(mem) + kHeader + kAlign - 1) & ~(kAlign - 1);
    s->data_ = reinterpret_cast<void*>(data);
    s->nbytes_ = nbytes;
    s->device_ = device;
    s->inline_ = true;
    return Ref<Storage>(s);
  }
  const auto& a = g_device_allocators[static_cast<int>(device.type)];
  AMPJIT_CHECK(a.allocate, "device {} is not available: ampjit was built without its backend",
               device.str());
  void* p = a.allocate(nbytes, device);
  Ref<Storage> s(new Storage());
  s->data_ = p;
  s->nbytes_ = nbytes;
  s->device_ = device;
  return s;
}

Ref<Storage> Storage::wrap(void* data, size_t nbytes, Device device, Release release, void* ctx) {
  Ref<Storage> s(new Storage());
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->device_ = device;
  s->release_ = release;
  s->ctx_ = ctx;
  return s;
}

struct Storage::Derived {
  std::mutex mu;
  std::vector<std::pair<std::string, std::shared_ptr<const void>>> items;
};

std::shared_ptr<const void> Storage::find_derived(std::string_view key) const {
  Derived* d = derived_.load(std::memory_order_acquire);
  if (!d) return nullptr;
  std::lock_guard<std::mutex> lock(d->mu);
  for (const auto& [k, v] : d->items)
    if (k == key) return v;
  return nullptr;
}

std::shared_ptr<const void> Storage::add_derived(std::string_view key,
                                                 std::shared_ptr<const void> value) const {
  Derived* d = derived_.load(std::memory_order_acquire);
  if (!d) {
    auto fresh = std::make_unique<Derived>();
    if (derived_.compare_exchange_strong(d, fresh.get(), std::memory_order_acq_rel))
      d = fresh.release();  // else d is the one another thread installed
  }
  std::lock_guard<std::mutex> lock(d->mu);
  for (const auto& [k, v] : d->items)
    if (k == key) return v;
  d->items.emplace_back(std::string(key), value);
  return value;
}

Storage::~Storage() {
  delete derived_.load(std::memory_order_acquire);
  if (release_) {
    release_(ctx_, data_);
  } else if (!inline_ && data_) {
    if (device_.is_cpu()) {
      cpu_large_free(data_);
      return;
    }
    const auto& a = g_device_allocators[static_cast<int>(device_.type)];
    if (a.free) a.free(data_, device_);
  }
}

void Storage::destroy() const {
  if (inline_) {
    void* mem = const_cast<Storage*>(this);
    this->~Storage();
    std::free(mem);
  } else {
    delete this;
  }
}

// ---- Shape helpers ----------------------------------------------------------------------------

// Note [Checked sizes]
// Every element and byte count goes through these two, so a shape whose product does not fit is
// torch's error, never a wrapped count (a tensor with too little memory behind it).
int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) overflow |= __builtin_mul_overflow(n, s, &n);
  AMPJIT_CHECK(!overflow, "numel: integer multiplication overflow");
  return n;
}

size_t storage_nbytes(IntArrayRef sizes, size_t itemsize) {
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return 0;
  uint64_t n = itemsize;
  bool overflow = false;
  for (int64_t s : sizes) overflow |= __builtin_mul_overflow(n, static_cast<uint64_t>(s), &n);
  AMPJIT_CHECK(!overflow && n <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
               "Storage size calculation overflowed with sizes={}", shape_str(sizes));
  return static_cast<size_t>(n);
}

std::string shape_str(IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = std::max<int64_t>(ndim, 1);  // a 0-dim tensor accepts dims -1 and 0
  AMPJIT_CHECK_T(IndexError, dim >= -n && dim < n,
                 "{}{}Dimension out of range (expected to be in range of [{}, {}], but got {})", op,
                 *op ? ": " : "", -n, n - 1, dim);
  return dim < 0 ? dim + n : dim;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    AMPJIT_CHECK(da == db || da == 1 || db == 1,
                 "{}: the size of tensor a ({}) must match the size of tensor b ({}) at "
                 "non-singleton dimension {} (shapes {} and {})",
                 op, da, db, i, shape_str(a), shape_str(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector st(sizes.size(), 1);
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    // Wraps only for an empty tensor (the byte count is checked), whose strides are never used.
    acc = static_cast<int64_t>(static_cast<uint64_t>(acc) *
                               static_cast<uint64_t>(std::max<int64_t>(sizes[i], 1)));
  }
  return st;
}

DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op) {
  DimVector out(shape);
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      AMPJIT_CHECK(infer < 0, "{}: only one dimension can be inferred", op);
      infer = static_cast<int>(i);
    } else {
      AMPJIT_CHECK(out[i] >= 0, "{}: invalid shape dimension {}", op, out[i]);
      known *= out[i];
    }
  }
  if (infer >= 0) {
    AMPJIT_CHECK(known != 0 && numel % known == 0, "{}: shape '{}' is invalid for input of size {}",
                 op, shape_str(shape), numel);
    out[infer] = numel / known;
  } else {
    AMPJIT_CHECK(known == numel, "{}: shape '{}' is invalid for input of size {}", op,
                 shape_str(shape), numel);
  }
  return out;
}

std::optional<DimVector> compute_view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                              IntArrayRef new_sizes) {
  DimVector new_strides(new_sizes.size(), 0);
  if (old_sizes.empty()) {
    for (auto& s : new_strides) s = 1;
    return new_strides;
  }
  const int64_t numel = numel_of(old_sizes);
  if (numel == 0) {
    if (old_sizes.size() == new_sizes.size() &&
        std::equal(old_sizes.begin(), old_sizes.end(), new_sizes.begin()))
      return DimVector(old_strides);
    return contiguous_strides(new_sizes);
  }
  // Walk chunks of old dims that are contiguous with each other, matching them to new dims.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 ||
        (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

// ---- Tensor -----------------------------------------------------------------------------------

void TensorImpl::refresh() {
  numel = numel_of(sizes);
  int64_t expected = 1;
  is_contiguous = true;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) {
      is_contiguous = false;
      break;
    }
    expected *= sizes[d];
  }
}

Tensor Tensor::empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  for (int64_t s : sizes) {
    AMPJIT_CHECK(s >= 0, "Trying to create tensor with negative dimension {}: {}", s,
                 ::ampjit::shape_str(sizes));
  }
  AMPJIT_CHECK(dtype != ScalarType::Undefined, "empty: undefined dtype");
  const size_t nbytes = storage_nbytes(sizes, ::ampjit::itemsize(dtype));
  if (device.is_cuda() && device.index < 0) device.index = 0;
  Ref<TensorImpl> impl(new TensorImpl());
  impl->sizes.assign(sizes.begin(), sizes.end());
  impl->strides = contiguous_strides(sizes);
  // The checked byte count gives the element count too (0 when a dim is 0, however large the rest).
  impl->numel = static_cast<int64_t>(nbytes / ::ampjit::itemsize(dtype));
  impl->dtype = dtype;
  impl->device = device;
  impl->storage = Storage::allocate(nbytes, device);
  return Tensor(std::move(impl));
}

Tensor Tensor::make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides,
                         int64_t offset) {
  Ref<TensorImpl> impl(new TensorImpl());
  const TensorImpl& b = *base.impl();
  impl->storage = b.storage;
  impl->sizes = DimVector(sizes);
  impl->strides = DimVector(strides);
  impl->offset = offset;
  impl->refresh();
  impl->dtype = b.dtype;
  impl->device = b.device;
  impl->is_inference = b.is_inference;  // a view of a normal tensor stays normal, in any mode
  // Whether the view requires grad is autograd's to say (the view op's grad_fn), as in torch: a
  // view made without recording (no_grad, or below the autograd layer) is a leaf that does not.
  impl->is_view = true;
  return Tensor(std::move(impl));
}

int64_t Tensor::size(int64_t d) const {
  return impl_->sizes[wrap_dim(d, dim(), "size")];
}
int64_t Tensor::stride(int64_t d) const {
  return impl_->strides[wrap_dim(d, dim(), "stride")];
}

Tensor& Tensor::set_requires_grad(bool r) {
  AMPJIT_CHECK(!r || is_floating_point(),
               "only Tensors of floating point dtype can require gradients");
  impl_->requires_grad = r;
  if (r) autograd::ensure_meta(*this);  // before the tensor is shared (autograd.cpp)
  return *this;
}

std::string Tensor::shape_str() const {
  return ::ampjit::shape_str(sizes());
}

Scalar Tensor::item() const {
  AMPJIT_CHECK(numel() == 1, "a Tensor with {} elements cannot be converted to Scalar", numel());
  if (!device().is_cpu()) return to_cpu(*this).item();
  return dispatch_all(dtype(), "item", [&]<typename T>() -> Scalar {
    const T v = *data<T>();
    if constexpr (std::is_same_v<T, bool>)
      return Scalar(v);
    else if constexpr (std::is_integral_v<T>)
      return Scalar(static_cast<int64_t>(v));
    else
      return Scalar(static_cast<double>(static_cast<opmath_t<T>>(v)));
  });
}

std::vector<double> Tensor::to_double_vector() const {
  if (!device().is_cpu()) return to_cpu(*this).to_double_vector();
  std::vector<double> out(static_cast<size_t>(numel()));
  Tensor c = to(ScalarType::Float64).contiguous();
  if (numel()) std::memcpy(out.data(), c.raw_data(), out.size() * sizeof(double));
  return out;
}

Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const {
  AMPJIT_CHECK(sizes.size() == strides.size(), "as_strided: {} sizes but {} strides", sizes.size(),
               strides.size());
  return make_view(*this, sizes, strides, offset);
}

Tensor Tensor::view(IntArrayRef shape) const {
  DimVector sizes = infer_size(shape, numel(), "view");
  auto st = compute_view_strides(this->sizes(), this->strides(), sizes);
  AMPJIT_CHECK(st.has_value(),
               "view size is not compatible with input tensor's size and stride (at least one "
               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(*this, sizes, *st, storage_offset());
}

Tensor Tensor::reshape(IntArrayRef shape) const {
  DimVector sizes = infer_size(shape, numel(), "reshape");
  auto st = compute_view_strides(this->sizes(), this->strides(), sizes);
  if (st) return make_view(*this, sizes, *st, storage_offset());
  return clone().view(sizes);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  d0 = wrap_dim(d0, dim(), "transpose");
  d1 = wrap_dim(d1, dim(), "transpose");
  DimVector sz(sizes()), st(strides());
  if (dim() > 0) {
    std::swap(sz[d0], sz[d1]);
    std::swap(st[d0], st[d1]);
  }
  return make_view(*this, sz, st, storage_offset());
}

Tensor Tensor::t() const {
  AMPJIT_CHECK(dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is {}D", dim());
  return dim() < 2 ? make_view(*this, sizes(), strides(), storage_offset()) : transpose(0, 1);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  AMPJIT_CHECK(static_cast<int64_t>(dims.size()) == dim(),
               "permute(sparse_coo): number of dimensions in the tensor input does not match the "
               "length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to "
               "len(dims) = {}",
               dim(), dims.size());
  DimVector sz(dims.size(), 0), st(dims.size(), 0);
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], dim(), "permute");
    AMPJIT_CHECK(!seen[d], "permute: repeated dim {} in {}", d, ::ampjit::shape_str(dims));
    seen[d] = true;
    sz[i] = impl_->sizes[d];
    st[i] = impl_->strides[d];
  }
  return make_view(*this, sz, st, storage_offset());
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  AMPJIT_CHECK_T(IndexError, dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  d = wrap_dim(d, dim(), "select");
  const int64_t n = impl_->sizes[d];
  AMPJIT_CHECK_T(IndexError, index >= -n && index < n,
                 "select(): index {} out of range for tensor of size {} at dimension {}", index,
                 shape_str(), d);
  if (index < 0) index += n;
  DimVector sz(sizes()), st(strides());
  sz.erase(d);
  st.erase(d);
  return make_view(*this, sz, st, storage_offset() + index * impl_->strides[d]);
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  AMPJIT_CHECK_T(IndexError, dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  AMPJIT_CHECK_T(ValueError, step > 0, "slice step must be positive");
  d = wrap_dim(d, dim(), "slice");
  const int64_t n = impl_->sizes[d];
  int64_t s = start.value_or(0), e = end.value_or(n);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  DimVector sz(sizes()), st(strides());
  sz[d] = (e - s + step - 1) / step;
  st[d] *= step;
  return make_view(*this, sz, st, storage_offset() + s * impl_->strides[d]);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  AMPJIT_CHECK_T(IndexError, dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  d = wrap_dim(d, dim(), "narrow");
  const int64_t n = impl_->sizes[d];
  // torch's narrow: `start` wraps like a dim of a size-n tensor (n itself is the valid end).
  if (start != n) start = wrap_dim(start, n);
  AMPJIT_CHECK(length >= 0 && start <= n - length,
               "start ({}) + length ({}) exceeds dimension size ({}).", start, length, n);
  return slice(d, start, start + length, 1);
}

Tensor Tensor::expand(IntArrayRef shape) const {
  AMPJIT_CHECK(shape.size() >= sizes().size(),
               "expand: the number of sizes provided ({}) must be greater or equal to the number "
               "of dimensions in the tensor ({})",
               shape.size(), dim());
  const size_t lead = shape.size() - sizes().size();
  DimVector sz(shape.size(), 0), st(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {  // torch reports the first mismatch from the right
    if (i < lead) {
      AMPJIT_CHECK(shape[i] >= 0, "expand: -1 is not allowed in a leading, non-existing dimension");
      sz[i] = shape[i];
      st[i] = 0;
      continue;
    }
    const int64_t have = impl_->sizes[i - lead];
    const int64_t want = shape[i] == -1 ? have : shape[i];
    AMPJIT_CHECK(have == want || have == 1,
                 "The expanded size of the tensor ({}) must match the existing size ({}) at "
                 "non-singleton dimension {}.  Target sizes: {}.  Tensor sizes: {}",
                 want, have, i, ::ampjit::shape_str(shape), shape_str());
    sz[i] = want;
    st[i] = have == want ? impl_->strides[i - lead] : 0;
  }
  return make_view(*this, sz, st, storage_offset());
}

Tensor Tensor::squeeze() const {
  DimVector sz, st;
  for (int64_t d = 0; d < dim(); ++d) {
    if (impl_->sizes[d] != 1) {
      sz.push_back(impl_->sizes[d]);
      st.push_back(impl_->strides[d]);
    }
  }
  return make_view(*this, sz, st, storage_offset());
}

Tensor Tensor::squeeze(int64_t d) const {
  d = wrap_dim(d, dim(), "squeeze");
  if (dim() == 0 || impl_->sizes[d] != 1)
    return make_view(*this, sizes(), strides(), storage_offset());
  DimVector sz(sizes()), st(strides());
  sz.erase(d);
  st.erase(d);
  return make_view(*this, sz, st, storage_offset());
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim(d, dim() + 1, "unsqueeze");
  DimVector sz(sizes()), st(strides());
  const int64_t new_stride = d < dim() ? impl_->sizes[d] * impl_->strides[d] : 1;
  sz.insert(d, 1);
  st.insert(d, new_stride);
  return make_view(*this, sz, st, storage_offset());
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (dim() == 0) return reshape(std::vector<int64_t>{1});
  start = wrap_dim(start, dim(), "flatten");
  end = wrap_dim(end, dim(), "flatten");
  AMPJIT_CHECK(start <= end, "flatten() has invalid args: start_dim cannot come after end_dim");
  DimVector sz;
  for (int64_t d = 0; d < start; ++d) sz.push_back(impl_->sizes[d]);
  int64_t m = 1;
  for (int64_t d = start; d <= end; ++d) m *= impl_->sizes[d];
  sz.push_back(m);
  for (int64_t d = end + 1; d < dim(); ++d) sz.push_back(impl_->sizes[d]);
  return reshape(sz);
}

Tensor Tensor::contiguous() const {
  return is_contiguous() ? *this : clone();
}

Tensor Tensor::clone() const {
  Tensor out = empty(sizes(), dtype(), device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(ScalarType dt, bool copy) const {
  if (dt == dtype() && !copy) return *this;
  Tensor out = empty_in_layout_of(*this, sizes(), dt);  // Note [Channels-last tensors]
  out.copy_(*this);
  return out;
}

namespace {
// Converts one value between any two dtypes the way torch's casts do (through the op-math type,
// so float64 -> float16 rounds once from double). A float goes to uint8 through int64, as in
// torch's static_cast_with_inter_type: -1.5 becomes 255, where casting a negative float straight to
// an unsigned type is undefined (clang's UBSan reports it).
// A float to an integer as x86's truncating conversion gives it (cvttsd2si, what the casts compile
// to): NaN and values out of range become the integer indefinite, int64's lowest value, or int32's
// for the narrower types (then truncated to them), where C++ leaves the cast undefined.
template <typename To>
inline To float_to_int(double x) {
  if constexpr (sizeof(To) == 8) {
    if (!(x >= -0x1p63 && x < 0x1p63)) return std::numeric_limits<To>::min();
    return static_cast<To>(x);
  } else {
    if (!(x > -2147483649.0 && x < 2147483648.0))
      return static_cast<To>(std::numeric_limits<int32_t>::min());
    return static_cast<To>(static_cast<int32_t>(x));
  }
}

template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>)
    return v;
  else if constexpr (std::is_same_v<To, bool>)
    return static_cast<opmath_t<From>>(v) != 0;
  else if constexpr (std::is_same_v<To, uint8_t> && !std::is_integral_v<From>)
    return static_cast<uint8_t>(
        float_to_int<int64_t>(static_cast<double>(static_cast<opmath_t<From>>(v))));
  else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>)
    return float_to_int<To>(static_cast<double>(static_cast<opmath_t<From>>(v)));
  else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>)
    return static_cast<To>(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, double>)
      return To(v);
    else if constexpr (std::is_integral_v<From>)
      return To(static_cast<double>(v));
    else
      return To(static_cast<float>(v));
  } else
    return static_cast<To>(v);
}
}  // namespace

namespace {
// float32 <-> float16/bfloat16 between contiguous tensors, in vectorized runs split across the
// threads (reduced_float.h: the same values as the element loop). Autocast casts every weight
// this way on every call. Returns false for other dtype pairs.
bool copy_reduced_float(Tensor& dst, const Tensor& src) {
  const ScalarType d = dst.dtype(), s = src.dtype();
  const bool narrow = s == ScalarType::Float32 && is_reduced_floating(d);
  const bool widen = d == ScalarType::Float32 && is_reduced_floating(s);
  if (!narrow && !widen) return false;
  const bool bf16 = (narrow ? d : s) == ScalarType::BFloat16;
  const int64_t n = dst.numel();
  if (narrow) {
    const float* in = src.data<float>();
    auto* out = static_cast<uint16_t*>(dst.raw_data());
    parallel_for(n, kParallelGrain,
                 [&](int64_t b, int64_t e) { round_to_reduced(in + b, out + b, e - b, bf16); });
  } else {
    const auto* in = static_cast<const uint16_t*>(src.raw_data());
    float* out = dst.data<float>();
    parallel_for(n, kParallelGrain,
                 [&](int64_t b, int64_t e) { widen_reduced(in + b, out + b, e - b, bf16); });
  }
  return true;
}
}  // namespace

Tensor& Tensor::copy_(const Tensor& src) {
  // Broadcast src to self's shape.
  Tensor s = src.dim() == dim() && std::equal(sizes().begin(), sizes().end(), src.sizes().begin())
                 ? src
                 : src.expand(sizes());
  if (!device().is_cpu() || !s.device().is_cpu()) {
    if (numel() == 0) return *this;
    device_backend(device().is_cpu() ? s.device().type : device().type).copy(*this, s);
    return *this;
  }
  // Both dense in one layout (row-major, or channels-last: Note [Channels-last tensors]): one run.
  const bool flat = (is_contiguous() && s.is_contiguous()) ||
                    (is_channels_last(*this) && is_channels_last(s) &&
                     std::equal(strides().begin(), strides().end(), s.strides().begin()));
  if (dtype() == s.dtype() && flat) {
    if (raw_data() != s.raw_data()) std::memmove(raw_data(), s.raw_data(), numel() * itemsize());
    return *this;
  }
  if (flat && copy_reduced_float(*this, s)) return *this;
  DimVector dst_bs(strides()), src_bs(s.strides());
  for (auto& x : dst_bs) x *= static_cast<int64_t>(itemsize());
  for (auto& x : src_bs) x *= static_cast<int64_t>(s.itemsize());
  StridedLoop<2> loop(sizes(), {static_cast<char*>(raw_data()), static_cast<char*>(s.raw_data())},
                      {std::span<const int64_t>(dst_bs), std::span<const int64_t>(src_bs)},
                      /*in_memory_order=*/true);
  // Note [Copy runs]: the inner runs of an expanded, strided or converting copy (tile, repeat,
  // repeat_interleave, a cast) are mostly dense: a run whose two strides are the item sizes is a
  // memmove (an inline loop when short and not overlapping) or a typed loop the compiler
  // vectorizes, a run from a broadcast source (stride 0) is a fill, and only the rest steps by the
  // runtime strides. Each element is the same convert<D>.
  dispatch_all(dtype(), "copy_", [&]<typename D>() {
    dispatch_all(s.dtype(), "copy_", [&]<typename S>() {
      loop.run([](char* const* p, const int64_t* st, int64_t n) {
        char* d = p[0];
        const char* q = p[1];
        if (st[0] == static_cast<int64_t>(sizeof(D)) && st[1] == static_cast<int64_t>(sizeof(S))) {
          if constexpr (std::is_same_v<D, S>) {
            const size_t bytes = static_cast<size_t>(n) * sizeof(D);
            if (bytes <= 256 && (d + bytes <= q || q + bytes <= d)) {
              // a short run (repeat_interleave's rows): inline, no call
              D* o = reinterpret_cast<D*>(d);
              const D* in = reinterpret_cast<const D*>(q);
              for (int64_t i = 0; i < n; ++i) o[i] = in[i];
            } else {
              std::memmove(d, q, bytes);
            }
          } else {
            D* o = reinterpret_cast<D*>(d);
            if constexpr (std::is_same_v<S, bool>) {
              // bool read as its byte (0 or 1, the same value): GCC vectorizes no loop that
              // loads bool
              const uint8_t* in = reinterpret_cast<const uint8_t*>(q);
              for (int64_t i = 0; i < n; ++i) o[i] = convert<D>(in[i]);
            } else {
              const S* in = reinterpret_cast<const S*>(q);
              for (int64_t i = 0; i < n; ++i) o[i] = convert<D>(in[i]);
            }
          }
          return;
        }
        if (st[0] == static_cast<int64_t>(sizeof(D)) && st[1] == 0) {
          std::fill_n(reinterpret_cast<D*>(d), n, convert<D>(*reinterpret_cast<const S*>(q)));
          return;
        }
        for (int64_t i = 0; i < n; ++i, d += st[0], q += st[1]) {
          *reinterpret_cast<D*>(d) = convert<D>(*reinterpret_cast<const S*>(q));
        }
      });
    });
  });
  return *this;
}

namespace {
// torch's checked_convert for a floating value stored into an integer dtype (fill_, full): NaN,
// infinities and values out of the type's range are errors, not the type's minimum.
void check_fits(const Scalar& v, ScalarType dt) {
  if (!v.is_floating() || !is_integral(dt) || dt == ScalarType::Bool) return;
  const double x = v.to_double();
  // The type's range as doubles; 2^63 is int64's exclusive bound (torch 1.13 lets 2^63 itself
  // through and stores the minimum: ampjit raises there).
  double lo = 0, hi = 0;
  bool hi_exclusive = false;
  const char* name = "";
  switch (dt) {
    case ScalarType::UInt8:
      lo = 0, hi = 255, name = "uint8_t";
      break;
    case ScalarType::Int8:
      lo = -128, hi = 127, name = "int8_t";
      break;
    case ScalarType::Int16:
      lo = -32768, hi = 32767, name = "int16_t";
      break;
    case ScalarType::Int32:
      lo = -2147483648.0, hi = 2147483647.0, name = "int";
      break;
    default:
      lo = -9223372036854775808.0, hi = 9223372036854775808.0, hi_exclusive = true;
      name = "int64_t";
      break;
  }
  AMPJIT_CHECK(x >= lo && (hi_exclusive ? x < hi : x <= hi),  // false for NaN
               "value cannot be converted to type {} without overflow", name);
}
}  // namespace

Tensor& Tensor::fill_(const Scalar& v) {
  check_fits(v, dtype());
  if (!device().is_cpu()) {
    if (numel() != 0) device_backend(device().type).fill(*this, v);
    return *this;
  }
  DimVector bs(strides());
  for (auto& x : bs) x *= static_cast<int64_t>(itemsize());
  StridedLoop<1> loop(sizes(), {static_cast<char*>(raw_data())}, {std::span<const int64_t>(bs)});
  dispatch_all(dtype(), "fill_", [&]<typename T>() {
    const T value = v.is_floating() ? convert<T>(v.to_double())
                    : v.is_bool()   ? convert<T>(v.to_bool())
                                    : convert<T>(v.to_int());
    // zeros (every byte 0: not -0.0) fill dense runs with memset, whose speed does not depend
    // on where the compiler happened to place a loop (fill_n's ran at half speed when its
    // loop straddled a 64-byte line)
    bool zero = true;
    for (size_t k = 0; k < sizeof(T); ++k) zero &= reinterpret_cast<const char*>(&value)[k] == 0;
    loop.run([value, zero](char* const* p, const int64_t* st, int64_t n) {
      char* d = p[0];
      if (st[0] == static_cast<int64_t>(sizeof(T))) {  // a dense run (all of a contiguous tensor)
        if (zero)
          std::memset(d, 0, static_cast<size_t>(n) * sizeof(T));
        else
          std::fill_n(reinterpret_cast<T*>(d), n, value);
        return;
      }
      for (int64_t i = 0; i < n; ++i, d += st[0]) *reinterpret_cast<T*>(d) = value;
    });
  });
  return *this;
}

}  // namespace ampjit
