// A restricted unpickler for the pickles in torch's archives (data.pkl, constants.pkl).
//
// Note [Restricted unpickler]
// Python's pickle is a small stack machine whose GLOBAL and REDUCE opcodes import and call any
// name: loading a pickle can run any code. This one runs none. It reads the opcodes torch's
// writers emit (protocol 2, and the protocol-4 framing, short strings and memo opcodes) and knows a
// fixed set of globals, each mapped to what ampjit builds for it:
//  - torch._utils._rebuild_tensor_v2 / _rebuild_parameter: a view of a storage, its sizes,
//    strides and offset checked to stay inside the storage (check_view below);
//  - torch.<Type>Storage (in a persistent storage reference, BINPERSID): the storage, which the
//    caller's `storage` hook reads from the archive;
//  - collections.OrderedDict (a dict; a BUILD of its `_metadata` attribute is dropped);
//  - torch.device, torch.Size, the dtypes (torch.float32, ...);
//  - torch.jit._pickle's build_intlist/floatlist/boollist/tensorlist/doublelist and
//    restore_type_tag (the value itself);
//  - a `__torch__.` class, only when the caller gives the `new_object` and `set_state` hooks (a
//    TorchScript module's objects).
// Any other global is an error that names it, raised when the GLOBAL opcode is read, before
// anything after it runs. Hostile input is bounded: a string or memo index cannot exceed the
// input's size; containers nest at most kMaxNesting deep; a list or dict that was put inside
// another container can no longer change (so no cycle can form: torch's writers finish a container
// before they use it); every opcode checks its operands' types. Errors name the pickle (`what`)
// and the byte offset.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "runtime/ivalue.h"

namespace ampjit::serialization {

inline constexpr int kMaxNesting = 1000;

struct UnpickleHooks {
  // A persistent storage reference ('storage', torch.<Type>Storage, key, location, numel): the
  // storage's elements as a 1-D tensor of `numel` elements of `dtype`.
  std::function<Tensor(ScalarType dtype, const std::string& key, const std::string& location,
                       int64_t numel)>
      storage;
  // A `__torch__.` class named in the pickle: a new object of it (NEWOBJ), and its state (BUILD).
  std::function<IValue(const std::string& qualified_name)> new_object;
  std::function<void(const IValue& object, const IValue& state)> set_state;
};

IValue unpickle(std::string_view bytes, const UnpickleHooks& hooks, std::string_view what);

// A view of the 1-D `storage` with these sizes, strides and offset, after checking that every
// element it reaches lies inside the storage (`what` names the archive in the error).
Tensor check_view(const Tensor& storage, int64_t offset, const std::vector<int64_t>& sizes,
                  const std::vector<int64_t>& strides, std::string_view what);

}  // namespace ampjit::serialization
