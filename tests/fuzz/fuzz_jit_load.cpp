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
// torch.jit.save writes it (protocol 2, NEWOBJ then BUILD).
const char kData[] =
    "\x80\x02"
    "c__torch__\nM\n)\x81}(X\x08\x00\x00\x00training\x88X\x06\x00\x00\x00weight"
    "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
    "X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQK\x00K\x02K\x02\x86K\x02K\x01\x86\x89"
    "ccollections\nOrderedDict\n)RtRub.";
// constants.pkl: a tuple of one tensor (storage "0" of constants/).
const char kConstants[] =
    "\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
    "X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQK\x00K\x04\x85K\x01\x85\x89"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ampjit;
  const std::string code(reinterpret_cast<const char*>(data), size);
  try {
    const jit::Module m = jit::load_bytes(archive(code), "<fuzz>");
    for (const std::string& name : m.method_names()) (void)m.method(name);
  } catch (const Error&) {
  }
  return 0;
}
