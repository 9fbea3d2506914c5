// torch.load for C++: the object torch.save wrote (from Python, by ampjit or by torch 1.13).
//
//   #include "serialization/load.h"
//   ampjit::IValue sd = ampjit::load("model_state.pt");        // a dict of tensors
//   ampjit::Tensor w = sd.dict_obj()->find(ampjit::IValue("fc.weight"))->to_tensor();
//
// The archive is read as Note [Zip archives] says and its pickle by the restricted unpickler
// (Note [Restricted unpickler]): tensors (views saved together share their storage again), ints,
// floats, bools, strings, None, dtypes, devices, lists, tuples and dicts (an OrderedDict is a
// dict; a torch.Size a tuple). Nothing in the file runs; a file that names anything else is an
// error naming it. A TorchScript archive (torch.jit.save) is refused with a pointer to
// torch.jit.load.
#pragma once
#include <string>

#include "runtime/ivalue.h"

namespace ampjit {

IValue load(const std::string& path);
// The same from the bytes of a file; `what` names it in errors.
IValue load_bytes(std::string bytes, const std::string& what = "<bytes>");

}  // namespace ampjit
