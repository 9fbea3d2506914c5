// Conversions between Python objects and ampjit values, shared by every binding file.
#pragma once
#include <boost/python.hpp>

#include "runtime/op_table.h"

namespace ampjit::python {

namespace bp = boost::python;

// The Python objects for dtypes and devices. dtypes are singletons (`x.dtype is ampjit.float16`).
struct DTypeObject {
  ScalarType type;
};
struct DeviceObject {
  Device device;
};

bp::object dtype_object(ScalarType t);
// The Tensor pointer inside a Python tensor object, or nullptr when `o` is not a tensor.
Tensor* as_tensor(PyObject* o);
// A Python object wrapping `t` (a new Python object sharing the TensorImpl).
bp::object wrap(Tensor t);

// Python -> IValue: tensors, bool/int/float (and objects with __index__/__float__), None, str,
// dtype, device, lists and tuples (recursively). Throws TypeError for anything else.
IValue to_ivalue(PyObject* o);
// IValue -> Python: tensors, numbers, None, str, dtype, device, lists, tuples.
bp::object from_ivalue(const IValue& v);

// Releases the GIL for the scope when the work is large enough to be worth it.
class MaybeReleaseGIL {
 public:
  explicit MaybeReleaseGIL(bool release) : state_(release ? PyEval_SaveThread() : nullptr) {}
  ~MaybeReleaseGIL() {
    if (state_) PyEval_RestoreThread(state_);
  }

 private:
  PyThreadState* state_;
};
// Whether an op over these arguments is big enough to release the GIL for.
bool worth_releasing_gil(const Stack& s);
// Dispatches with the GIL released when worthwhile.
void dispatch_from_python(const OpEntry& op, Stack& s);

// Python's `Size` type (a tuple subclass defined in ampjit/_tensor.py), installed at import.
extern PyObject* g_size_type;
bp::object make_size(IntArrayRef sizes);

void register_conversions();
void bind_tensor();
void bind_module_functions();
void bind_autocast();
void bind_jit();
void bind_script();
void bind_cuda();
void bind_serialization();
void bind_autograd();

// While tracing, warns (TracerWarning) that converting a tensor to `what` ("a Python number")
// makes the trace treat the value as a constant, with torch's message.
void warn_python_dataflow(const char* what);

}  // namespace ampjit::python
