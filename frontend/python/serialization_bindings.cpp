// The bindings torch.save / torch.load (frontend/ampjit/serialization.py) stand on: zip archives
// (Note [Zip archives] in serialization/zip_archive.h) and raw storages.
//
// Note [Saved storages]
// torch's archives hold each storage once, as the raw little-endian bytes of its elements in
// record data/<key>; tensors are (storage, offset, sizes, strides) over it, so views saved
// together share their storage again once loaded. _storage_key names a tensor's storage (equal
// for views of one storage); _zip_write writes a tensor record from the whole storage's memory
// (through a CPU copy for a device tensor); _load_storage reads a record straight into a new 1-D
// CPU tensor; _rebuild_tensor views such a storage tensor after checking that every element the
// view reaches lies inside it (serialization::check_view: a hostile file cannot make a view read
// outside its storage).
#include <boost/python.hpp>

#include <cstring>
#include <optional>

#include "frontend/python/convert.h"
#include "runtime/ops.h"
#include "script/compiler.h"
#include "script/parser.h"
#include "serialization/archive.h"
#include "serialization/jit_load.h"
#include "serialization/jit_save.h"
#include "serialization/unpickler.h"
#include "serialization/zip_archive.h"

namespace ampjit::python {

// Defined in jit_bindings.cpp: the `_Function` and `_Module` Python objects.
bp::object wrap_function(std::shared_ptr<Function> fn, IValue self);
bp::object wrap_module(Ref<ModuleObject> obj);
std::shared_ptr<Function> unwrap_function(PyObject* o);
Ref<ModuleObject> unwrap_module(PyObject* o);

namespace {

using serialization::ZipReader;
using serialization::ZipWriter;

std::string bytes_of(bp::object o) {
  PyObject* p = o.ptr();
  char* data = nullptr;
  Py_ssize_t n = 0;
  if (!PyBytes_Check(p) || PyBytes_AsStringAndSize(p, &data, &n) != 0)
    throw TypeError("expected bytes");
  return std::string(data, static_cast<size_t>(n));
}

bp::object to_bytes(const std::string& s) {
  return bp::object(
      bp::handle<>(PyBytes_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()))));
}

// _ZipReader(path: str) or _ZipReader(data: bytes); bytes are read in place (the reader keeps a
// reference to them).
std::shared_ptr<ZipReader> zip_open(bp::object source) {
  if (PyBytes_Check(source.ptr())) {
    char* data = nullptr;
    Py_ssize_t n = 0;
    PyBytes_AsStringAndSize(source.ptr(), &data, &n);
    // Released with the reader, which Python owns: the GIL is held then.
    auto keep = std::shared_ptr<const void>(
        new bp::object(source), [](const void* p) { delete static_cast<const bp::object*>(p); });
    return std::make_shared<ZipReader>(
        ZipReader::from_view(std::string_view(data, static_cast<size_t>(n)), std::move(keep)));
  }
  return std::make_shared<ZipReader>(ZipReader::open_file(bp::extract<std::string>(source)));
}

// _load_storage(archive, record, dtype, numel): a 1-D tensor read straight from the record, which
// must hold exactly numel elements.
bp::object load_storage(const ZipReader& z, const std::string& record, bp::object dtype,
                        int64_t numel) {
  const ScalarType dt = to_ivalue(dtype.ptr()).to_scalar_type();
  AMPJIT_CHECK(numel >= 0 && static_cast<uint64_t>(numel) <= UINT64_MAX / itemsize(dt),
               "storage '{}' declares {} elements", record, numel);
  Tensor t = Tensor::empty({&numel, 1}, dt);
  z.read_into(record, t.raw_data(), static_cast<uint64_t>(numel) * itemsize(dt));
  return wrap(t);
}

bp::list zip_records(const ZipReader& z) {
  bp::list out;
  for (const std::string& r : z.records()) out.append(r);
  return out;
}

bp::object zip_read(const ZipReader& z, const std::string& record, bp::object max_bytes) {
  const uint64_t limit = max_bytes.is_none() ? UINT64_MAX : bp::extract<uint64_t>(max_bytes)();
  return to_bytes(z.read(record, limit));
}

// _zip_write(top, [(record, bytes or tensor), ...], path=None): the archive's bytes, or None after
// writing it to `path`. A tensor record is its whole storage, written from the tensor's memory
// (through a CPU copy for a device tensor).
const Tensor& tensor_arg(bp::object o, const char* fn);

// The storage's elements (its bytes / itemsize of the tensor's dtype).
int64_t storage_numel(const Tensor& t) {
  return static_cast<int64_t>(t.storage()->nbytes() / t.itemsize());
}

bp::object zip_write(const std::string& top, bp::list records, bp::object path) {
  ZipWriter w(top);
  std::vector<Tensor> keep;
  for (Py_ssize_t i = 0, n = bp::len(records); i < n; ++i) {
    bp::object item = records[i];
    const std::string name = bp::extract<std::string>(item[0]);
    bp::object data = item[1];
    if (PyBytes_Check(data.ptr())) {
      w.add(name, bytes_of(data));
      continue;
    }
    const Tensor& t = tensor_arg(data, "_zip_write");
    const int64_t n_el = storage_numel(t);
    const int64_t one = 1;
    Tensor whole = Tensor::make_view(t, IntArrayRef(&n_el, 1), IntArrayRef(&one, 1), 0);
    if (whole.device().type != DeviceType::CPU)
      whole = ops::to_device(whole, Device(), std::nullopt, false, true).tensor();
    keep.push_back(whole);
    w.add_view(name, whole.raw_data(), static_cast<size_t>(n_el) * whole.itemsize());
  }
  if (path.is_none()) return to_bytes(w.finish());
  w.finish_to_file(bp::extract<std::string>(path));
  return bp::object();
}

const Tensor& tensor_arg(bp::object o, const char* fn) {
  Tensor* t = as_tensor(o.ptr());
  AMPJIT_CHECK_T(TypeError, t && t->defined(), "{}: expected a tensor", fn);
  return *t;
}

uintptr_t storage_key(bp::object o) {
  return reinterpret_cast<uintptr_t>(tensor_arg(o, "_storage_key").storage().get());
}

int64_t storage_numel_py(bp::object o) {
  return storage_numel(tensor_arg(o, "_storage_numel"));
}

// A view of the 1-D storage tensor, checked to stay inside it.
bp::object rebuild_tensor(bp::object storage, int64_t offset, bp::object sizes_o,
                          bp::object strides_o) {
  return wrap(serialization::check_view(tensor_arg(storage, "_rebuild_tensor"), offset,
                                        to_ivalue(sizes_o.ptr()).to_int_list(),
                                        to_ivalue(strides_o.ptr()).to_int_list(), "ampjit.load"));
}

// _unpickle(data, archive=None): the C++ restricted unpickler (Note [Restricted unpickler]) on
// `data`, its storages read from `archive`; the result as Python values.
bp::object unpickle_bytes(bp::object data, bp::object archive) {
  serialization::UnpickleHooks hooks;
  if (!archive.is_none()) {
    // `archive` (a Python reference) keeps the reader alive through the call.
    const ZipReader& z = bp::extract<const ZipReader&>(archive)();
    hooks.storage = serialization::archive_storages(z);
  }
  return from_ivalue(serialization::unpickle(bytes_of(data), hooks, "pickle"));
}

// ---- TorchScript archives (Note [Loading TorchScript archives] in serialization/jit_load.h) ----

const char* attr_kind_name(jit::Module::AttrKind k) {
  switch (k) {
    case jit::Module::AttrKind::kParameter:
      return "parameter";
    case jit::Module::AttrKind::kBuffer:
      return "buffer";
    case jit::Module::AttrKind::kModule:
      return "module";
    case jit::Module::AttrKind::kConstant:
      return "constant";
    case jit::Module::AttrKind::kValue:
      break;
  }
  return "value";
}

// _jit_load(source, extra_names): (module, {name: bytes}) from a path (str) or a file's bytes.
bp::object jit_load(bp::object source, bp::object extra_names) {
  jit::ExtraFiles extra;
  for (Py_ssize_t i = 0, n = bp::len(extra_names); i < n; ++i)
    extra[bp::extract<std::string>(extra_names[i])()];
  std::optional<jit::Module> m;
  {
    const bool is_path = PyUnicode_Check(source.ptr());
    std::string arg = is_path ? bp::extract<std::string>(source)() : bytes_of(source);
    m = is_path ? jit::load(arg, &extra) : jit::load_bytes(std::move(arg), "<bytes>", &extra);
  }
  bp::dict files;
  for (const auto& [name, contents] : extra) files[name] = to_bytes(contents);
  return bp::make_tuple(*m, files);
}

bp::object loaded_object(const jit::Module& m) {
  return wrap_module(m.object());
}

bp::object loaded_method(const jit::Module& m, const std::string& name) {
  std::shared_ptr<Function> fn;
  { fn = m.method(name); }
  return wrap_function(std::move(fn), IValue(Ref<ObjectBase>(m.object())));
}

// [(name, kind, value)]: kind "parameter", "buffer", "module" (value: the submodule), "constant" or
// "value".
bp::list loaded_attributes(const jit::Module& m) {
  bp::list out;
  for (const jit::Module::Attr& a : m.attributes()) {
    bp::object v = a.kind == jit::Module::AttrKind::kModule ? bp::object(m.submodule(a.name))
                                                            : from_ivalue(m.attr(a.name));
    out.append(bp::make_tuple(a.name, attr_kind_name(a.kind), v));
  }
  return out;
}

bp::list loaded_method_names(const jit::Module& m) {
  bp::list out;
  for (const std::string& n : m.method_names()) out.append(n);
  return out;
}

jit::Module::AttrKind attr_kind_of(const std::string& k) {
  if (k == "parameter") return jit::Module::AttrKind::kParameter;
  if (k == "buffer") return jit::Module::AttrKind::kBuffer;
  if (k == "module") return jit::Module::AttrKind::kModule;
  if (k == "constant") return jit::Module::AttrKind::kConstant;
  if (k == "value") return jit::Module::AttrKind::kValue;
  throw ValueError("_jit_save: unknown attribute kind '" + k + "'");
}

// _jit_save(root, specs, extra, path=None): a TorchScript archive of the module whose runtime
// object is `root` (Note [Saving TorchScript archives]); specs: one (cmodule, class name, [(name,
// kind, constant value)], [(method name, _Function)]) per module object of the tree; extra: {name:
// bytes}. The archive's bytes when path is None, else written there.
bp::object jit_save(bp::object root, bp::list specs, bp::dict extra, bp::object path) {
  jit::SaveClasses classes;
  for (Py_ssize_t i = 0, n = bp::len(specs); i < n; ++i) {
    const bp::object spec = specs[i];
    Ref<ModuleObject> obj = unwrap_module(bp::object(spec[0]).ptr());
    AMPJIT_CHECK_T(TypeError, obj.get() != nullptr, "_jit_save: expected a _Module");
    jit::SaveClass c;
    c.qualified_name = bp::extract<std::string>(spec[1]);
    const bp::object attrs = spec[2];
    for (Py_ssize_t j = 0, m = bp::len(attrs); j < m; ++j) {
      const bp::object a = attrs[j];
      jit::SaveClass::Attr attr;
      attr.name = bp::extract<std::string>(a[0]);
      attr.kind = attr_kind_of(bp::extract<std::string>(a[1]));
      if (attr.kind == jit::Module::AttrKind::kConstant)
        attr.value = to_ivalue(bp::object(a[2]).ptr());
      if (bp::len(a) > 3 && !bp::object(a[3]).is_none()) {  // a declared type, as annotation text
        auto src = std::make_shared<Source>(bp::extract<std::string>(a[3])(), "<annotation>");
        auto m = script::parse_module(src);
        AMPJIT_CHECK_T(TypeError, m->body.size() == 1 && m->body[0]->kind == script::StmtKind::Expr,
                       "_jit_save: bad type annotation '{}'", src->text());
        attr.type = script::parse_annotation(*m->body[0]->as<script::ExprStmt>().value,
                                             script::builtin_resolver());
      }
      c.attrs.push_back(std::move(attr));
    }
    const bp::object methods = spec[3];
    for (Py_ssize_t j = 0, m = bp::len(methods); j < m; ++j) {
      std::shared_ptr<Function> fn = unwrap_function(bp::object(methods[j][1]).ptr());
      AMPJIT_CHECK_T(TypeError, fn != nullptr, "_jit_save: expected a _Function");
      c.methods.emplace_back(bp::extract<std::string>(methods[j][0]), std::move(fn));
    }
    classes[obj.get()] = std::move(c);
  }
  jit::ExtraFiles files;
  const bp::list names = extra.keys();
  for (Py_ssize_t i = 0, n = bp::len(names); i < n; ++i)
    files[bp::extract<std::string>(names[i])] = bytes_of(extra[names[i]]);
  Ref<ModuleObject> r = unwrap_module(root.ptr());
  AMPJIT_CHECK_T(TypeError, r.get() != nullptr, "_jit_save: expected a _Module");
  if (path.is_none()) return to_bytes(jit::save_bytes(r, classes, files));
  jit::save(r, classes, bp::extract<std::string>(path), files);
  return bp::object();
}

}  // namespace

void bind_serialization() {
  bp::def("_jit_save", jit_save,
          (bp::arg("root"), bp::arg("specs"), bp::arg("extra"), bp::arg("path") = bp::object()));
  bp::class_<jit::Module>("_LoadedModule", bp::no_init)
      .add_property("class_name",
                    bp::make_function(&jit::Module::class_name,
                                      bp::return_value_policy<bp::copy_const_reference>()))
      .def("_object", loaded_object)
      .def("_method", loaded_method)
      .def("_has_method", &jit::Module::has_method)
      .def("_method_names", loaded_method_names)
      .def("_attributes", loaded_attributes);
  bp::def("_jit_load", jit_load);
  bp::class_<ZipReader, std::shared_ptr<ZipReader>, boost::noncopyable>("_ZipReader", bp::no_init)
      .def("__init__", bp::make_constructor(zip_open))
      .def("prefix", &ZipReader::prefix, bp::return_value_policy<bp::copy_const_reference>())
      .def("records", zip_records)
      .def(
          "has", +[](const ZipReader& z, const std::string& r) { return z.has(r); })
      .def(
          "size", +[](const ZipReader& z, const std::string& r) { return z.size(r); })
      .def("read", zip_read, (bp::arg("record"), bp::arg("max_bytes") = bp::object()));
  bp::def("_zip_write", zip_write,
          (bp::arg("top"), bp::arg("records"), bp::arg("path") = bp::object()));
  bp::def("_load_storage", load_storage);
  bp::def("_storage_key", storage_key);
  bp::def("_storage_numel", storage_numel_py);
  bp::def("_rebuild_tensor", rebuild_tensor);
  bp::def("_unpickle", unpickle_bytes, (bp::arg("data"), bp::arg("archive") = bp::object()));
}

}  // namespace ampjit::python
