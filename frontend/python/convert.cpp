// Python <-> IValue conversions, dtype and device objects.
#include "frontend/python/convert.h"

#include "runtime/dispatcher.h"
#include "runtime/module_object.h"

namespace ampjit::python {

PyObject* g_size_type = nullptr;

namespace {
bp::object g_dtypes[kNumScalarTypes];
// (class name, attribute names, values) -> the Python object of a script class's instance, or
// None (ampjit.jit._script._script_object; Note [Script classes] in script/compiler.h). A raw
// reference, never released: a bp::object here would be released by a static destructor after
// the interpreter has finalized, without the GIL.
PyObject* g_script_object_factory = nullptr;

std::string dtype_repr(const DTypeObject& d) {
  return std::string("torch.") + dtype_name(d.type);
}
bool dtype_is_floating(const DTypeObject& d) {
  return is_floating(d.type);
}
bool dtype_is_signed(const DTypeObject& d) {
  return traits(d.type).is_signed;
}
int dtype_itemsize(const DTypeObject& d) {
  return static_cast<int>(itemsize(d.type));
}

std::string device_repr(const DeviceObject& d) {
  if (d.device.is_cpu() || d.device.index < 0)
    return fmt::format("device(type='{}')", device_type_name(d.device.type));
  return fmt::format("device(type='{}', index={})", device_type_name(d.device.type),
                     d.device.index);
}
std::string device_str(const DeviceObject& d) {
  return d.device.str();
}
std::string device_type(const DeviceObject& d) {
  return device_type_name(d.device.type);
}
bp::object device_index(const DeviceObject& d) {
  return d.device.index < 0 ? bp::object() : bp::object(static_cast<int>(d.device.index));
}
bool device_eq(const DeviceObject& a, bp::object b) {
  bp::extract<const DeviceObject&> e(b);
  return e.check() && a.device == e().device && a.device.index == e().device.index;
}
long device_hash(const DeviceObject& d) {
  return static_cast<long>(d.device.type) * 131 + d.device.index;
}
std::shared_ptr<DeviceObject> make_device(bp::object spec, bp::object index) {
  auto out = std::make_shared<DeviceObject>();
  bp::extract<const DeviceObject&> dev(spec);
  if (dev.check()) {
    out->device = dev().device;
    return out;
  }
  bp::extract<std::string> s(spec);
  if (!s.check()) throw TypeError("device(): expected a string like 'cpu' or 'cuda:0'");
  out->device = Device::parse(s());
  if (!index.is_none()) {
    AMPJIT_CHECK(s().find(':') == std::string::npos,
                 "device(): type (string) must not include an index because index was passed "
                 "explicitly: {}",
                 s());
    out->device.index = static_cast<int8_t>(bp::extract<int>(index)());
  }
  return out;
}
}  // namespace

bp::object dtype_object(ScalarType t) {
  return g_dtypes[static_cast<int>(t)];
}

Tensor* as_tensor(PyObject* o) {
  return static_cast<Tensor*>(
      bp::converter::get_lvalue_from_python(o, bp::converter::registered<Tensor>::converters));
}

bp::object wrap(Tensor t) {
  return bp::object(std::move(t));
}

bp::object make_size(IntArrayRef sizes) {
  PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(sizes.size()));
  for (size_t i = 0; i < sizes.size(); ++i) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(sizes[i]));
  if (!g_size_type) return bp::object(bp::handle<>(tup));
  PyObject* size = PyObject_CallOneArg(g_size_type, tup);
  Py_DECREF(tup);
  if (!size) bp::throw_error_already_set();
  return bp::object(bp::handle<>(size));
}

namespace {
bp::object obj_of(PyObject* o) {
  return bp::object(bp::handle<>(bp::borrowed(o)));
}
}  // namespace

IValue to_ivalue(PyObject* o) {
  if (o == Py_None) return IValue();
  if (Tensor* t = as_tensor(o)) return IValue(*t);
  if (PyBool_Check(o)) return IValue(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) throw ValueError("Python int too large to convert to int64");
    return IValue(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(o)) return IValue(PyFloat_AS_DOUBLE(o));
  if (PyUnicode_Check(o)) return IValue(std::string(PyUnicode_AsUTF8(o)));
  if (PyList_Check(o) || PyTuple_Check(o)) {
    const bool is_list = PyList_Check(o);
    const Py_ssize_t n = is_list ? PyList_GET_SIZE(o) : PyTuple_GET_SIZE(o);
    std::vector<IValue> elems;
    elems.reserve(n);
    for (Py_ssize_t i = 0; i < n; ++i)
      elems.push_back(to_ivalue(is_list ? PyList_GET_ITEM(o, i) : PyTuple_GET_ITEM(o, i)));
    return is_list ? IValue::list(std::move(elems)) : IValue::tuple(std::move(elems));
  }
  if (PyDict_Check(o)) {
    Ref<DictObj> d(new DictObj());
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &k, &v)) d->set(to_ivalue(k), to_ivalue(v));
    return IValue(std::move(d));
  }
  bp::object obj{bp::handle<>(bp::borrowed(o))};
  bp::extract<const DTypeObject&> dt(obj);
  if (dt.check()) return IValue(dt().type);
  bp::extract<const DeviceObject&> dev(obj);
  if (dev.check()) return IValue(dev().device);
  // NumPy scalars and other number-likes.
  if (PyIndex_Check(o)) {
    PyObject* i = PyNumber_Index(o);
    if (i) {
      IValue v(static_cast<int64_t>(PyLong_AsLongLong(i)));
      Py_DECREF(i);
      return v;
    }
    PyErr_Clear();
  }
  if (PyObject_HasAttrString(o, "__float__")) {
    double d = PyFloat_AsDouble(o);
    if (!PyErr_Occurred()) return IValue(d);
    PyErr_Clear();
  }
  // An instance of a script class: an object of that class holding its instance attributes.
  if (PyObject* name = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)),
                                              "__ampjit_script_class__")) {
    bp::object held{bp::handle<>(name)};
    bp::extract<std::string> class_name(held);
    if (class_name.check()) {
      Ref<ModuleObject> obj(new ModuleObject(class_name()));
      const bp::dict attrs = bp::extract<bp::dict>(obj_of(o).attr("__dict__"));
      const bp::list keys = attrs.keys();
      for (Py_ssize_t i = 0, n = bp::len(keys); i < n; ++i)
        obj->set_attr(bp::extract<std::string>(keys[i]),
                      to_ivalue(bp::object(attrs[keys[i]]).ptr()));
      return IValue(Ref<ObjectBase>(obj));
    }
  } else {
    PyErr_Clear();
  }
  throw TypeError(
      fmt::format("ampjit cannot convert an object of type '{}' to a value an op accepts",
                  Py_TYPE(o)->tp_name));
}

bp::object from_ivalue(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None:
      return bp::object();
    case IValue::Tag::Tensor:
      return wrap(v.to_tensor());
    case IValue::Tag::Double:
      return bp::object(v.to_double());
    case IValue::Tag::Int:
      return bp::object(static_cast<long long>(v.to_int()));
    case IValue::Tag::Bool:
      return bp::object(v.to_bool());
    case IValue::Tag::String:
      return bp::object(v.to_string_ref());
    case IValue::Tag::ScalarType:
      return dtype_object(v.to_scalar_type());
    case IValue::Tag::Device:
      return bp::object(DeviceObject{v.to_device()});
    case IValue::Tag::List: {
      bp::list l;
      for (const IValue& e : v.list_elems()) l.append(from_ivalue(e));
      return l;
    }
    case IValue::Tag::Tuple: {
      bp::list l;
      for (const IValue& e : v.tuple_elems()) l.append(from_ivalue(e));
      return bp::tuple(l);
    }
    case IValue::Tag::Dict: {
      bp::dict d;
      for (const auto& [k, e] : v.dict_obj()->items()) d[from_ivalue(k)] = from_ivalue(e);
      return d;
    }
    case IValue::Tag::Object:
      if (auto* obj = dynamic_cast<ModuleObject*>(v.object()); obj && g_script_object_factory) {
        bp::list names, values;
        for (const auto& [name, value] : obj->attrs) {
          names.append(name);
          values.append(from_ivalue(value));
        }
        bp::object made =
            bp::call<bp::object>(g_script_object_factory, obj->class_name, names, values);
        if (!made.is_none()) return made;
      }
      break;
  }
  throw TypeError(fmt::format("cannot convert a value of type {} to Python", v.tag_name()));
}

bool worth_releasing_gil(const Stack& s) {
  int64_t n = 0;
  for (const IValue& v : s) {
    if (v.is_tensor())
      n += v.tensor_impl()->numel;
    else if (v.is_list())
      for (const IValue& e : v.list_elems())
        if (e.is_tensor()) n += e.tensor_impl()->numel;
  }
  return n >= 16384;
}

void dispatch_from_python(const OpEntry& op, Stack& s) {
  MaybeReleaseGIL nogil(worth_releasing_gil(s));
  dispatch(op, s);
}

void register_conversions() {
  bp::def(
      "_set_script_object_factory", +[](bp::object f) {
        Py_INCREF(f.ptr());
        g_script_object_factory = f.ptr();
      });
  bp::class_<DTypeObject>("dtype", bp::no_init)
      .def("__repr__", dtype_repr)
      .def("__str__", dtype_repr)
      .add_property("is_floating_point", dtype_is_floating)
      .add_property("is_signed", dtype_is_signed)
      .add_property("itemsize", dtype_itemsize);
  for (int i = 0; i < kNumScalarTypes; ++i) g_dtypes[i] = bp::object(DTypeObject{ScalarType(i)});
  bp::list dts;
  for (int i = 0; i < kNumScalarTypes; ++i) dts.append(g_dtypes[i]);
  bp::scope().attr("_dtypes") = dts;

  bp::class_<DeviceObject, std::shared_ptr<DeviceObject>>("device", bp::no_init)
      .def("__init__", bp::make_constructor(make_device, bp::default_call_policies(),
                                            (bp::arg("type"), bp::arg("index") = bp::object())))
      .def("__repr__", device_repr)
      .def("__str__", device_str)
      .def("__eq__", device_eq)
      .def("__hash__", device_hash)
      .add_property("type", device_type)
      .add_property("index", device_index);
}

}  // namespace ampjit::python
