// libFuzzer harness: arbitrary bytes as a pickle (serialization::unpickle, Note [Restricted
// unpickler]), with a storage hook that gives zeros for references of at most 2^20 elements. A
// pickle the unpickler rejects must be an Error; one it accepts gives a value. Any other
// exception, a crash, a sanitizer report, a leak (a cycle of containers would be one) or an
// allocation past libFuzzer's limit is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/error.h"
#include "runtime/tensor.h"
#include "serialization/unpickler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ampjit;
  serialization::UnpickleHooks hooks;
  hooks.storage = [](ScalarType dtype, const std::string&, const std::string&, int64_t numel) {
    if (numel > (int64_t{1} << 20)) throw Error("storage too large for the harness");
    Tensor t = Tensor::empty({&numel, 1}, dtype);
    t.fill_(Scalar(0.0));
    return t;
  };
  try {
    const IValue v = serialization::unpickle(
        std::string_view(reinterpret_cast<const char*>(data), size), hooks, "<fuzz>");
    (void)v.repr();
  } catch (const Error&) {
  }
  return 0;
}
