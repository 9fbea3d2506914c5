// The Python Tensor type: properties, the arithmetic protocol (fast paths for the operators
// eager code uses most), indexing, and conversions to Python data. Methods that map one-to-one
// to ops are attached in Python from the op table (ampjit/_tensor.py).
#include <boost/python/numpy.hpp>

#include <mutex>
#include <unordered_map>
#include "frontend/python/convert.h"
#include "runtime/autograd/autograd.h"

#include "runtime/ops.h"

namespace ampjit::python {

namespace np = boost::python::numpy;

namespace {

// ---- Operators -----------------------------------------------------------------------------
// Note [Operator fast paths]
// `x + 1.0` must cost about a microsecond from Python. Each operator resolves, once, the op-table
// overloads it uses (by ATen base name: the `.Tensor` overload for a tensor operand, the `.Scalar`
// overload for a Python number, trailing arguments defaulted from the schema), converts its one
// argument directly and dispatches without generic argument binding. A reflected operator
// (`1.0 - x`) or a number with no Scalar overload becomes a 0-dim "wrapped number" tensor, which
// type promotion treats like a Python scalar, exactly as torch does.

struct BinaryDunder {
  const OpEntry* tensor_op = nullptr;
  const OpEntry* scalar_op = nullptr;
};

bool takes_two_then_defaults(const OpEntry& op, TypeKind second) {
  const auto& a = op.schema.args;
  if (a.size() < 2 || a[0].type->kind() != TypeKind::Tensor || a[1].type->kind() != second)
    return false;
  for (size_t i = 2; i < a.size(); ++i)
    if (!a[i].default_value) return false;
  return !op.is_out;
}

const BinaryDunder& resolve(const char* base) {
  static std::mutex mu;
  static std::unordered_map<std::string, BinaryDunder> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(base);
  if (it != cache.end()) return it->second;
  BinaryDunder d;
  for (const OpEntry* op : find_overloads(base)) {
    if (op->has(kScriptOnly)) continue;  // script's scalar arithmetic: never Python's
    if (!d.tensor_op && takes_two_then_defaults(*op, TypeKind::Tensor)) d.tensor_op = op;
    if (!d.scalar_op && takes_two_then_defaults(*op, TypeKind::Number)) d.scalar_op = op;
  }
  AMPJIT_CHECK_T(NotImplementedError, d.tensor_op, "ampjit has no tensor overload of '{}'", base);
  return cache.emplace(base, d).first->second;
}

Tensor wrapped_number(const IValue& v) {
  Tensor w = ops::full(std::vector<int64_t>{}, v.to_scalar());
  if (v.is_double()) w = w.to(ScalarType::Float64);  // torch wraps Python floats as double
  w.impl()->is_wrapped_number = true;
  return w;
}

void push_defaults(Stack& s, const OpEntry& op) {
  const auto& a = op.schema.args;
  for (size_t i = s.size(); i < a.size(); ++i) s.push_back(*a[i].default_value);
}

bp::object not_implemented() {
  return bp::object(bp::handle<>(bp::borrowed(Py_NotImplemented)));
}

// The result of a call through a thread-local stack, which then holds nothing: a tensor it kept
// would outlive the interpreter (and its graph with it) at thread exit.
Tensor take_result(Stack& s) {
  Tensor r = s[0].to_tensor();
  s.clear();
  return r;
}

// self <op> other, or other <op> self when reflected.
bp::object binary(const Tensor& self, PyObject* other, const char* base, bool reflected) {
  const BinaryDunder& d = resolve(base);
  thread_local Stack s;
  s.clear();
  if (Tensor* t = as_tensor(other)) {
    s.emplace_back(reflected ? *t : self);
    s.emplace_back(reflected ? self : *t);
    push_defaults(s, *d.tensor_op);
    dispatch_from_python(*d.tensor_op, s);
    return wrap(take_result(s));
  }
  if (!(PyFloat_Check(other) || PyLong_Check(other) || PyIndex_Check(other)))
    return not_implemented();
  IValue v = to_ivalue(other);
  const OpEntry* op = d.tensor_op;
  if (!reflected && d.scalar_op) {
    op = d.scalar_op;
    s.emplace_back(self);
    s.push_back(std::move(v));
  } else if (reflected) {
    s.emplace_back(wrapped_number(v));
    s.emplace_back(self);
  } else {
    s.emplace_back(self);
    s.emplace_back(wrapped_number(v));
  }
  push_defaults(s, *op);
  dispatch_from_python(*op, s);
  return wrap(take_result(s));
}

// self <op>= other: the in-place overload writes self; the Python object itself is returned.
bp::object inplace(bp::object self, PyObject* other, const char* base) {
  const Tensor& t = bp::extract<const Tensor&>(self);
  const BinaryDunder& d = resolve(base);
  thread_local Stack s;
  s.clear();
  s.emplace_back(t);
  if (Tensor* o = as_tensor(other)) {
    s.emplace_back(*o);
  } else if (PyFloat_Check(other) || PyLong_Check(other) || PyIndex_Check(other)) {
    IValue v = to_ivalue(other);
    if (d.scalar_op) {
      s.push_back(std::move(v));
      push_defaults(s, *d.scalar_op);
      dispatch_from_python(*d.scalar_op, s);
      s.clear();
      return self;
    }
    s.emplace_back(wrapped_number(v));
  } else {
    return not_implemented();
  }
  push_defaults(s, *d.tensor_op);
  dispatch_from_python(*d.tensor_op, s);
  s.clear();
  return self;
}

bp::object unary(const Tensor& self, const char* base) {
  const auto& ov = find_overloads(base);
  // The tensor overload; script's scalar ones (aten::neg.int) come after it in the table.
  AMPJIT_CHECK_T(NotImplementedError, !ov.empty() && !ov[0]->has(kScriptOnly),
                 "ampjit has no op named '{}'", base);
  Stack s{IValue(self)};
  push_defaults(s, *ov[0]);
  dispatch_from_python(*ov[0], s);
  return wrap(s[0].to_tensor());
}

#define AMPJIT_BINARY(py, base)                     \
  bp::object py(const Tensor& a, bp::object b) {    \
    return binary(a, b.ptr(), base, false);         \
  }                                                 \
  bp::object r##py(const Tensor& a, bp::object b) { \
    return binary(a, b.ptr(), base, true);          \
  }
AMPJIT_BINARY(op_add, "aten::add")
AMPJIT_BINARY(op_sub, "aten::sub")
AMPJIT_BINARY(op_mul, "aten::mul")
AMPJIT_BINARY(op_div, "aten::div")
AMPJIT_BINARY(op_mod, "aten::remainder")
AMPJIT_BINARY(op_pow, "aten::pow")
AMPJIT_BINARY(op_matmul, "aten::matmul")
AMPJIT_BINARY(op_and, "aten::bitwise_and")
AMPJIT_BINARY(op_or, "aten::bitwise_or")
AMPJIT_BINARY(op_xor, "aten::bitwise_xor")
AMPJIT_BINARY(op_lshift, "aten::bitwise_left_shift")
AMPJIT_BINARY(op_rshift, "aten::bitwise_right_shift")
#undef AMPJIT_BINARY
#define AMPJIT_COMPARE(py, base)                 \
  bp::object py(const Tensor& a, bp::object b) { \
    return binary(a, b.ptr(), base, false);      \
  }
AMPJIT_COMPARE(op_eq, "aten::eq")
AMPJIT_COMPARE(op_ne, "aten::ne")
AMPJIT_COMPARE(op_lt, "aten::lt")
AMPJIT_COMPARE(op_le, "aten::le")
AMPJIT_COMPARE(op_gt, "aten::gt")
AMPJIT_COMPARE(op_ge, "aten::ge")
#undef AMPJIT_COMPARE
#define AMPJIT_INPLACE(py, base)              \
  bp::object py(bp::object a, bp::object b) { \
    return inplace(a, b.ptr(), base);         \
  }
AMPJIT_INPLACE(op_iadd, "aten::add_")
AMPJIT_INPLACE(op_isub, "aten::sub_")
AMPJIT_INPLACE(op_imul, "aten::mul_")
AMPJIT_INPLACE(op_idiv, "aten::div_")
AMPJIT_INPLACE(op_iand, "aten::bitwise_and_")
AMPJIT_INPLACE(op_ior, "aten::bitwise_or_")
AMPJIT_INPLACE(op_ixor, "aten::bitwise_xor_")
AMPJIT_INPLACE(op_ilshift, "aten::bitwise_left_shift_")
AMPJIT_INPLACE(op_irshift, "aten::bitwise_right_shift_")
#undef AMPJIT_INPLACE
bp::object op_neg(const Tensor& a) {
  return unary(a, "aten::neg");
}
bp::object op_abs(const Tensor& a) {
  return unary(a, "aten::abs");
}
bp::object op_invert(const Tensor& a) {
  return unary(a, "aten::bitwise_not");
}

// Generic call of any op by base name (e.g. for dunders not above).
bp::object call_named(const char* name, bp::tuple args) {
  const auto& overloads = find_overloads(name);
  AMPJIT_CHECK_T(NotImplementedError, !overloads.empty(), "ampjit has no op named '{}'", name);
  std::vector<IValue> vals;
  for (Py_ssize_t i = 0; i < bp::len(args); ++i)
    vals.push_back(to_ivalue(bp::object(args[i]).ptr()));
  std::string errors;
  for (const OpEntry* op : overloads) {
    if (op->has(kScriptOnly)) continue;
    Stack s;
    try {
      s = bind_arguments(op->schema, vals);
    } catch (const TypeError& e) {
      errors += std::string("\n  ") + e.what();
      continue;
    }
    dispatch_from_python(*op, s);
    return s.size() == 1 ? from_ivalue(s[0])
                         : from_ivalue(IValue::tuple(std::vector<IValue>(s.begin(), s.end())));
  }
  throw TypeError(fmt::format("{}(): no overload matches the arguments:{}", name, errors));
}

// ---- Properties ----------------------------------------------------------------------------

bp::object t_dtype(const Tensor& t) {
  return dtype_object(t.dtype());
}
bp::object t_shape(const Tensor& t) {
  return make_size(t.sizes());
}
bp::object t_device(const Tensor& t) {
  return bp::object(DeviceObject{t.device()});
}
bool t_is_cuda(const Tensor& t) {
  return t.device().is_cuda();
}
bool t_requires_grad(const Tensor& t) {
  return t.requires_grad();
}
void t_set_requires_grad(Tensor& t, bool r) {
  autograd::set_requires_grad(t, r);
}
int64_t t_ndim(const Tensor& t) {
  return t.dim();
}
int64_t t_numel(const Tensor& t) {
  return t.numel();
}
bool t_is_contiguous(const Tensor& t) {
  return t.is_contiguous();
}
int64_t t_element_size(const Tensor& t) {
  return static_cast<int64_t>(t.itemsize());
}
int64_t t_storage_offset(const Tensor& t) {
  return t.storage_offset();
}
uintptr_t t_data_ptr(const Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.raw_data());
}
bool t_is_floating_point(const Tensor& t) {
  return t.is_floating_point();
}
bp::object t_size(const Tensor& t, bp::object dim) {
  if (dim.is_none()) return make_size(t.sizes());
  return bp::object(static_cast<long long>(t.size(bp::extract<int64_t>(dim))));
}
bp::object t_stride(const Tensor& t, bp::object dim) {
  if (dim.is_none()) {
    bp::list l;
    for (int64_t s : t.strides()) l.append(static_cast<long long>(s));
    return bp::tuple(l);
  }
  return bp::object(static_cast<long long>(t.stride(bp::extract<int64_t>(dim))));
}
std::string t_repr(const Tensor& t) {
  return t.str();
}
int64_t t_len(const Tensor& t) {
  AMPJIT_CHECK_T(TypeError, t.dim() > 0, "len() of a 0-d tensor");
  return t.sizes()[0];
}
long t_hash(bp::object self) {
  return static_cast<long>(reinterpret_cast<uintptr_t>(self.ptr()) >> 4);
}

bp::object scalar_to_py(const Scalar& s) {
  if (s.is_bool()) return bp::object(s.to_bool());
  if (s.is_integral()) return bp::object(static_cast<long long>(s.to_int()));
  return bp::object(s.to_double());
}
bp::object t_item(const Tensor& t) {
  warn_python_dataflow("a Python number");
  return scalar_to_py(t.device().is_cpu() ? t.item() : Tensor(ops::to_device(t, Device())).item());
}
bool t_bool(const Tensor& t) {
  warn_python_dataflow("a Python boolean");
  AMPJIT_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return t.item().to_bool();
}
double t_float(const Tensor& t) {
  warn_python_dataflow("a Python float");
  AMPJIT_CHECK(t.numel() == 1, "only one element tensors can be converted to Python scalars");
  return t.item().to_double();
}
bp::object t_int(const Tensor& t) {
  warn_python_dataflow("a Python integer");
  AMPJIT_CHECK(t.numel() == 1, "only one element tensors can be converted to Python scalars");
  const Scalar s = t.item();
  if (!s.is_floating()) return bp::object(s.to_int());
  // Python's own int(float): NaN is a ValueError, an infinity an OverflowError, as torch's.
  bp::object f(bp::handle<>(PyFloat_FromDouble(s.to_double())));
  return bp::object(bp::handle<>(PyNumber_Long(f.ptr())));
}

bp::object tolist_rec(const Tensor& t, const std::vector<double>& v, int64_t dim, int64_t& pos) {
  if (dim == t.dim()) {
    const double x = v[pos++];
    if (t.dtype() == ScalarType::Bool) return bp::object(x != 0);
    if (!t.is_floating_point()) return bp::object(static_cast<long long>(x));
    return bp::object(x);
  }
  bp::list l;
  for (int64_t i = 0; i < t.sizes()[dim]; ++i) l.append(tolist_rec(t, v, dim + 1, pos));
  return l;
}
bp::object t_tolist(const Tensor& t) {
  warn_python_dataflow("a Python list");
  Tensor c = t.device().is_cpu() ? t : Tensor(ops::to_device(t, Device()));
  if (t.dtype() == ScalarType::Int64) {
    // int64 values above 2^53 must not pass through double.
    Tensor cc = c.contiguous();
    const int64_t* p = cc.data<int64_t>();
    std::vector<double> unused;
    std::function<bp::object(int64_t, int64_t&)> rec = [&](int64_t dim,
                                                           int64_t& pos) -> bp::object {
      if (dim == cc.dim()) return bp::object(static_cast<long long>(p[pos++]));
      bp::list l;
      for (int64_t i = 0; i < cc.sizes()[dim]; ++i) l.append(rec(dim + 1, pos));
      return l;
    };
    int64_t pos = 0;
    return rec(0, pos);
  }
  std::vector<double> v = c.to_double_vector();
  int64_t pos = 0;
  return tolist_rec(c, v, 0, pos);
}

// ---- NumPy ---------------------------------------------------------------------------------

np::dtype numpy_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return np::dtype::get_builtin<bool>();
    case ScalarType::UInt8:
      return np::dtype::get_builtin<uint8_t>();
    case ScalarType::Int8:
      return np::dtype::get_builtin<int8_t>();
    case ScalarType::Int16:
      return np::dtype::get_builtin<int16_t>();
    case ScalarType::Int32:
      return np::dtype::get_builtin<int32_t>();
    case ScalarType::Int64:
      return np::dtype::get_builtin<int64_t>();
    case ScalarType::Float32:
      return np::dtype::get_builtin<float>();
    case ScalarType::Float64:
      return np::dtype::get_builtin<double>();
    case ScalarType::Float16:
      return np::dtype(bp::str("float16"));
    default:
      throw TypeError(fmt::format("Got unsupported ScalarType {}", dtype_name(t)));
  }
}

bp::object t_numpy(bp::object self) {
  warn_python_dataflow("a NumPy array");
  const Tensor& t = bp::extract<const Tensor&>(self);
  AMPJIT_CHECK_T(
      TypeError, t.device().is_cpu(),
      "can't convert {} device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
      "to host memory first.",
      t.device().str());
  AMPJIT_CHECK(
      !t.requires_grad(),
      "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  np::dtype dt = numpy_dtype(t.dtype());
  bp::list shape, strides;
  for (int64_t s : t.sizes()) shape.append(s);
  for (int64_t s : t.strides()) strides.append(s * static_cast<int64_t>(t.itemsize()));
  // The array shares the tensor's memory and keeps the tensor (self) alive as its base.
  return np::from_data(t.raw_data(), dt, bp::tuple(shape), bp::tuple(strides), self);
}

}  // namespace

bp::object call_op_by_name(const char* name, bp::tuple args) {
  return call_named(name, args);
}

void bind_tensor() {
  bp::class_<Tensor>("Tensor", bp::init<>())
      .add_property("dtype", t_dtype)
      .add_property("shape", t_shape)
      .add_property("device", t_device)
      .add_property("is_cuda", t_is_cuda)
      .add_property("requires_grad", t_requires_grad, t_set_requires_grad)
      .add_property("ndim", t_ndim)
      .def("dim", t_ndim)
      .def("numel", t_numel)
      .def("nelement", t_numel)
      .def("size", t_size, (bp::arg("dim") = bp::object()))
      .def("stride", t_stride, (bp::arg("dim") = bp::object()))
      .def("is_contiguous", t_is_contiguous)
      .def("is_floating_point", t_is_floating_point)
      .def("element_size", t_element_size)
      .def("storage_offset", t_storage_offset)
      .def("data_ptr", t_data_ptr)
      .def("item", t_item)
      .def("tolist", t_tolist)
      .def("numpy", t_numpy)
      .def("__repr__", t_repr)
      .def("__len__", t_len)
      .def("__hash__", t_hash)
      .def("__bool__", t_bool)
      .def("__float__", t_float)
      .def("__int__", t_int)
      .def("__add__", op_add)
      .def("__radd__", rop_add)
      .def("__iadd__", op_iadd)
      .def("__sub__", op_sub)
      .def("__rsub__", rop_sub)
      .def("__isub__", op_isub)
      .def("__mul__", op_mul)
      .def("__rmul__", rop_mul)
      .def("__imul__", op_imul)
      .def("__truediv__", op_div)
      .def("__rtruediv__", rop_div)
      .def("__itruediv__", op_idiv)
      .def("__mod__", op_mod)
      .def("__rmod__", rop_mod)
      .def("__pow__", op_pow)
      .def("__rpow__", rop_pow)
      .def("__matmul__", op_matmul)
      .def("__rmatmul__", rop_matmul)
      .def("__and__", op_and)
      .def("__rand__", rop_and)
      .def("__or__", op_or)
      .def("__ror__", rop_or)
      .def("__xor__", op_xor)
      .def("__rxor__", rop_xor)
      .def("__lshift__", op_lshift)
      .def("__rlshift__", rop_lshift)
      .def("__rshift__", op_rshift)
      .def("__rrshift__", rop_rshift)
      .def("__iand__", op_iand)
      .def("__ior__", op_ior)
      .def("__ixor__", op_ixor)
      .def("__ilshift__", op_ilshift)
      .def("__irshift__", op_irshift)
      .def("__eq__", op_eq)
      .def("__ne__", op_ne)
      .def("__lt__", op_lt)
      .def("__le__", op_le)
      .def("__gt__", op_gt)
      .def("__ge__", op_ge)
      .def("__neg__", op_neg)
      .def("__abs__", op_abs)
      .def("__invert__", op_invert);
}

}  // namespace ampjit::python
