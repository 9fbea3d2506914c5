// libFuzzer harness: arbitrary text as the saved code of a TorchScript archive (Note [Loading
// TorchScript archives], Note [Serialized code]). The harness wraps it as code/__torch__.py of an
// archive whose data.pkl holds one object of class __torch__.M with attributes `training` (True)
// and `weight` (a 2x2 float tensor) and whose constants.pkl holds one tensor, loads it with
// ampjit::jit::load_bytes (reading the class declarations) and compiles every method of M. Text the
// loader or the compiler rejects must be an Error (a CompileError with its location); any other
// exception, a crash, a hang, a sanitizer report or a leak is a finding. Nothing is run: the
// compiled code could loop forever by design.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "runtime/error.h"
#include "serialization/jit_load.h"
#include "serialization/zip_archive.h"

namespace {

// data.pkl: __torch__.M() with state {"training": True, "weight": <tensor of storage "0">}, as
// torch.jit.save writes it (protocol 2, NEWOBJ then BUILD). The literals are split after each \x
// escape: a hex escape would swallow a following hex digit ("\x00c" is one character).
const char kData[] =
    "\x80\x02"
    "c__torch__\nM\n)\x81}(X\x08\x00\x00\x00"
    "training\x88X\x06\x00\x00\x00"
    "weight"
    "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00"
    "storagectorch\nFloatStorage\nX\x01\x00\x00\x00"
    "0X\x03\x00\x00\x00"
    "cpuK\x04tQK\x00K\x02K\x02\x86K\x02K\x01\x86\x89"
    "ccollections\nOrderedDict\n)RtRub.";
// constants.pkl: a tuple of one tensor (storage "0" of constants/).
const char kConstants[] =
    "\x80\x02"
    "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00"
    "storagectorch\nFloatStorage\nX\x01\x00\x00\x00"
    "0X\x03\x00\x00\x00"
    "cpuK\x04tQK\x00K\x04\x85K\x01\x85\x89"
    "ccollections\nOrderedDict\n)RtR\x85.";

std::string archive(const std::string& code) {
  static const float zeros[4] = {0, 0, 0, 0};
  ampjit::serialization::ZipWriter w("archive");
  w.add("data.pkl", std::string(kData, sizeof(kData) - 1));
  w.add("constants.pkl", std::string(kConstants, sizeof(kConstants) - 1));
  w.add_view("data/0", zeros, sizeof(zeros));
  w.add_view("constants/0", zeros, sizeof(zeros));
  w.add("code/__torch__.py", code);
  w.add("version", "3\n");
  return w.finish();
}

// The harness's own archive must load, or every input would fail before the code is compiled:
// a class with a method that reads both attributes and the constant.
bool self_check() {
  using namespace ampjit;
  const jit::Module m = jit::load_bytes(
      archive("class M(Module):\n  __parameters__ = [\"weight\", ]\n  __buffers__ = []\n"
              "  weight : Tensor\n  training : bool\n"
              "  def forward(self, x: Tensor) -> Tensor:\n"
              "    return torch.add(torch.add(x, self.weight), CONSTANTS.c0[0])\n"));
  const Tensor y =
      m.forward({IValue(Tensor::empty(std::vector<int64_t>{2, 2}).fill_(Scalar(1.0)))}).to_tensor();
  if (y.numel() != 4) return false;
  for (double v : y.to_double_vector())
    if (v != 1.0) return false;  // 1 + a zero weight + a zero constant
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ampjit;
  static const bool harness_ok = self_check();
  if (!harness_ok) __builtin_trap();
  const std::string code(reinterpret_cast<const char*>(data), size);
  try {
    const jit::Module m = jit::load_bytes(archive(code), "<fuzz>");
    for (const std::string& name : m.method_names()) (void)m.method(name);
  } catch (const Error&) {
  }
  return 0;
}
