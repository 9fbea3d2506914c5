// The `ampjit._C` extension: exception translation, the generic op call used by every
// torch-shaped function and method, tensor construction from Python data and NumPy, and the op
// table listing the pure-Python package builds its namespaces from.
#include <boost/python/numpy.hpp>

#include <cstring>

#include "frontend/python/convert.h"
#include "runtime/caches.h"
#include "runtime/cpu_features.h"
#include "runtime/default_dtype.h"
#include "runtime/grad_mode.h"
#include "runtime/ops.h"
#include "runtime/random.h"
#include "runtime/strided_loop.h"
#include "runtime/threads.h"

namespace ampjit::python {

namespace np = boost::python::numpy;

namespace {

// ---- Exceptions ----------------------------------------------------------------------------

template <typename E>
void translate_to(PyObject* py_type) {
  bp::register_exception_translator<E>(
      [py_type](const E& e) { PyErr_SetString(py_type, e.what()); });
}

// ---- The generic call ------------------------------------------------------------------------
// Note [Overload resolution from Python]
// `_call("aten::max", args, kwargs)` converts the arguments once, then tries each overload of the
// base name in declaration order (the order of the .def files) and runs the first whose schema
// binds (runtime/schema.h: defaults, number conversions, type checks). When none binds, the
// TypeError lists every candidate's complaint, like torch's "no overload matches".

bp::object g_namedtuple_factory;  // (op base name, field names, values) -> a named tuple

bp::object results_to_python(const OpEntry& op, Stack& s) {
  if (s.size() == 1) return from_ivalue(s[0]);
  bp::list vals;
  for (const IValue& v : s) vals.append(from_ivalue(v));
  bool named = !op.schema.returns.empty();
  bp::list names;
  for (const auto& r : op.schema.returns) {
    if (r.name.empty()) named = false;
    names.append(r.name);
  }
  if (named && !g_namedtuple_factory.is_none())
    return g_namedtuple_factory(op.schema.name, bp::tuple(names), bp::tuple(vals));
  return bp::tuple(vals);
}

// torch's Python signatures let an int[] parameter absorb trailing ints: ones(2, 3), x.view(2, 3),
// x.permute(1, 0). Packs them when the schema's first int list parameter receives a bare int and
// either more positionals arrive than there are parameters or the list has no fixed length.
std::vector<IValue> pack_varargs_sizes(const FunctionSchema& schema,
                                       const std::vector<IValue>& pos) {
  size_t npos = 0;
  int p = -1;
  for (size_t i = 0; i < schema.args.size(); ++i) {
    const Argument& a = schema.args[i];
    if (a.kwarg_only) break;
    ++npos;
    const Type* t = a.type.get();
    if (t->kind() == TypeKind::Optional) t = t->elem().get();
    if (p < 0 && t->kind() == TypeKind::List && t->elem()->kind() == TypeKind::Int)
      p = static_cast<int>(i);
  }
  if (p < 0 || pos.size() <= static_cast<size_t>(p) || !pos[p].is_int()) return pos;
  if (!(pos.size() > npos || schema.args[p].list_len == 0)) return pos;
  for (size_t i = p; i < pos.size(); ++i)
    if (!pos[i].is_int()) return pos;
  std::vector<IValue> out(pos.begin(), pos.begin() + p);
  out.push_back(IValue::list(std::vector<IValue>(pos.begin() + p, pos.end())));
  return out;
}

bp::object call(const std::string& base, bp::tuple args, bp::dict kwargs) {
  // Script's scalar arithmetic (aten::add.int, ...) is not Python's to call.
  std::vector<const OpEntry*> overloads;
  for (const OpEntry* op : find_overloads(base))
    if (!op->has(kScriptOnly)) overloads.push_back(op);
  AMPJIT_CHECK_T(NotImplementedError, !overloads.empty(), "ampjit does not implement '{}'", base);
  std::vector<IValue> pos;
  const Py_ssize_t n = bp::len(args);
  pos.reserve(n);
  for (Py_ssize_t i = 0; i < n; ++i) pos.push_back(to_ivalue(PyTuple_GET_ITEM(args.ptr(), i)));
  std::vector<std::string> kw_names;
  std::vector<IValue> kw_vals;
  PyObject *key, *value;
  Py_ssize_t it = 0;
  while (PyDict_Next(kwargs.ptr(), &it, &key, &value)) {
    kw_names.emplace_back(PyUnicode_AsUTF8(key));
    kw_vals.push_back(to_ivalue(value));
  }
  std::string errors;
  for (const OpEntry* op : overloads) {
    std::vector<Kwarg> kws;
    for (size_t i = 0; i < kw_names.size(); ++i) kws.push_back({kw_names[i], kw_vals[i]});
    Stack s;
    try {
      s = bind_arguments(op->schema, pack_varargs_sizes(op->schema, pos), std::move(kws));
    } catch (const TypeError& e) {
      if (overloads.size() == 1) throw;
      errors += fmt::format("\n  {}\n    {}", op->schema.str(), e.what());
      continue;
    }
    dispatch_from_python(*op, s);
    return results_to_python(*op, s);
  }
  throw TypeError(fmt::format("{}(): no overload of {} matches the arguments:{}",
                              base.substr(base.find("::") + 2), base, errors));
}

// Runs one exact overload ("aten::add.Tensor") with Python arguments.
bp::object call_overload(const std::string& full_name, bp::tuple args, bp::dict kwargs) {
  const OpEntry* op = find_op(full_name);
  AMPJIT_CHECK_T(NotImplementedError, op && !op->has(kScriptOnly), "ampjit does not implement '{}'",
                 full_name);
  std::vector<IValue> pos;
  for (Py_ssize_t i = 0; i < bp::len(args); ++i)
    pos.push_back(to_ivalue(PyTuple_GET_ITEM(args.ptr(), i)));
  std::vector<std::string> names;
  std::vector<Kwarg> kws;
  bp::list items = kwargs.items();
  for (Py_ssize_t i = 0; i < bp::len(items); ++i)
    names.push_back(bp::extract<std::string>(items[i][0]));
  for (Py_ssize_t i = 0; i < bp::len(items); ++i)
    kws.push_back({names[i], to_ivalue(bp::object(items[i][1]).ptr())});
  Stack s = bind_arguments(op->schema, std::move(pos), std::move(kws));
  dispatch_from_python(*op, s);
  return results_to_python(*op, s);
}

// The op table for the Python package: (base name, overload schemas, first arg is `self`).
bp::list op_table() {
  bp::list out;
  std::string last;
  for (const OpEntry& op : all_ops()) {
    if (op.base_name == last || op.has(kScriptOnly)) continue;
    last = op.base_name;
    const auto& a = op.schema.args;
    const bool method = !a.empty() && a[0].name == "self" && a[0].type->kind() == TypeKind::Tensor;
    out.append(bp::make_tuple(op.base_name, method, op.is_inplace));
  }
  return out;
}

bp::list op_schemas(const std::string& base) {
  bp::list out;
  for (const OpEntry* op : find_overloads(base))
    if (!op->has(kScriptOnly)) out.append(op->schema.str());
  return out;
}

// ---- Tensors from Python data --------------------------------------------------------------

bool is_seq(PyObject* o) {
  return PyList_Check(o) || PyTuple_Check(o);
}

// The shape of nested sequences, from the chain of first elements.
std::vector<int64_t> infer_shape(PyObject* o) {
  std::vector<int64_t> shape;
  while (is_seq(o)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    shape.push_back(n);
    if (n == 0) break;
    o = PySequence_Fast_GET_ITEM(o, 0);
  }
  return shape;
}

// Checks that `o` is rectangular with `shape` and accumulates the dtype of its leaves.
void check_and_infer(PyObject* o, const std::vector<int64_t>& shape, size_t depth,
                     ScalarType& kind) {
  if (depth < shape.size()) {
    AMPJIT_CHECK_T(
        ValueError, is_seq(o) && PySequence_Fast_GET_SIZE(o) == shape[depth],
        "expected sequence of length {} at dim {} (got {})", shape[depth], depth,
        is_seq(o) ? std::to_string(PySequence_Fast_GET_SIZE(o)) : std::string(Py_TYPE(o)->tp_name));
    for (Py_ssize_t i = 0; i < shape[depth]; ++i)
      check_and_infer(PySequence_Fast_GET_ITEM(o, i), shape, depth + 1, kind);
    return;
  }
  AMPJIT_CHECK_T(ValueError, !is_seq(o), "expected a number at dim {}, got a sequence", depth);
  if (Tensor* t = as_tensor(o)) {
    AMPJIT_CHECK_T(ValueError, t->numel() == 1 && t->dim() == 0,
                   "only one element tensors can be converted to Python scalars");
    kind = promote_types(kind, t->dtype());
    return;
  }
  if (PyBool_Check(o))
    kind = promote_types(kind, ScalarType::Bool);
  else if (PyLong_Check(o))
    kind = promote_types(kind, ScalarType::Int64);
  else if (PyFloat_Check(o))
    kind = promote_types(kind, default_float_dtype());
  else {
    IValue v;
    try {
      v = to_ivalue(o);
    } catch (const TypeError&) {
    }
    AMPJIT_CHECK_T(TypeError, v.is_number(), "Could not infer dtype of {}", Py_TYPE(o)->tp_name);
    kind = promote_types(kind, v.is_double() ? default_float_dtype()
                               : v.is_bool() ? ScalarType::Bool
                                             : ScalarType::Int64);
  }
}

void fill_values(PyObject* o, std::vector<double>& vals, std::vector<int64_t>& ints) {
  if (PyList_Check(o) || PyTuple_Check(o)) {
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); ++i)
      fill_values(PySequence_Fast_GET_ITEM(o, i), vals, ints);
    return;
  }
  IValue v = as_tensor(o) ? IValue(as_tensor(o)->item()) : to_ivalue(o);
  vals.push_back(v.to_double());
  ints.push_back(v.is_double() ? static_cast<int64_t>(v.to_double()) : v.to_int());
}

Tensor from_numpy_impl(bp::object arr);

bp::object tensor(bp::object data, bp::object dtype, bp::object device, bool requires_grad) {
  std::optional<ScalarType> dt;
  if (!dtype.is_none()) dt = to_ivalue(dtype.ptr()).to_scalar_type();
  Tensor out;
  if (Tensor* t = as_tensor(data.ptr())) {
    out = t->clone();  // torch.tensor(t) copies
    if (dt) out = out.to(*dt);
  } else if (PyObject_HasAttrString(data.ptr(), "__array_interface__") &&
             !PyList_Check(data.ptr())) {
    out = from_numpy_impl(data).clone();
    if (dt) out = out.to(*dt);
  } else {
    const std::vector<int64_t> shape = infer_shape(data.ptr());
    ScalarType kind = ScalarType::Undefined;
    check_and_infer(data.ptr(), shape, 0, kind);
    if (kind == ScalarType::Undefined) kind = default_float_dtype();  // tensor([]) is float
    std::vector<double> vals;
    std::vector<int64_t> ints;
    fill_values(data.ptr(), vals, ints);
    const ScalarType target = dt.value_or(kind);
    if (is_integral(target) || target == ScalarType::Bool || kind == ScalarType::Int64) {
      Tensor i64 = Tensor::empty(shape, ScalarType::Int64);
      if (is_floating(kind)) {  // float data into an int dtype: truncate like torch
        for (size_t k = 0; k < vals.size(); ++k)
          i64.data<int64_t>()[k] = static_cast<int64_t>(vals[k]);
      } else if (!ints.empty()) {
        std::memcpy(i64.raw_data(), ints.data(), ints.size() * sizeof(int64_t));
      }
      out = kind == ScalarType::Bool && target == ScalarType::Bool ? i64.to(ScalarType::Bool)
                                                                   : i64.to(target);
    } else {
      Tensor f64 = Tensor::empty(shape, ScalarType::Float64);
      if (!vals.empty()) std::memcpy(f64.raw_data(), vals.data(), vals.size() * sizeof(double));
      out = f64.to(target, true);
    }
  }
  if (!device.is_none()) {
    Device d = to_ivalue(device.ptr()).is_device()
                   ? to_ivalue(device.ptr()).to_device()
                   : Device::parse(bp::extract<std::string>(device)());
    if (!(d == out.device())) out = ops::to_device(out, d);
  }
  if (requires_grad) out.set_requires_grad(true);
  return wrap(out);
}

// ---- NumPy ---------------------------------------------------------------------------------

ScalarType from_numpy_dtype(const np::dtype& dt) {
  const std::string s = bp::extract<std::string>(bp::str(dt));
  if (s == "bool") return ScalarType::Bool;
  if (s == "uint8") return ScalarType::UInt8;
  if (s == "int8") return ScalarType::Int8;
  if (s == "int16") return ScalarType::Int16;
  if (s == "int32") return ScalarType::Int32;
  if (s == "int64") return ScalarType::Int64;
  if (s == "float16") return ScalarType::Float16;
  if (s == "float32") return ScalarType::Float32;
  if (s == "float64") return ScalarType::Float64;
  throw TypeError(fmt::format(
      "can't convert np.ndarray of type numpy.{}. The only supported types are: float64, float32, "
      "float16, int64, int32, int16, int8, uint8, and bool.",
      s));
}

void release_pyobject(void* ctx, void*) {
  // A tensor a thread-local or static keeps alive may die after the interpreter: the array is
  // gone with it then.
  if (!Py_IsInitialized() || _Py_IsFinalizing()) return;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(ctx));
  PyGILState_Release(g);
}

Tensor from_numpy_impl(bp::object obj) {
  bp::extract<np::ndarray> ex(obj);
  AMPJIT_CHECK_T(TypeError, ex.check(), "expected np.ndarray (got {})",
                 Py_TYPE(obj.ptr())->tp_name);
  np::ndarray arr = ex();
  const ScalarType dt = from_numpy_dtype(arr.get_dtype());
  const int nd = arr.get_nd();
  std::vector<int64_t> sizes(nd), strides(nd);
  const int64_t isz = static_cast<int64_t>(itemsize(dt));
  for (int i = 0; i < nd; ++i) {
    sizes[i] = arr.shape(i);
    AMPJIT_CHECK_T(
        ValueError, arr.strides(i) % isz == 0 && arr.strides(i) >= 0,
        "At least one stride in the given numpy array is negative or not a multiple of the "
        "element size; copy the array first (np.ascontiguousarray)");
    strides[i] = arr.strides(i) / isz;
  }
  int64_t span = 1;
  for (int i = 0; i < nd; ++i) span += (sizes[i] - 1) * strides[i];
  Py_INCREF(obj.ptr());
  Ref<Storage> st =
      Storage::wrap(arr.get_data(), static_cast<size_t>(std::max<int64_t>(span, 0) * isz), Device(),
                    release_pyobject, obj.ptr());
  Ref<TensorImpl> impl(new TensorImpl());
  impl->storage = st;
  impl->sizes = DimVector(sizes);
  impl->strides = DimVector(strides);
  impl->dtype = dt;
  impl->refresh();
  return Tensor(std::move(impl));
}

bp::object from_numpy(bp::object arr) {
  return wrap(from_numpy_impl(arr));
}

// A new tensor object aliasing `t` (same storage, its own flags): what nn.Parameter(t) holds.
bp::object alias(const Tensor& t) {
  Tensor a = Tensor::make_view(t, t.sizes(), t.strides(), t.storage_offset());
  a.impl()->is_view = false;
  a.impl()->is_leaf = true;
  a.impl()->requires_grad = false;
  return wrap(a);
}

void set_size_type(bp::object t) {
  Py_XINCREF(t.ptr());
  g_size_type = t.ptr();
}
void set_namedtuple_factory(bp::object f) {
  g_namedtuple_factory = f;
}
void seed(int64_t s) {
  manual_seed(static_cast<uint64_t>(s));
}
int64_t initial_seed() {
  return static_cast<int64_t>(default_generator().seed());
}
// torch.get_rng_state / set_rng_state: the CPU generator's state as a uint8 tensor.
Tensor get_rng_state() {
  const std::vector<uint8_t> bytes = default_generator().state();
  Tensor t =
      Tensor::empty(std::vector<int64_t>{static_cast<int64_t>(bytes.size())}, ScalarType::UInt8);
  std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}
void set_rng_state(const Tensor& state) {
  AMPJIT_CHECK_T(TypeError,
                 state.dtype() == ScalarType::UInt8 && state.dim() == 1 && state.device().is_cpu(),
                 "set_rng_state: expected a CPU torch.ByteTensor from get_rng_state");
  const Tensor c = state.contiguous();
  const auto* p = static_cast<const uint8_t*>(c.raw_data());
  default_generator().set_state(std::vector<uint8_t>(p, p + c.numel()));
}

}  // namespace

void bind_module_functions() {
  bp::def("_call", call);
  bp::def("_call_overload", call_overload);
  bp::def("_op_table", op_table);
  bp::def("_op_schemas", op_schemas);
  bp::def(
      "_set_default_dtype", +[](bp::object d) {
        IValue v = to_ivalue(d.ptr());
        AMPJIT_CHECK_T(TypeError, v.is_scalar_type(),
                       "invalid dtype object: only floating-point types are supported as the "
                       "default type");
        set_default_float_dtype(v.to_scalar_type());
      });
  bp::def(
      "_get_default_dtype", +[] { return dtype_object(default_float_dtype()); });
  bp::def("_cpu_description", cpu_description);
  // Note [Long-lived caches]: [(name, size, bound)] and emptying them (one by name, or all).
  bp::def(
      "_caches", +[] {
        bp::list out;
        for (const CacheInfo& c : registered_caches())
          out.append(bp::make_tuple(c.name, c.size(), c.bound));
        return out;
      });
  bp::def(
      "_empty_caches", +[](const std::string& name) {
        AMPJIT_CHECK_T(ValueError, empty_caches(name), "no cache is named '{}'", name);
      });
  bp::def("_is_grad_enabled", grad_enabled);
  bp::def("_set_grad_enabled", set_grad_enabled);
  bp::def("_is_inference_mode_enabled", inference_mode_enabled);
  bp::def("_set_inference_mode", set_inference_mode);
  bp::def("tensor", tensor,
          (bp::arg("data"), bp::arg("dtype") = bp::object(), bp::arg("device") = bp::object(),
           bp::arg("requires_grad") = false));
  bp::def("from_numpy", from_numpy);
  bp::def("_alias", alias);
  bp::def("_set_size_type", set_size_type);
  bp::def("_set_namedtuple_factory", set_namedtuple_factory);
  bp::def("manual_seed", seed);
  bp::def("_set_num_threads", set_max_threads);
  bp::def("_get_num_threads", max_threads);
  bp::def("initial_seed", initial_seed);
  bp::def("get_rng_state", get_rng_state);
  bp::def("set_rng_state", set_rng_state);
}

}  // namespace ampjit::python

BOOST_PYTHON_MODULE(_C) {
  using namespace ampjit;
  using namespace ampjit::python;
  // Most-derived last: Boost.Python tries translators from the newest registration.
  translate_to<Error>(PyExc_RuntimeError);
  translate_to<ValueError>(PyExc_ValueError);
  translate_to<TypeError>(PyExc_TypeError);
  translate_to<IndexError>(PyExc_IndexError);
  translate_to<NotImplementedError>(PyExc_NotImplementedError);
  // torch.linalg.LinAlgError is a RuntimeError subclass (ampjit.linalg re-exports it).
  PyObject* linalg_error =
      PyErr_NewException("ampjit.linalg.LinAlgError", PyExc_RuntimeError, nullptr);
  bp::scope().attr("_LinAlgError") = bp::object(bp::handle<>(bp::borrowed(linalg_error)));
  translate_to<LinAlgError>(linalg_error);
  // NumPy support only where numpy exists (np::initialize crashes without it).
  bool have_numpy = false;
  try {
    bp::import("numpy");
    have_numpy = true;
  } catch (bp::error_already_set&) {
    PyErr_Clear();
  }
  if (have_numpy) np::initialize();
  bp::scope().attr("_have_numpy") = have_numpy;
  register_conversions();
  bind_tensor();
  bind_module_functions();
  bind_autocast();
  bind_jit();
  bind_script();
  bind_cuda();
  bind_serialization();
  bind_autograd();
}
