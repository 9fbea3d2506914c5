// Loads a checkpoint that torch.save wrote from Python (by ampjit or by torch 1.13) holding
// {"weight": [out, in], "bias": [out], "input": [n, in]}, and prints the linear layer's output in
// float32 and under CPU autocast (bfloat16), one line each: "<dtype> v0 v1 ...".
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "runtime/autocast/autocast_state.h"
#include "runtime/ops.h"
#include "serialization/load.h"

using namespace ampjit;

namespace {

Tensor entry(const IValue& checkpoint, const char* name) {
  const IValue* v = checkpoint.dict_obj()->find(IValue(name));
  if (!v || !v->is_tensor()) throw Error(fmt::format("the checkpoint has no tensor '{}'", name));
  return v->to_tensor();
}

void print(const Tensor& y) {
  const Tensor f = y.to(ScalarType::Float32).contiguous();
  fmt::print("{}", dtype_name(y.dtype()));
  for (int64_t i = 0; i < f.numel(); ++i) fmt::print(" {:.9g}", f.data<float>()[i]);
  fmt::print("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CHECKPOINT.pt\n", argv[0]);
    return 2;
  }
  try {
    const IValue checkpoint = load(argv[1]);
    if (!checkpoint.is_dict()) throw Error("the checkpoint is not a dict");
    const Tensor w = entry(checkpoint, "weight"), b = entry(checkpoint, "bias"),
                 x = entry(checkpoint, "input");
    print(ops::linear(x, w, b));
    {
      AutocastGuard autocast(DeviceType::CPU);  // with torch.autocast("cpu"):
      print(ops::linear(x, w, b));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
