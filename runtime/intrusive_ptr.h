// Intrusive reference counting for runtime objects (storages, tensors, lists).
// One atomic count inside the object: a Tensor handle is a single pointer and copying it is one
// atomic increment, which keeps the eager dispatch path short.
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace ampjit {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void retain() const noexcept { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void release() const noexcept {
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
  }
  uint32_t use_count() const noexcept { return refcount_.load(std::memory_order_relaxed); }

 protected:
  // Frees the object when the last reference goes; overridden where memory is laid out specially.
  virtual void destroy() const { delete this; }

 private:
  mutable std::atomic<uint32_t> refcount_{0};
};

template <typename T>
class Ref {
 public:
  Ref() noexcept = default;
  Ref(std::nullptr_t) noexcept {}
  explicit Ref(T* p) noexcept : p_(p) {
    if (p_) p_->retain();
  }
  Ref(const Ref& o) noexcept : p_(o.p_) {
    if (p_) p_->retain();
  }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <typename U>
  Ref(const Ref<U>& o) noexcept : p_(o.get()) {
    if (p_) p_->retain();
  }
  ~Ref() {
    if (p_) p_->release();
  }
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  template <typename... Args>
  static Ref make(Args&&... args) {
    return Ref(new T(std::forward<Args>(args)...));
  }

  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  bool operator==(const Ref& o) const noexcept { return p_ == o.p_; }
  // Gives up ownership without decrementing; the caller must release() later.
  T* detach() noexcept { return std::exchange(p_, nullptr); }
  static Ref adopt(T* p) noexcept {
    Ref r;
    r.p_ = p;
    return r;
  }

 private:
  T* p_ = nullptr;
};

}  // namespace ampjit
