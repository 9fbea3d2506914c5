// Loads a TorchScript module that torch.jit.save wrote (by ampjit or by torch 1.13) and an input
// that torch.save wrote, runs forward in float32 and under CPU autocast (bfloat16), and prints each
// output tensor, one line each: "<dtype> v0 v1 ...", then the parameter count.
//
//   run_torchscript model.pt input.pt
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <vector>

#include "runtime/autocast/autocast_state.h"
#include "serialization/jit_load.h"
#include "serialization/load.h"

using namespace ampjit;

namespace {

// The tensors of a result, in order (a tuple or list of them, nested, or one).
void tensors_of(const IValue& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) {
    out.push_back(v.to_tensor());
  } else if (v.is_tuple() || v.is_list()) {
    for (const IValue& e : v.is_tuple() ? v.tuple_elems() : v.list_elems()) tensors_of(e, out);
  }
}

void print(const IValue& result) {
  std::vector<Tensor> ts;
  tensors_of(result, ts);
  for (const Tensor& y : ts) {
    const Tensor f = y.to(ScalarType::Float32).contiguous();
    fmt::print("{}", dtype_name(y.dtype()));
    for (int64_t i = 0; i < f.numel(); ++i) fmt::print(" {:.9g}", f.data<float>()[i]);
    fmt::print("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.pt INPUT.pt\n", argv[0]);
    return 2;
  }
  try {
    const jit::Module model = jit::load(argv[1]);
    const IValue input = load(argv[2]);
    if (!input.is_tensor()) throw Error("the input file does not hold a tensor");
    print(model.forward({input}));
    {
      AutocastGuard autocast(DeviceType::CPU);  // with torch.autocast("cpu"):
      print(model.forward({input}));
    }
    int64_t count = 0;
    for (const auto& [name, p] : model.named_parameters()) count += p.numel();
    fmt::print("parameters {}\n", count);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
