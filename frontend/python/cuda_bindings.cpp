// ampjit.cuda's native half: device queries, synchronize, the caching allocator's statistics, the
// device generator, and OutOfMemoryError. Built against the CUDA backend when it exists; without
// it the same functions report that CUDA is unavailable (device_count() == 0) and nothing else.
#include "frontend/python/convert.h"

#ifdef AMPJIT_WITH_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif

namespace ampjit::python {
namespace {

#ifdef AMPJIT_WITH_CUDA
int device_count() {
  return cuda::device_count();
}
std::string unavailable_reason() {
  return cuda::unavailable_reason();
}
void require_cuda(const char* what) {
  AMPJIT_CHECK(cuda::is_available(), "ampjit.cuda.{}(): CUDA is not available: {}", what,
               cuda::unavailable_reason());
}
int index_of(int device) {
  return device < 0 ? cuda::current_device() : device;
}
void synchronize(int device) {
  require_cuda("synchronize");
  // Waiting for the device must not hold the GIL.
  PyThreadState* state = PyEval_SaveThread();
  try {
    cuda::synchronize(device);
  } catch (...) {
    PyEval_RestoreThread(state);
    throw;
  }
  PyEval_RestoreThread(state);
}
int current_device() {
  require_cuda("current_device");
  return cuda::current_device();
}
void set_device(int device) {
  require_cuda("set_device");
  cuda::set_device(device);
}
bp::dict memory_stats(int device) {
  require_cuda("memory_stats");
  const cuda::MemoryStats s = cuda::memory_stats(index_of(device));
  bp::dict d;
  d["allocated_bytes.all.current"] = s.allocated;
  d["reserved_bytes.all.current"] = s.reserved;
  d["allocated_bytes.all.peak"] = s.peak_allocated;
  return d;
}
void reset_peak_memory_stats(int device) {
  require_cuda("reset_peak_memory_stats");
  cuda::reset_peak_memory_stats(index_of(device));
}
void empty_cache() {
  if (cuda::is_available()) cuda::empty_cache();
}
void manual_seed_all(uint64_t seed) {
  cuda::manual_seed_all(seed);
}
#else
int device_count() {
  return 0;
}
std::string unavailable_reason() {
  return "ampjit was built without the CUDA backend";
}
[[noreturn]] void unavailable(const char* what) {
  throw Error(
      fmt::format("ampjit.cuda.{}(): CUDA is not available: {}", what, unavailable_reason()));
}
void synchronize(int) {
  unavailable("synchronize");
}
int current_device() {
  unavailable("current_device");
}
void set_device(int) {
  unavailable("set_device");
}
bp::dict memory_stats(int) {
  unavailable("memory_stats");
}
void reset_peak_memory_stats(int) {
  unavailable("reset_peak_memory_stats");
}
void empty_cache() {}
void manual_seed_all(uint64_t) {}
#endif

}  // namespace

void bind_cuda() {
#ifdef AMPJIT_WITH_CUDA
  cuda::init();
#endif
  // torch.cuda.OutOfMemoryError is a RuntimeError subclass.
  static PyObject* oom =
      PyErr_NewException("ampjit.cuda.OutOfMemoryError", PyExc_RuntimeError, nullptr);
  bp::scope().attr("OutOfMemoryError") = bp::object(bp::handle<>(bp::borrowed(oom)));
  bp::register_exception_translator<OutOfMemoryError>(
      [](const OutOfMemoryError& e) { PyErr_SetString(oom, e.what()); });
  bp::def("_cuda_device_count", device_count);
  bp::def("_cuda_unavailable_reason", unavailable_reason);
  bp::def("_cuda_synchronize", synchronize);
  bp::def("_cuda_current_device", current_device);
  bp::def("_cuda_set_device", set_device);
  bp::def("_cuda_memory_stats", memory_stats);
  bp::def("_cuda_reset_peak_memory_stats", reset_peak_memory_stats);
  bp::def("_cuda_empty_cache", empty_cache);
  bp::def("_cuda_manual_seed_all", manual_seed_all);
}

}  // namespace ampjit::python
