// The script bindings: compiling a Python function's source, or a module described from Python,
// with the script compiler (script/compiler.h), and the resolver that answers the compiler's
// questions about free names by asking Python (frontend/ampjit/jit/_script.py).
//
// Note [Resolver descriptors]
// The Python resolver is a callable `resolver(name) -> descriptor`, a tuple whose first element
// says what the name is:
//   ("unknown",)                                   not found
//   ("namespace", "torch.nn.functional")           a module of builtins, or one builtin function
//   ("autocast", "torch.cpu.amp.autocast")         an autocast class
//   ("constant", value)                            int/float/bool/str/None/dtype
//   ("function", _Function)                        an already scripted or traced function
//   ("source", text, filename, first_line, resolver, identity)   a plain Python function
//   ("unsupported", message)                       a value script cannot use
// The compiler runs with the GIL held (scripting starts from Python and never releases it), so
// a resolver is called on the thread that compiles; answers are memoized per name.

#include <unordered_map>

#include "frontend/python/convert.h"
#include "runtime/autocast/semantics.h"
#include "runtime/module_object.h"
#include "runtime/script_error.h"
#include "script/builtins.h"
#include "script/compiler.h"

namespace ampjit::python {

// Defined in jit_bindings.cpp: the `_Function` and `_Module` Python objects.
bp::object wrap_function(std::shared_ptr<Function> fn, IValue self);
std::shared_ptr<Function> unwrap_function(PyObject* o);
Ref<ModuleObject> unwrap_module(PyObject* o);

namespace {

// ampjit.jit.CompileError and torch.jit.frontend's NotSupportedError and UnsupportedNodeError, by
// CompileErrorKind; installed at import.
PyObject* g_compile_error[3] = {nullptr, nullptr, nullptr};
PyObject* g_script_error = nullptr;  // ampjit.jit.Error (runtime/script_error.h)

// "TypeName: message" of the pending Python exception, which is cleared.
std::string fetch_python_error() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  std::string out = type ? reinterpret_cast<PyTypeObject*>(type)->tp_name : "error";
  if (value) {
    if (PyObject* s = PyObject_Str(value)) {
      if (const char* c = PyUnicode_AsUTF8(s)) out += std::string(": ") + c;
      Py_DECREF(s);
    }
  }
  PyErr_Clear();
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return out;
}

// ---- The resolver -------------------------------------------------------------------------------

std::shared_ptr<const Source> make_source(const bp::object& text, const bp::object& filename,
                                          const bp::object& line);

class PyResolver : public script::Resolver {
 public:
  explicit PyResolver(bp::object fn) : fn_(fn.ptr()) { Py_INCREF(fn_); }
  PyResolver(const PyResolver&) = delete;
  PyResolver& operator=(const PyResolver&) = delete;
  ~PyResolver() override {
    // The last reference may go away on a thread without the GIL (a ModuleInfo kept by a
    // module), or after the interpreter has finalized, when the callable is left alone.
    if (!Py_IsInitialized()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    memo_.clear();
    Py_DECREF(fn_);
    PyGILState_Release(gil);
  }

  script::Resolved resolve(const std::string& name, const SourceRange& range) override {
    PyGILState_STATE gil = PyGILState_Ensure();
    struct Release {
      PyGILState_STATE s;
      ~Release() { PyGILState_Release(s); }
    } release{gil};
    if (auto it = memo_.find(name); it != memo_.end()) return it->second;
    script::Resolved r;
    try {
      r = convert(bp::call<bp::object>(fn_, name), name, range);
    } catch (const bp::error_already_set&) {
      throw CompileError(fmt::format("resolving '{}' failed: {}", name, fetch_python_error()),
                         range);
    }
    // The call may have re-entered this resolver for another name; the map is looked up afresh.
    return memo_.emplace(name, std::move(r)).first->second;
  }

  // A resolver descriptor (see _describe in ampjit/jit/_script.py) as the compiler's Resolved.
  static script::Resolved convert(const bp::object& d, const std::string& name,
                                  const SourceRange& range) {
    const std::string kind = bp::extract<std::string>(d[0]);
    script::Resolved r;
    if (kind == "unknown") return r;
    if (kind == "namespace") return script::Resolved::ns(bp::extract<std::string>(d[1]));
    if (kind == "unsupported") return script::Resolved::unsupported(bp::extract<std::string>(d[1]));
    if (kind == "constant")
      return script::Resolved::constant_value(to_ivalue(bp::object(d[1]).ptr()));
    if (kind == "namedtuple") {  // (kind, qualified name, field names, annotation texts)
      r.kind = script::Resolved::kNamedTuple;
      r.path = bp::extract<std::string>(d[1]);
      for (Py_ssize_t i = 0, n = bp::len(d[2]); i < n; ++i) {
        r.fields.push_back(bp::extract<std::string>(d[2][i]));
        r.field_types.push_back(bp::extract<std::string>(d[3][i]));
      }
      return r;
    }
    if (kind == "class") {  // (kind, qualified name, [(method, text, filename, line)], resolver)
      r.kind = script::Resolved::kClass;
      auto info = std::make_shared<script::ModuleInfo>();
      info->class_name = bp::extract<std::string>(d[1]);
      info->is_class = true;
      const bp::object methods = d[2];
      for (Py_ssize_t i = 0, n = bp::len(methods); i < n; ++i) {
        const bp::object m = methods[i];
        info->methods.emplace(bp::extract<std::string>(m[0]), make_source(m[1], m[2], m[3]));
      }
      info->resolver = std::make_shared<PyResolver>(bp::object(d[3]));
      r.module = std::move(info);
      return r;
    }
    if (kind == "autocast") {
      r.kind = script::Resolved::kAutocastClass;
      r.path = bp::extract<std::string>(d[1]);
      return r;
    }
    if (kind == "function") {
      r.kind = script::Resolved::kFunction;
      r.function = unwrap_function(bp::object(d[1]).ptr());
      if (!r.function)
        throw CompileError(fmt::format("resolving '{}': not a compiled function", name), range);
      return r;
    }
    if (kind == "source") {
      r.kind = script::Resolved::kSource;
      r.source = Source::dedented(bp::extract<std::string>(d[1])(),
                                  bp::extract<std::string>(d[2])(), bp::extract<int>(d[3])());
      r.resolver = std::make_shared<PyResolver>(bp::object(d[4]));
      r.identity = bp::extract<uintptr_t>(d[5]);
      return r;
    }
    throw CompileError(fmt::format("resolving '{}': unknown descriptor kind '{}'", name, kind),
                       range);
  }

 private:
  PyObject* fn_;  // the Python callable (a reference held)
  std::unordered_map<std::string, script::Resolved> memo_;
};

// ---- Modules ------------------------------------------------------------------------------------

// The static type of a module attribute's value (torch infers it the same way; an empty list is a
// list of tensors).
TypePtr type_of(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None:
      return Type::none();
    case IValue::Tag::Double:
      return Type::float_();
    case IValue::Tag::Int:
      return Type::int_();
    case IValue::Tag::Bool:
      return Type::bool_();
    case IValue::Tag::ScalarType:
      return Type::scalar_type();
    case IValue::Tag::Device:
      return Type::device();
    case IValue::Tag::Tensor:
      return Type::tensor();
    case IValue::Tag::String:
      return Type::str_();
    case IValue::Tag::List: {
      const auto& el = v.list_elems();
      if (el.empty()) return Type::list(Type::tensor());
      TypePtr t = type_of(el[0]);
      for (const IValue& e : el)
        if (t->kind() == TypeKind::Int && e.is_double()) t = Type::float_();
      return Type::list(t);
    }
    case IValue::Tag::Tuple: {
      std::vector<TypePtr> ts;
      for (const IValue& e : v.tuple_elems()) ts.push_back(type_of(e));
      return Type::tuple(std::move(ts));
    }
    case IValue::Tag::Dict: {
      const auto& items = v.dict_obj()->items();
      if (items.empty()) return Type::dict(Type::str_(), Type::tensor());
      return Type::dict(type_of(items[0].first), type_of(items[0].second));
    }
    case IValue::Tag::Object:
      break;
  }
  return Type::any();
}

std::shared_ptr<const Source> make_source(const bp::object& text, const bp::object& filename,
                                          const bp::object& line) {
  return Source::dedented(bp::extract<std::string>(text)(), bp::extract<std::string>(filename)(),
                          bp::extract<int>(line)());
}

// A ModuleInfo from the description _script.py builds (a dict; see _module_description there).
// A module reached twice (shared submodules) gets one ModuleInfo.
std::shared_ptr<script::ModuleInfo> module_info(
    const bp::object& d, std::unordered_map<PyObject*, std::shared_ptr<script::ModuleInfo>>& memo) {
  if (auto it = memo.find(d.ptr()); it != memo.end()) return it->second;
  auto info = std::make_shared<script::ModuleInfo>();
  memo.emplace(d.ptr(), info);
  info->class_name = bp::extract<std::string>(d["class_name"]);
  const bp::object attrs = d["attrs"];
  for (Py_ssize_t i = 0, n = bp::len(attrs); i < n; ++i) {
    const bp::object a = attrs[i];  // (name, kind, value, is_constant)
    script::ModuleInfo::Attr attr;
    attr.name = bp::extract<std::string>(a[0]);
    const std::string kind = bp::extract<std::string>(a[1]);
    if (kind == "tensor") {
      attr.type = Type::tensor();
    } else if (kind == "module") {
      attr.submodule = module_info(bp::object(a[2]), memo);
      attr.type = Type::named(TypeKind::Object, attr.submodule->class_name);
    } else {  // "value"
      attr.value = to_ivalue(bp::object(a[2]).ptr());
      attr.type = type_of(attr.value);
      attr.is_constant = bp::extract<bool>(a[3]);
      if (!attr.is_constant) attr.value = IValue();
    }
    info->attrs.push_back(std::move(attr));
  }
  const bp::object methods = d["methods"];
  for (Py_ssize_t i = 0, n = bp::len(methods); i < n; ++i) {
    const bp::object m = methods[i];  // (name, text, filename, first_line)
    info->methods.emplace(bp::extract<std::string>(m[0]), make_source(m[1], m[2], m[3]));
  }
  const bp::dict overloads = bp::extract<bp::dict>(d.attr("get")("overloads", bp::dict()));
  const bp::list names = overloads.keys();
  for (Py_ssize_t i = 0, n = bp::len(names); i < n; ++i) {
    const bp::object mangled = overloads[names[i]];
    auto& out = info->overloads[bp::extract<std::string>(names[i])];
    for (Py_ssize_t j = 0, m = bp::len(mangled); j < m; ++j)
      out.push_back(bp::extract<std::string>(mangled[j]));
  }
  const bp::object interfaces = d.attr("get")("interfaces", bp::list());
  for (Py_ssize_t i = 0, n = bp::len(interfaces); i < n; ++i) {
    const std::string name = bp::extract<std::string>(interfaces[i]);
    for (script::ModuleInfo::Attr& a : info->attrs)
      if (a.name == name) a.is_interface = true;
  }
  info->resolver = std::make_shared<PyResolver>(bp::object(d["resolver"]));
  info->is_sequence = bp::extract<bool>(d["is_sequence"]);
  info->is_dict = bp::extract<bool>(d.attr("get")("is_dict", false));
  const bp::object seq = d["sequence"];
  for (Py_ssize_t i = 0, n = bp::len(seq); i < n; ++i)
    info->sequence.push_back(bp::extract<std::string>(seq[i]));
  return info;
}

// The options for a semantics given from Python: "torchscript", "eager" or None (unset).
script::CompileOptions options_for(const bp::object& semantics) {
  script::CompileOptions options;
  if (!semantics.is_none())
    options.semantics =
        parse_autocast_semantics(bp::extract<std::string>(semantics)(), "autocast_semantics");
  return options;
}

// _script_function(source_text, filename, first_line, resolver, semantics=None) -> _Function
bp::object script_function(const std::string& text, const std::string& filename, int first_line,
                           bp::object resolver, bp::object semantics) {
  auto fn = script::compile_function(Source::dedented(text, filename, first_line),
                                     std::make_shared<PyResolver>(std::move(resolver)),
                                     options_for(semantics));
  return wrap_function(std::move(fn), IValue());
}

// _script_module(description, cmodule, semantics=None) -> _Function: the module's forward, bound
// to `cmodule` (the _Module holding the values the graph reads with prim::GetAttr).
bp::object script_module(bp::object description, bp::object cmodule, bp::object semantics) {
  Ref<ModuleObject> self = unwrap_module(cmodule.ptr());
  AMPJIT_CHECK(self.get() != nullptr, "_script_module: expected a _Module");
  std::unordered_map<PyObject*, std::shared_ptr<script::ModuleInfo>> memo;
  auto fn = script::compile_module(module_info(description, memo), options_for(semantics));
  return wrap_function(std::move(fn), IValue(Ref<ObjectBase>(self)));
}

// _script_class(descriptor, semantics=None): compiles a class's methods (the resolver's "class"
// descriptor), so that its errors are raised where it is decorated.
void script_class(bp::object descriptor, bp::object semantics) {
  script::Resolved r = PyResolver::convert(descriptor, "", SourceRange{});
  AMPJIT_CHECK(r.kind == script::Resolved::kClass, "_script_class: not a class descriptor");
  script::compile_class(r.module, options_for(semantics));
}

void set_compile_error(bp::object error, bp::object not_supported, bp::object unsupported_node) {
  PyObject* classes[] = {error.ptr(), not_supported.ptr(), unsupported_node.ptr()};
  for (int i = 0; i < 3; ++i) {
    Py_XINCREF(classes[i]);
    g_compile_error[i] = classes[i];
  }
}

}  // namespace

void bind_script() {
  // Registered after the ampjit::Error translator, so it is tried first for a CompileError.
  bp::register_exception_translator<ScriptError>([](const ScriptError& e) {
    PyErr_SetString(g_script_error ? g_script_error : PyExc_RuntimeError, e.what());
  });
  bp::def(
      "_set_script_error", +[](bp::object cls) {
        Py_XINCREF(cls.ptr());
        g_script_error = cls.ptr();
      });
  bp::register_exception_translator<CompileError>([](const CompileError& e) {
    PyObject* cls = g_compile_error[static_cast<int>(e.kind())];
    PyErr_SetString(cls ? cls : PyExc_RuntimeError, e.what());
  });
  bp::def("_script_function", script_function,
          (bp::arg("source"), bp::arg("filename"), bp::arg("first_line"), bp::arg("resolver"),
           bp::arg("semantics") = bp::object()));
  bp::def("_script_module", script_module,
          (bp::arg("description"), bp::arg("cmodule"), bp::arg("semantics") = bp::object()));
  bp::def("_script_class", script_class,
          (bp::arg("descriptor"), bp::arg("semantics") = bp::object()));
  bp::def("_set_compile_error", set_compile_error);
  bp::def(
      "_functional_source", +[] { return std::string(script::functional_source()); });
  bp::def(
      "_set_functional_source_path",
      +[](const std::string& path) { script::set_functional_source_path(path); });
  bp::def(
      "_op_aliases", +[] {
        bp::list out;
        for (const auto& [alias, op] : op_aliases())
          out.append(bp::make_tuple(std::string(alias), std::string(op)));
        return out;
      });
}

}  // namespace ampjit::python
