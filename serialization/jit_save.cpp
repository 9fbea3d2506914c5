// torch.jit.save (see jit_save.h, Note [Saving TorchScript archives]).
#include "serialization/jit_save.h"

#include <fmt/format.h>

#include <cstring>
#include <deque>
#include <functional>
#include <set>
#include <unordered_map>

#include "runtime/error.h"
#include "runtime/ir/python_print.h"
#include "runtime/ops.h"
#include "serialization/zip_archive.h"

namespace ampjit::jit {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// A type as torch writes it in declarations and type tags.
std::string annotation(const Type& t) {
  auto joined = [&](const std::vector<TypePtr>& ts) {
    std::string s;
    for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + annotation(*ts[i]);
    return s;
  };
  switch (t.kind()) {
    case TypeKind::None:
      return "NoneType";
    case TypeKind::Device:
      return "Device";
    case TypeKind::Any:
      return "Any";
    case TypeKind::List:
      return "List[" + annotation(*t.elem()) + "]";
    case TypeKind::Optional:
      return "Optional[" + annotation(*t.elem()) + "]";
    case TypeKind::Dict:
      return "Dict[" + annotation(*t.key()) + ", " + annotation(*t.value()) + "]";
    case TypeKind::Tuple:
      return t.is_named_tuple() ? t.name() : "Tuple[" + joined(t.contained()) + "]";
    default:
      return t.annotation_str();
  }
}

// The type of a value, as script infers an attribute's (an empty list is a List[Tensor]).
TypePtr type_of_value(const IValue& v) {
  if (v.is_tensor()) return Type::tensor();
  if (v.is_bool()) return Type::bool_();
  if (v.is_int()) return Type::int_();
  if (v.is_double()) return Type::float_();
  if (v.is_string()) return Type::str_();
  if (v.is_none()) return Type::none();
  if (v.is_device()) return Type::device();
  if (v.is_list()) {
    const auto& el = v.list_elems();
    return Type::list(el.empty() ? Type::tensor() : type_of_value(el[0]));
  }
  if (v.is_tuple()) {
    std::vector<TypePtr> ts;
    for (const IValue& e : v.tuple_elems()) ts.push_back(type_of_value(e));
    return Type::tuple(std::move(ts));
  }
  if (v.is_dict()) {
    const auto& items = v.dict_obj()->items();
    if (items.empty()) return Type::dict(Type::str_(), Type::tensor());
    return Type::dict(type_of_value(items[0].first), type_of_value(items[0].second));
  }
  throw Error(fmt::format("cannot save an attribute holding a {}", v.tag_name()));
}

// A constant's value as a literal of torch's dialect.
std::string literal(const IValue& v) {
  if (v.is_none()) return "None";
  if (v.is_bool()) return v.to_bool() ? "True" : "False";
  if (v.is_int()) return std::to_string(v.to_int());
  if (v.is_double()) return float_literal(v.to_double());
  if (v.is_string()) return string_literal(v.to_string_ref());
  if (v.is_scalar_type()) return std::to_string(torch_dtype_code(v.to_scalar_type()));
  if (v.is_tuple() || v.is_list()) {
    const auto& el = v.is_tuple() ? v.tuple_elems() : v.list_elems();
    std::string s = v.is_tuple() ? "(" : "[";
    for (size_t i = 0; i < el.size(); ++i) s += (i ? ", " : "") + literal(el[i]);
    if (v.is_tuple() && el.size() == 1) s += ",";
    return s + (v.is_tuple() ? ")" : "]");
  }
  throw Error(fmt::format("cannot save a constant holding a {}", v.tag_name()));
}

const char* storage_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float64:
      return "DoubleStorage";
    case ScalarType::Float32:
      return "FloatStorage";
    case ScalarType::Float16:
      return "HalfStorage";
    case ScalarType::BFloat16:
      return "BFloat16Storage";
    case ScalarType::Int64:
      return "LongStorage";
    case ScalarType::Int32:
      return "IntStorage";
    case ScalarType::Int16:
      return "ShortStorage";
    case ScalarType::Int8:
      return "CharStorage";
    case ScalarType::UInt8:
      return "ByteStorage";
    case ScalarType::Bool:
      return "BoolStorage";
    default:
      throw Error(fmt::format("cannot save a tensor of dtype {}", dtype_name(t)));
  }
}

// Torch's autocast classes, as its printer writes them into archives that use them.
const std::map<std::string, std::string>& autocast_class_code() {
  static const auto& m = *new std::map<std::string, std::string>{
      {"__torch__.torch.amp.autocast_mode.autocast",
       "class autocast:\n"
       "  _enabled : bool\n  device : str\n  fast_dtype : Optional[int]\n"
       "  def __call__(self: __torch__.torch.amp.autocast_mode.autocast,\n    func: Tensor) -> "
       "Tensor:\n    return func\n"
       "  def __enter__(self: __torch__.torch.amp.autocast_mode.autocast) -> "
       "__torch__.torch.amp.autocast_mode.autocast:\n"
       "    fast_dtype = self.fast_dtype\n    if torch.__isnot__(fast_dtype, None):\n      pass\n"
       "    else:\n      ops.prim.RaiseException(\"AssertionError: \")\n    return self\n"
       "  def __exit__(self: __torch__.torch.amp.autocast_mode.autocast,\n    exc_type: Any,\n"
       "    exc_val: Any,\n    exc_tb: Any) -> NoneType:\n    return None\n"
       "  def __init__(self: __torch__.torch.amp.autocast_mode.autocast,\n    device_type: str,\n"
       "    dtype: Optional[int]=None,\n    enabled: bool=True,\n"
       "    cache_enabled: Optional[bool]=None) -> NoneType:\n"
       "    self._enabled = enabled\n    self.device = device_type\n    self.fast_dtype = dtype\n"
       "    if torch.__isnot__(dtype, None):\n      pass\n    else:\n"
       "      ops.prim.RaiseException(\"AssertionError: \")\n    return None\n"},
      {"__torch__.torch.cpu.amp.autocast_mode.autocast",
       "class autocast:\n"
       "  _enabled : bool\n  device : str\n  fast_dtype : int\n"
       "  def __call__(self: __torch__.torch.cpu.amp.autocast_mode.autocast,\n    func: Tensor) -> "
       "Tensor:\n    return func\n"
       "  def __enter__(self: __torch__.torch.cpu.amp.autocast_mode.autocast) -> "
       "__torch__.torch.cpu.amp.autocast_mode.autocast:\n    return self\n"
       "  def __exit__(self: __torch__.torch.cpu.amp.autocast_mode.autocast,\n    exc_type: Any,\n"
       "    exc_val: Any,\n    exc_tb: Any) -> NoneType:\n    return None\n"
       "  def __init__(self: __torch__.torch.cpu.amp.autocast_mode.autocast,\n"
       "    enabled: bool=True,\n    dtype: int=15,\n    cache_enabled: bool=True) -> NoneType:\n"
       "    self._enabled = enabled\n    self.device = \"cpu\"\n    self.fast_dtype = dtype\n"
       "    return None\n"},
      {"__torch__.torch.cuda.amp.autocast_mode.autocast",
       "class autocast:\n"
       "  _enabled : bool\n  device : str\n  fast_dtype : int\n"
       "  def __call__(self: __torch__.torch.cuda.amp.autocast_mode.autocast,\n    func: Tensor) "
       "-> "
       "Tensor:\n    return func\n"
       "  def __enter__(self: __torch__.torch.cuda.amp.autocast_mode.autocast) -> "
       "__torch__.torch.cuda.amp.autocast_mode.autocast:\n    return self\n"
       "  def __exit__(self: __torch__.torch.cuda.amp.autocast_mode.autocast,\n    exc_type: Any,\n"
       "    exc_val: Any,\n    exc_tb: Any) -> NoneType:\n    return None\n"
       "  def __init__(self: __torch__.torch.cuda.amp.autocast_mode.autocast,\n"
       "    enabled: bool=True,\n    dtype: int=5,\n    cache_enabled: bool=True) -> NoneType:\n"
       "    self._enabled = enabled\n    self.device = \"cuda\"\n    self.fast_dtype = dtype\n"
       "    return None\n"}};
  return m;
}

std::pair<std::string, std::string> split_qualified(const std::string& q) {
  const size_t dot = q.rfind('.');
  if (dot == std::string::npos) throw Error(fmt::format("'{}' is not a qualified name", q));
  return {q.substr(0, dot), q.substr(dot + 1)};
}

// ---- The pickler ---------------------------------------------------------------------------

// Protocol 2, as torch's writer: Note [Restricted unpickler] reads what this writes.
class Pickler {
 public:
  using StorageKey = std::function<std::string(const Tensor&)>;
  using ObjectState = std::function<void(Pickler&, const ModuleObject&)>;

  Pickler(StorageKey key, ObjectState state) : key_(std::move(key)), state_(std::move(state)) {
    out_ += "\x80\x02";
  }
  std::string finish() {
    out_ += '.';
    return std::move(out_);
  }

  void global(const std::string& module, const std::string& name) {
    out_ += 'c';
    out_ += module + "\n" + name + "\n";
  }
  void op(char c) { out_ += c; }
  void str(const std::string& s) {
    out_ += 'X';
    const auto n = static_cast<uint32_t>(s.size());
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>((n >> (8 * i)) & 0xff);
    out_ += s;
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      out_ += 'K';
      out_ += static_cast<char>(v);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      out_ += 'J';
      const auto u = static_cast<uint32_t>(static_cast<int32_t>(v));
      for (int i = 0; i < 4; ++i) out_ += static_cast<char>((u >> (8 * i)) & 0xff);
    } else {
      out_ += '\x8a';
      out_ += '\x08';
      const auto u = static_cast<uint64_t>(v);
      for (int i = 0; i < 8; ++i) out_ += static_cast<char>((u >> (8 * i)) & 0xff);
    }
  }
  void floating(double d) {
    out_ += 'G';
    uint64_t u;
    std::memcpy(&u, &d, 8);
    for (int i = 7; i >= 0; --i) out_ += static_cast<char>((u >> (8 * i)) & 0xff);
  }
  void ints(const std::vector<int64_t>& v) {  // a tuple of ints
    op('(');
    for (int64_t x : v) integer(x);
    op('t');
  }

  void tensor(const Tensor& t) {
    global("torch._utils", "_rebuild_tensor_v2");
    op('(');
    op('(');
    str("storage");
    global("torch", storage_type(t.dtype()));
    str(key_(t));
    str("cpu");
    integer(static_cast<int64_t>(t.storage()->nbytes() / t.itemsize()));
    op('t');
    op('Q');
    integer(t.storage_offset());
    ints(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()));
    ints(std::vector<int64_t>(t.strides().begin(), t.strides().end()));
    op('\x89');  // requires_grad: False, as torch writes a module's tensors
    global("collections", "OrderedDict");
    op(')');
    op('R');
    op('t');
    op('R');
  }

  // A value of declared type `type` (null: the value's own).
  void value(const IValue& v, const TypePtr& declared) {
    if (v.is_object()) {
      auto* obj = dynamic_cast<const ModuleObject*>(v.object());
      if (!obj) throw Error(fmt::format("cannot save an object of {}", v.object()->type_name()));
      return state_(*this, *obj);
    }
    if (v.is_none()) return op('N');
    if (v.is_bool()) return op(v.to_bool() ? '\x88' : '\x89');
    if (v.is_int()) return integer(v.to_int());
    if (v.is_double()) return floating(v.to_double());
    if (v.is_string()) return str(v.to_string_ref());
    if (v.is_scalar_type()) return integer(torch_dtype_code(v.to_scalar_type()));
    if (v.is_tensor()) return tensor(v.to_tensor());
    if (v.is_device()) {
      global("torch", "device");
      str(v.to_device().str());
      op('\x85');
      op('R');
      return;
    }
    const TypePtr type = declared ? declared : type_of_value(v);
    const TypePtr t = type->kind() == TypeKind::Optional ? type->elem() : type;
    if (v.is_tuple()) {
      op('(');
      const auto& el = v.tuple_elems();
      for (size_t i = 0; i < el.size(); ++i)
        value(el[i], t->kind() == TypeKind::Tuple && i < t->contained().size() ? t->contained()[i]
                                                                               : nullptr);
      op('t');
      return;
    }
    if (v.is_list()) {
      const TypePtr elem = t->kind() == TypeKind::List ? t->elem() : Type::any();
      const TypeKind k = elem->kind();
      const char* builder = k == TypeKind::Int      ? "build_intlist"
                            : k == TypeKind::Float  ? "build_floatlist"
                            : k == TypeKind::Bool   ? "build_boollist"
                            : k == TypeKind::Tensor ? "build_tensorlist"
                                                    : nullptr;
      global("torch.jit._pickle", builder ? builder : "restore_type_tag");
      op('(');
      op(']');
      op('(');
      for (const IValue& e : v.list_elems()) value(e, elem);
      op('e');
      if (!builder) str(annotation(*Type::list(elem)));
      op('t');
      op('R');
      return;
    }
    if (v.is_dict()) {
      const bool typed = t->kind() == TypeKind::Dict;
      global("torch.jit._pickle", "restore_type_tag");
      op('(');
      op('}');
      op('(');
      for (const auto& [k, x] : v.dict_obj()->items()) {
        value(k, typed ? t->key() : nullptr);
        value(x, typed ? t->value() : nullptr);
      }
      op('u');
      str(annotation(typed ? *t : *type_of_value(v)));
      op('t');
      op('R');
      return;
    }
    throw Error(fmt::format("cannot save a {}", v.tag_name()));
  }

 private:
  StorageKey key_;
  ObjectState state_;
  std::string out_;
};

// ---- The saver -----------------------------------------------------------------------------

class Saver {
 public:
  Saver(const Ref<ModuleObject>& root, const SaveClasses& classes)
      : root_(root), classes_(classes) {}

  void write(serialization::ZipWriter& w, const ExtraFiles& extra) {
    const SaveClass& root_class = class_of(*root_);
    bool has_forward = false;
    for (const auto& [name, fn] : root_class.methods) {
      enqueue_method(root_.get(), name, fn);
      has_forward |= name == "forward";
    }
    if (!has_forward)
      throw Error(
          fmt::format("cannot save {}: it has no compiled forward", root_class.qualified_name));
    drain();
    name_classes(*root_);
    assemble_files();
    for (const auto& [path, text] : files_) {
      std::string record = "code/";
      for (char c : path) record += c == '.' ? '/' : c;
      w.add(record + ".py", text);
    }
    // data.pkl: the tree of objects; constants.pkl: the code's tensor constants
    Pickler data([&](const Tensor& t) { return storage_key(t, data_storages_); },
                 [&](Pickler& p, const ModuleObject& o) { object(p, o); });
    data.value(IValue(Ref<ObjectBase>(root_)), nullptr);
    w.add("data.pkl", data.finish());
    Pickler consts(
        [&](const Tensor& t) { return storage_key(t, const_storages_); },
        [](Pickler&, const ModuleObject&) { throw Error("a constant holds a module object"); });
    consts.op('(');
    for (const IValue& c : print_.constants) consts.value(c, Type::tensor());
    consts.op('t');
    w.add("constants.pkl", consts.finish());
    for (const Storage& s : data_storages_) w.add_view("data/" + s.key, s.cpu.raw_data(), s.nbytes);
    for (const Storage& s : const_storages_)
      w.add_view("constants/" + s.key, s.cpu.raw_data(), s.nbytes);
    for (const auto& [name, contents] : extra) w.add("extra/" + name, contents);
    w.add("version", "3\n");
  }

 private:
  struct Storage {
    const void* identity;  // the storage object
    std::string key;
    Tensor cpu;  // the whole storage as a 1-D CPU tensor (kept alive until the archive is written)
    size_t nbytes;
  };
  struct Printed {
    std::map<std::string, std::string> methods;  // name -> text, in name order
  };

  const SaveClass& class_of(const ModuleObject& o) const {
    auto it = classes_.find(&o);
    if (it == classes_.end())
      throw Error(
          fmt::format("cannot save: no class is given for the module object of {}", o.class_name));
    return it->second;
  }

  static std::string storage_key(const Tensor& t, std::vector<Storage>& storages) {
    for (const Storage& s : storages)
      if (s.identity == t.storage().get()) return s.key;
    const auto n_el = static_cast<int64_t>(t.storage()->nbytes() / t.itemsize());
    const int64_t one = 1;
    Tensor whole = Tensor::make_view(t, IntArrayRef(&n_el, 1), IntArrayRef(&one, 1), 0);
    if (whole.device().type != DeviceType::CPU)
      whole = ops::to_device(whole, Device(), std::nullopt, false, true).tensor();
    storages.push_back(Storage{t.storage().get(), std::to_string(storages.size()), whole,
                               static_cast<size_t>(n_el) * whole.itemsize()});
    return storages.back().key;
  }

  void enqueue_method(const ModuleObject* o, const std::string& name,
                      const std::shared_ptr<Function>& fn) {
    auto& m = pending_methods_[o];
    if (m.count(name)) return;
    m[name] = fn;
    queue_.push_back({o, name, fn, false});
  }
  void enqueue_function(const std::shared_ptr<Function>& fn) {
    if (functions_.count(fn->name())) return;
    functions_[fn->name()] = "";
    queue_.push_back({nullptr, fn->name(), fn, true});
  }

  // The object a method call's first input is: `self`, or an attribute path from it.
  const ModuleObject* target(const Value* v, const Graph& g, const ModuleObject* self) const {
    if (self && !g.inputs().empty() && v == g.inputs()[0]) return self;
    const Node* n = v->node();
    if (n->kind() == sym::prim::GetAttr && self) {
      const ModuleObject* base = target(n->input(0), g, self);
      const IValue& a = base->attr(n->attr(sym::attr::name).to_string_ref());
      auto* child = a.is_object() ? dynamic_cast<const ModuleObject*>(a.object()) : nullptr;
      if (child) return child;
    }
    throw Error("cannot save a method call on a module that is not `self` or an attribute of it (" +
                v->debug_name() + ")");
  }

  void drain() {
    while (!queue_.empty()) {
      Item item = queue_.front();
      queue_.pop_front();
      const Graph& g = *item.fn->graph();
      // A function saved as a method (torch's PlaceholderModule forward): `self` is added.
      const bool as_method = !item.function && (g.inputs().empty() ||
                                                g.inputs()[0]->type()->kind() != TypeKind::Object);
      print_.prepend_self = as_method;
      const ModuleObject* self = as_method ? nullptr : item.object;
      print_.on_call = [&](const Node& call, const std::shared_ptr<Function>& fn, bool method) {
        if (!method) return enqueue_function(fn);
        const std::string& n = fn->name();
        enqueue_method(target(call.input(0), g, self), n.substr(n.rfind('.') + 1), fn);
      };
      if (item.function) {
        const auto [path, leaf] = split_qualified(item.name);
        functions_[item.name] = python_print_for_archive(g, leaf, print_, item.fn->schema().get());
      } else {
        printed_[item.object].methods[item.name] =
            python_print_for_archive(g, item.name, print_, item.fn->schema().get());
      }
    }
  }

  // Names each object's class, children first; objects whose class text is the same share one.
  void name_classes(const ModuleObject& o) {
    if (final_name_.count(&o)) return;
    const SaveClass& c = class_of(o);
    for (const SaveClass::Attr& a : c.attrs)
      if (a.kind == Module::AttrKind::kModule) {
        auto* child = dynamic_cast<const ModuleObject*>(o.attr(a.name).object());
        if (!child) throw Error(fmt::format("the submodule '{}' is not a module object", a.name));
        name_classes(*child);
      }
    const auto [path, leaf] = split_qualified(c.qualified_name);
    std::string text = "class " + leaf + "(Module):\n";
    std::string params = "  __parameters__ = [", buffers = "  __buffers__ = [", decls;
    for (const SaveClass::Attr& a : c.attrs) {
      std::string type;
      if (a.kind == Module::AttrKind::kModule) {
        type = final_name_.at(dynamic_cast<const ModuleObject*>(o.attr(a.name).object()));
      } else if (a.kind == Module::AttrKind::kConstant) {
        const TypePtr t = a.type ? a.type : type_of_value(a.value);
        decls += "  " + a.name + " : Final[" + annotation(*t) + "] = " + literal(a.value) + "\n";
        continue;
      } else {
        const int slot = o.slot(a.name);
        if (slot < 0)
          throw Error(fmt::format("cannot save {}: its attribute '{}' is not set", leaf, a.name));
        const IValue& v = o.attrs[static_cast<size_t>(slot)].second;
        type = annotation(*(a.type ? a.type : type_of_value(v)));
        if (a.kind == Module::AttrKind::kParameter) params += string_literal(a.name) + ", ";
        if (a.kind == Module::AttrKind::kBuffer) buffers += string_literal(a.name) + ", ";
      }
      decls += is_identifier(a.name)
                   ? "  " + a.name + " : " + type + "\n"
                   : "  __annotations__[" + string_literal(a.name) + "] = " + type + "\n";
    }
    text += params + "]\n" + buffers + "]\n" + decls;
    if (auto p = printed_.find(&o); p != printed_.end())
      for (const auto& [name, code] : p->second.methods) text += indent(code);
    auto& variants = variants_[c.qualified_name];
    for (const auto& [t, name] : variants)
      if (t == text) {
        final_name_[&o] = name;
        return;
      }
    const std::string name = variants.empty()
                                 ? c.qualified_name
                                 : fmt::format("{}.___torch_mangle_{}.{}", path, mangle_++, leaf);
    variants.emplace_back(text, name);
    final_name_[&o] = name;
    classes_text_[name] = text;
  }

  static std::string indent(const std::string& code) {
    std::string out;
    size_t at = 0;
    while (at < code.size()) {
      size_t nl = code.find('\n', at);
      if (nl == std::string::npos) nl = code.size();
      if (nl > at) out += "  " + code.substr(at, nl - at);
      out += "\n";
      at = nl + 1;
    }
    return out;
  }

  void assemble_files() {
    auto add = [&](const std::string& qualified, const std::string& text) {
      files_[split_qualified(qualified).first] += text;
    };
    for (const auto& [name, text] : classes_text_) add(name, text);
    for (const auto& [name, text] : functions_) add(name, text);
    for (const std::string& cls : print_.autocast_classes) {
      auto it = autocast_class_code().find(cls);
      if (it == autocast_class_code().end())
        throw Error(fmt::format("cannot save the autocast class {}", cls));
      add(cls, it->second);
    }
    for (const TypePtr& t : print_.named_tuples) {
      std::string text = "class " + split_qualified(t->name()).second + "(NamedTuple):\n";
      for (size_t i = 0; i < t->field_names().size(); ++i)
        text += "  " + t->field_names()[i] + " : " + annotation(*t->contained()[i]) + "\n";
      add(t->name(), text);
    }
  }

  void object(Pickler& p, const ModuleObject& o) {
    const SaveClass& c = class_of(o);
    const auto [module, name] = split_qualified(final_name_.at(&o));
    p.global(module, name);
    p.op(')');
    p.op('\x81');  // NEWOBJ
    p.op('}');
    p.op('(');
    for (const SaveClass::Attr& a : c.attrs) {
      if (a.kind == Module::AttrKind::kConstant) continue;
      p.str(a.name);
      p.value(o.attr(a.name), a.type);
    }
    p.op('u');
    p.op('b');  // BUILD
  }

  struct Item {
    const ModuleObject* object;  // null for a function
    std::string name;
    std::shared_ptr<Function> fn;
    bool function;
  };

  Ref<ModuleObject> root_;
  const SaveClasses& classes_;
  ArchivePrint print_;
  std::deque<Item> queue_;
  std::map<const ModuleObject*, std::map<std::string, std::shared_ptr<Function>>> pending_methods_;
  std::map<const ModuleObject*, Printed> printed_;
  std::map<std::string, std::string> functions_;  // qualified name -> def text
  std::map<const ModuleObject*, std::string> final_name_;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> variants_;
  std::map<std::string, std::string> classes_text_;
  std::map<std::string, std::string> files_;  // module path -> text
  std::vector<Storage> data_storages_, const_storages_;
  int mangle_ = 0;
};

}  // namespace

std::string save_bytes(const Ref<ModuleObject>& root, const SaveClasses& classes,
                       const ExtraFiles& extra_files, const std::string& top) {
  serialization::ZipWriter w(top);
  Saver saver(root, classes);
  saver.write(w, extra_files);
  return w.finish();
}

void save(const Ref<ModuleObject>& root, const SaveClasses& classes, const std::string& path,
          const ExtraFiles& extra_files) {
  std::string top = path.substr(path.find_last_of('/') + 1);
  if (const size_t dot = top.rfind('.'); dot != std::string::npos && dot > 0) top.resize(dot);
  if (!is_identifier(top)) top = "archive";
  serialization::ZipWriter w(top);
  Saver saver(root, classes);
  saver.write(w, extra_files);
  w.finish_to_file(path);
}

}  // namespace ampjit::jit
