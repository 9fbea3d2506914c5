// Graph -> Python-like source (see python_print.h).
#include "runtime/ir/python_print.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "runtime/autocast/autocast_state.h"
#include "runtime/error.h"
#include "runtime/interpreter.h"
#include "runtime/ir/queries.h"
#include "runtime/op_table.h"

namespace ampjit {

namespace {

// The Python annotation for a type: Tensor, int, List[Tensor], Tuple[Tensor, int], Optional[...].
std::string py_type(const Type& t) {
  return t.annotation_str();
}

class Printer {
 public:
  explicit Printer(const Graph& g, ArchivePrint* ar = nullptr) : g_(g), ar_(ar) {}
  void set_schema(const FunctionSchema* schema) { schema_ = schema; }

  std::string run(const std::string& name) {
    std::string head = "def " + name + "(";
    if (ar_ && ar_->prepend_self) head += g_.inputs().empty() ? "self" : "self,\n    ";
    const bool has_self =
        !g_.inputs().empty() && g_.inputs()[0]->type()->kind() == TypeKind::Object;
    for (size_t i = 0; i < g_.inputs().size(); ++i) {
      const Value* v = g_.inputs()[i];
      const bool is_self = i == 0 && has_self;
      const std::string n = is_self ? "self" : fresh(v);
      names_[v] = n;
      std::string param = is_self ? n : n + ": " + ann(*v->type());
      const size_t arg = i - (has_self ? 1 : 0);
      if (!is_self && schema_ && arg < schema_->args.size() && schema_->args[arg].default_value)
        param += "=" + constant(*schema_->args[arg].default_value);
      head += (i ? ",\n    " : "") + param;
    }
    std::string ret;
    if (g_.outputs().size() == 1)
      ret = ann(*g_.outputs()[0]->type());
    else {
      ret = "Tuple[";
      for (size_t i = 0; i < g_.outputs().size(); ++i)
        ret += (i ? ", " : "") + ann(*g_.outputs()[i]->type());
      ret += "]";
    }
    out_ = head + ") -> " + ret + ":\n";
    block(*g_.block(), 1, /*flush_at_end=*/false);
    std::string r = exprs(g_.outputs());
    flush(1);
    line(1, "return " + (g_.outputs().size() == 1 ? r : "(" + r + ")"));
    return out_;
  }

 private:
  // A readable, unique Python name for a value: its debug name when it has one, else _N.
  std::string fresh(const Value* v) {
    std::string base;
    if (v->has_debug_name()) {
      for (char c : v->debug_name())
        base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
      if (std::isdigit(static_cast<unsigned char>(base[0]))) base = "_" + base;
      while (base.size() > 1 && base.back() == '_') base.pop_back();
    } else {
      base = "_" + std::to_string(counter_++);
    }
    std::string n = base;
    static const std::unordered_set<std::string> reserved = {
        "self",          "torch",     "CONSTANTS", "ops",  "annotate", "unchecked_cast",
        "uninitialized", "__torch__", "inf",       "nan",  "getattr",  "int",
        "float",         "bool",      "str",       "len",  "range",    "print",
        "isinstance",    "list",      "tuple",     "dict", "min",      "max",
        "abs",           "math"};
    for (int k = 0; used_.count(n) || reserved.count(n); ++k) n = base + std::to_string(k);
    used_.insert(n);
    return n;
  }

  void line(int indent, const std::string& s) { out_ += std::string(2 * indent, ' ') + s + "\n"; }

  // Whether `v` is printed inside its single use instead of getting a name.
  bool inlinable(const Value* v) const {
    const Node* n = v->node();
    if (n->outputs().size() != 1 || v->uses().size() != 1 || !n->blocks().empty()) return false;
    if (n->kind() == sym::prim::Constant) return true;
    if (has_side_effects(*n) || n->kind() == sym::prim::GetAttr) return false;
    const Node* user = v->uses()[0].user;
    return user->owning_block() == n->owning_block();
  }

  // A type as an annotation; in archives NoneType is spelled as torch does, and the NamedTuples
  // named are reported.
  std::string ann(const Type& t) {
    if (!ar_) return py_type(t);
    if (t.kind() == TypeKind::None) return "NoneType";
    if (t.is_named_tuple()) note_named_tuple(t);
    if (t.kind() == TypeKind::Device) return "Device";
    if (t.kind() == TypeKind::Any) return "Any";
    if (t.kind() == TypeKind::List) return "List[" + ann(*t.elem()) + "]";
    if (t.kind() == TypeKind::Optional) return "Optional[" + ann(*t.elem()) + "]";
    if (t.kind() == TypeKind::Tuple && !t.is_named_tuple()) {
      std::string out = "Tuple[";
      for (size_t i = 0; i < t.contained().size(); ++i)
        out += (i ? ", " : "") + ann(*t.contained()[i]);
      return out + (t.contained().empty() ? "()]" : "]");
    }
    if (t.kind() == TypeKind::Dict) return "Dict[" + ann(*t.key()) + ", " + ann(*t.value()) + "]";
    return py_type(t);
  }
  void note_named_tuple(const Type& t) {
    for (const TypePtr& k : ar_->named_tuples)
      if (k->name() == t.name()) return;
    ar_->named_tuples.push_back(TypePtr(&t));
  }

  std::string constant(const IValue& v) {
    if (ar_) {
      if (v.is_tensor()) {
        ar_->constants.push_back(v);
        return "CONSTANTS.c" + std::to_string(ar_->constants.size() - 1);
      }
      if (v.is_double()) return float_literal(v.to_double());
      if (v.is_string()) return string_literal(v.to_string_ref());
      if (v.is_scalar_type()) return std::to_string(torch_dtype_code(v.to_scalar_type()));
      if (v.is_device()) return "torch.device(" + string_literal(v.to_device().str()) + ")";
      if (v.is_object())
        throw Error(fmt::format("cannot save a graph holding a {} constant in an archive",
                                v.object()->type_name()));
    }
    if (v.is_tensor()) return "CONSTANTS.c" + std::to_string(tensor_consts_++);
    if (v.is_scalar_type()) return std::to_string(torch_dtype_code(v.to_scalar_type()));
    if (v.is_device()) return "torch.device(\"" + v.to_device().str() + "\")";
    if (v.is_list() || v.is_tuple()) {
      const auto& el = v.is_list() ? v.list_elems() : v.tuple_elems();
      std::string s = v.is_list() ? "[" : "(";
      for (size_t i = 0; i < el.size(); ++i) s += (i ? ", " : "") + constant(el[i]);
      if (v.is_tuple() && el.size() == 1) s += ",";
      return s + (v.is_list() ? "]" : ")");
    }
    return v.repr();
  }

  std::string expr(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    auto p = pending_.find(v);
    if (p != pending_.end()) {
      std::string e = p->second;
      pending_.erase(p);
      return e;
    }
    return "<" + v->debug_name() + ">";
  }
  std::string exprs(const std::vector<Value*>& vs) {
    std::string s;
    for (size_t i = 0; i < vs.size(); ++i) s += (i ? ", " : "") + expr(vs[i]);
    return s;
  }

  // The call expression of an op node, trailing default arguments dropped, kwarg-only by name.
  std::string call(const Node& n) {
    const Symbol k = n.kind();
    std::vector<std::string> args(n.inputs().size());
    for (size_t i = 0; i < n.inputs().size(); ++i) args[i] = expr(n.input(i));
    std::string fn = k.is_aten() ? "torch." + std::string(k.name())
                                 : "ops." + std::string(k.ns()) + "." + std::string(k.name());
    if (!n.op()) return fn + "(" + join(args, 0, args.size()) + ")";
    const auto& schema = n.op()->schema.args;
    size_t end = args.size();
    while (end > 0 && end <= schema.size()) {
      const Argument& a = schema[end - 1];
      const Node* src = n.input(end - 1)->node();
      if (!a.default_value || src->kind() != sym::prim::Constant) break;
      const IValue c = src->has_attr(sym::attr::value) ? src->attr(sym::attr::value) : IValue();
      const IValue& d = *a.default_value;
      const bool same =
          c.equals(d) || (c.is_number() && d.is_number() && c.to_double() == d.to_double());
      if (!same) break;
      --end;
    }
    std::string s = fn + "(";
    for (size_t i = 0; i < end; ++i) {
      s += i ? ", " : "";
      if (i < schema.size() && schema[i].kwarg_only) s += schema[i].name + "=";
      s += args[i];
    }
    return s + ")";
  }
  static std::string join(const std::vector<std::string>& v, size_t b, size_t e) {
    std::string s;
    for (size_t i = b; i < e; ++i) s += (i > b ? ", " : "") + v[i];
    return s;
  }

  // Emits every pending expression as a statement, so a side effect cannot reorder past it.
  void flush(int indent) {
    for (const Value* v : pending_order_) {
      auto p = pending_.find(v);
      if (p == pending_.end()) continue;
      const std::string n = fresh(v);
      line(indent, n + " = " + p->second);
      names_[v] = n;
      pending_.erase(p);
    }
    pending_order_.clear();
  }

  void assign(int indent, const Node& n, const std::string& rhs) {
    if (n.outputs().empty()) {
      line(indent, rhs);
      return;
    }
    if (n.outputs().size() == 1 && inlinable(n.output())) {
      pending_[n.output()] = rhs;
      pending_order_.push_back(n.output());
      return;
    }
    std::string lhs;
    for (size_t i = 0; i < n.outputs().size(); ++i) {
      const std::string name = fresh(n.output(i));
      names_[n.output(i)] = name;
      lhs += (i ? ", " : "") + name;
    }
    line(indent, lhs + " = " + rhs);
  }

  // Pending expressions stay pending when the caller consumes the block's outputs next.
  void block(const Block& b, int indent, bool flush_at_end = true) {
    int extra = 0;  // open `with` statements of autocast objects (archives)
    std::vector<size_t> with_starts;
    for (const Node* n : b) {
      if (ar_ && n->kind() == sym::prim::Enter) {
        flush(indent + extra);
        enter_autocast(*n, indent + extra);
        with_starts.push_back(out_.size());
        ++extra;
        continue;
      }
      if (ar_ && n->kind() == sym::prim::Exit && extra > 0) {
        flush(indent + extra);
        if (out_.size() == with_starts.back()) line(indent + extra, "pass");
        with_starts.pop_back();
        --extra;
        continue;
      }
      node(*n, indent + extra);
    }
    if (extra != 0) throw Error("cannot save a `with` whose exit is in another block");
    if (flush_at_end) flush(indent);
  }

  void assign_values(int indent, const std::vector<Value*>& to, const std::vector<Value*>& from) {
    if (to.empty()) return;
    std::string lhs, rhs;
    for (size_t i = 0; i < to.size(); ++i) {
      lhs += (i ? ", " : "") + names_.at(to[i]);
      rhs += (i ? ", " : "") + expr(from[i]);
    }
    line(indent, lhs + " = " + rhs);
  }

  // Archive forms of the nodes torch's dialect spells differently; whether `n` was printed.
  bool archive_node(const Node& n, int indent) {
    const Symbol k = n.kind();
    const std::string& kind = k.qualified();
    if (k == sym::prim::CallFunction) {
      const IValue& f = n.attr(sym::attr::value);
      auto* fo = f.is_object() ? dynamic_cast<FunctionObject*>(f.object()) : nullptr;
      if (!fo) throw Error("cannot save a call of an unknown function in an archive");
      const std::shared_ptr<Function>& fn = fo->fn;
      const auto& schema = fn->schema();
      const bool method = !n.inputs().empty() && n.input(0)->type()->kind() == TypeKind::Object &&
                          schema && schema->args.size() + 1 == fn->graph()->inputs().size();
      if (ar_->on_call) ar_->on_call(n, fn, method);
      std::string args;
      for (size_t i = method ? 1 : 0; i < n.inputs().size(); ++i) args += expr(n.input(i)) + ", ";
      if (method) {
        const std::string& name = fn->name();
        assign(indent, n,
               "(" + expr(n.input(0)) + ")." + name.substr(name.rfind('.') + 1) + "(" + args + ")");
      } else {
        assign(indent, n, fn->name() + "(" + args + ")");
      }
      return true;
    }
    if (k == sym::prim::CreateObject) {
      const std::string& cls = n.output()->type()->name();
      if (!is_autocast_class_name(cls))
        throw Error(
            fmt::format("cannot save an object of the script class {} in an archive yet", cls));
      autocast_[n.output()] = AutocastObject{cls, {}};
      note_autocast_class(cls);
      return true;
    }
    if (k == sym::prim::SetAttr) {
      const std::string& a = n.attr(sym::attr::name).to_string_ref();
      if (auto it = autocast_.find(n.input(0)); it != autocast_.end()) {
        it->second.args[a] = expr(n.input(1));
        return true;
      }
      flush(indent);
      line(indent, expr(n.input(0)) + "." + a + " = " + expr(n.input(1)));
      return true;
    }
    if (k == sym::prim::RaiseException) {
      flush(indent);
      line(indent, "ops.prim.RaiseException(" + exprs(n.inputs()) + ")");
      return true;
    }
    if (k == sym::prim::Uninitialized) {
      assign(indent, n, "uninitialized(" + ann(*n.output()->type()) + ")");
      return true;
    }
    if (k == sym::prim::unchecked_cast) {
      // None cast to an Optional is printed as None, as torch prints it (where it meets the other
      // branch's value the If's output becomes the Optional): torch 1.13 makes a cast None an
      // Optional-typed constant without a value, which its executor's passes fail on
      const IValue* c = constant_value(n.input(0));
      if (c && c->is_none()) {
        assign(indent, n, "None");
        return true;
      }
      // A widening cast (a value to a supertype: Tuple[Tensor, NoneType] to
      // Tuple[Tensor, Optional[Tensor]]) is the value itself; the types meet where it is used.
      if (n.input(0)->type()->is_subtype_of(*n.output()->type())) {
        assign(indent, n, expr(n.input(0)));
        return true;
      }
      assign(indent, n,
             "unchecked_cast(" + ann(*n.output()->type()) + ", " + expr(n.input(0)) + ")");
      return true;
    }
    if (k == sym::prim::ListConstruct && n.inputs().empty()) {
      assign(indent, n, "annotate(" + ann(*n.output()->type()) + ", [])");
      return true;
    }
    if (kind == "prim::DictConstruct") {
      if (n.inputs().empty()) {
        assign(indent, n, "annotate(" + ann(*n.output()->type()) + ", {})");
      } else {
        std::string d = "{";
        for (size_t i = 0; i + 1 < n.inputs().size(); i += 2)
          d += (i ? ", " : "") + expr(n.input(i)) + ": " + expr(n.input(i + 1));
        assign(indent, n, d + "}");
      }
      return true;
    }
    if (k == sym::prim::TupleConstruct && n.output()->type()->is_named_tuple()) {
      note_named_tuple(*n.output()->type());
      std::string args;
      for (const Value* v : n.inputs()) args += expr(v) + ", ";
      assign(indent, n, n.output()->type()->name() + "(" + args + ")");
      return true;
    }
    if (kind == "aten::__getitem__" && !n.op() && n.inputs().size() == 2) {
      assign(indent, n, expr(n.input(0)) + "[" + expr(n.input(1)) + "]");
      return true;
    }
    if (kind == "aten::_set_item" && !n.op() && n.inputs().size() == 3) {
      flush(indent);
      const std::string target = expr(n.input(0));
      line(indent, target + "[" + expr(n.input(1)) + "] = " + expr(n.input(2)));
      if (!n.outputs().empty()) names_[n.output()] = target;
      return true;
    }
    if (k.ns() != "aten" && k.ns() != "prim")
      throw Error(
          fmt::format("cannot save {} in torch's format: torch has no such op (a graph "
                      "that optimize_for_inference rewrote?)",
                      kind));
    return false;
  }
  void note_autocast_class(const std::string& cls) {
    if (std::find(ar_->autocast_classes.begin(), ar_->autocast_classes.end(), cls) ==
        ar_->autocast_classes.end())
      ar_->autocast_classes.push_back(cls);
  }

  // `with` on an autocast object: torch's two statements that make it, then the `with` line.
  void enter_autocast(const Node& n, int indent) {
    auto it = autocast_.find(n.input(0));
    if (it == autocast_.end())
      throw Error("cannot save a `with` on something other than an autocast object");
    const AutocastObject& o = it->second;
    auto arg = [&](const char* name, const char* fallback) {
      auto a = o.args.find(name);
      return a == o.args.end() ? std::string(fallback) : a->second;
    };
    std::string init;
    if (o.cls.find("torch.amp.") != std::string::npos)  // torch.autocast(device_type, dtype, ...)
      init = arg("device", "\"cpu\"") + ", " + arg("fast_dtype", "None") + ", " +
             arg("_enabled", "True") + ", " + arg("_cache_enabled", "None") + ", ";
    else  // torch.cpu.amp.autocast / torch.cuda.amp.autocast(enabled, dtype, cache_enabled)
      init = arg("_enabled", "True") + ", " + arg("fast_dtype", "15") + ", " +
             arg("_cache_enabled", "True") + ", ";
    const std::string obj = fresh(n.input(0));
    names_[n.input(0)] = obj;
    line(indent, obj + " = " + o.cls + ".__new__(" + o.cls + ")");
    line(indent, "_" + std::to_string(counter_++) + " = (" + obj + ").__init__(" + init + ")");
    line(indent, "with " + obj + ":");
  }

  void node(const Node& n, int indent) {
    const Symbol k = n.kind();
    if (ar_ && (has_side_effects(n) || !n.blocks().empty())) flush(indent);
    if (ar_ && archive_node(n, indent)) return;
    if (has_side_effects(n) || !n.blocks().empty()) flush(indent);
    if (k == sym::prim::Constant) {
      const IValue v = n.has_attr(sym::attr::value) ? n.attr(sym::attr::value) : IValue();
      if (ar_ && v.is_list() && v.list_elems().empty())  // its element type is the value's
        assign(indent, n, "annotate(" + ann(*n.output()->type()) + ", [])");
      else
        assign(indent, n, constant(v));
    } else if (k == sym::prim::GetAttr) {
      const std::string& a = n.attr(sym::attr::name).to_string_ref();
      const bool ident = !a.empty() && !std::isdigit(static_cast<unsigned char>(a[0])) &&
                         std::all_of(a.begin(), a.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                         });
      assign(indent, n,
             ident ? expr(n.input()) + "." + a : "getattr(" + expr(n.input()) + ", \"" + a + "\")");
    } else if (k == sym::prim::TupleConstruct) {
      assign(indent, n, "(" + exprs(n.inputs()) + (n.inputs().size() == 1 ? ",)" : ")"));
    } else if (k == sym::prim::ListConstruct) {
      assign(indent, n, "[" + exprs(n.inputs()) + "]");
    } else if ((k == sym::prim::TupleUnpack || k == sym::prim::ListUnpack) &&
               n.outputs().size() == 1) {  // `x, = t`: one element, unpacked
      const std::string rhs = expr(n.input());
      const std::string name = fresh(n.output());
      names_[n.output()] = name;
      line(indent, name + ", = " + rhs);
    } else if (k == sym::prim::TupleUnpack || k == sym::prim::ListUnpack) {
      assign(indent, n, expr(n.input()));
    } else if (k == sym::prim::TupleIndex) {
      assign(indent, n, expr(n.input(0)) + "[" + expr(n.input(1)) + "]");
    } else if (k == sym::prim::RaiseException) {
      line(indent, "raise " + ("Exception(" + expr(n.input()) + ")"));
    } else if (k == sym::prim::If) {
      for (const Value* o : n.outputs()) names_[o] = fresh(o);
      line(indent, "if " + expr(n.input()) + ":");
      for (size_t bi = 0; bi < 2; ++bi) {
        if (bi == 1) line(indent, "else:");
        const Block& b = *n.blocks()[bi];
        const size_t before = out_.size();
        block(b, indent + 1, false);
        assign_values(indent + 1, n.outputs(), b.outputs());
        flush(indent + 1);
        if (out_.size() == before) line(indent + 1, "pass");
      }
    } else if (k == sym::prim::Loop) {
      const Block& body = *n.blocks()[0];
      std::vector<Value*> carried(body.inputs().begin() + 1, body.inputs().end());
      std::vector<Value*> inits(n.inputs().begin() + 2, n.inputs().end());
      for (const Value* c : carried) names_[c] = fresh(c);
      assign_values(indent, carried, inits);
      const std::string i = fresh(body.inputs()[0]);
      names_[body.inputs()[0]] = i;
      const Node* cond = body.outputs()[0]->node();
      const bool for_loop = n.input(1)->node()->kind() == sym::prim::Constant &&
                            cond->kind() == sym::prim::Constant &&
                            n.input(1)->node()->attr(sym::attr::value).to_bool() &&
                            cond->attr(sym::attr::value).to_bool();
      if (for_loop) {
        line(indent, "for " + i + " in range(" + expr(n.input(0)) + "):");
      } else {
        const std::string c = "_cond" + std::to_string(counter_++);
        line(indent, c + " = " + expr(n.input(1)));
        line(indent, i + " = 0");
        line(indent, "while " + i + " < " + expr(n.input(0)) + " and " + c + ":");
        block(body, indent + 1, false);
        line(indent + 1, c + " = " + expr(body.outputs()[0]));
        assign_values(indent + 1, carried,
                      std::vector<Value*>(body.outputs().begin() + 1, body.outputs().end()));
        flush(indent + 1);
        line(indent + 1, i + " = " + i + " + 1");
        for (size_t o = 0; o < n.outputs().size(); ++o) names_[n.output(o)] = names_.at(carried[o]);
        return;
      }
      const size_t before = out_.size();
      block(body, indent + 1, false);
      assign_values(indent + 1, carried,
                    std::vector<Value*>(body.outputs().begin() + 1, body.outputs().end()));
      flush(indent + 1);
      if (out_.size() == before) line(indent + 1, "pass");
      for (size_t o = 0; o < n.outputs().size(); ++o) names_[n.output(o)] = names_.at(carried[o]);
    } else if (ar_ && k == sym::prim::AutocastRegion) {
      throw Error(
          "cannot save an optimized graph's autocast region in an archive (save the "
          "module's own graph)");
    } else if (k == sym::prim::AutocastRegion && n.blocks().size() == 1) {
      // with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False, cache_enabled=False):
      std::string args;
      if (n.has_attr(sym::attr::device_type)) args += constant(n.attr(sym::attr::device_type));
      if (n.has_attr(sym::attr::dtype)) {
        const IValue& d = n.attr(sym::attr::dtype);
        const std::optional<ScalarType> t = d.is_scalar_type()
                                                ? std::optional<ScalarType>(d.to_scalar_type())
                                            : d.is_int() ? from_torch_dtype_code(d.to_int())
                                                         : std::nullopt;
        args +=
            std::string(", dtype=") + (t ? std::string("torch.") + dtype_name(*t) : constant(d));
      }
      for (Symbol a : {sym::attr::enabled, sym::attr::cache_enabled}) {
        if (!n.has_attr(a)) continue;
        const IValue& v = n.attr(a);
        args += ", " + std::string(a.name()) + "=" +
                (v.is_bool() || v.is_int() ? (v.to_int() ? "True" : "False") : constant(v));
      }
      for (const Value* o : n.outputs()) names_[o] = fresh(o);
      line(indent, "with torch.autocast(" + args + "):");
      const Block& b = *n.blocks()[0];
      const size_t before = out_.size();
      block(b, indent + 1, false);
      assign_values(indent + 1, n.outputs(), b.outputs());
      flush(indent + 1);
      if (out_.size() == before) line(indent + 1, "pass");
    } else if (k == sym::prim::CallFunction) {
      const IValue& f = n.attr(sym::attr::value);
      std::string callee = f.is_object() ? f.object()->type_name() : "fn";
      if (n.has_attr(sym::attr::name)) callee = n.attr(sym::attr::name).to_string_ref();
      const std::string cls = n.inputs().empty() ? std::string() : n.input(0)->type()->name();
      if (!n.inputs().empty() && n.input(0)->type()->kind() == TypeKind::Object &&
          callee.size() > cls.size() + 1 && callee.compare(0, cls.size() + 1, cls + ".") == 0) {
        // a method of a script class: (obj).method(args), as torch prints it
        std::vector<Value*> rest(n.inputs().begin() + 1, n.inputs().end());
        assign(indent, n,
               "(" + expr(n.input(0)) + ")." + callee.substr(cls.size() + 1) + "(" + exprs(rest) +
                   ")");
      } else {
        assign(indent, n, callee + "(" + exprs(n.inputs()) + ")");
      }
    } else if (k == sym::prim::CreateObject) {
      const std::string& cls = n.output()->type()->name();
      assign(indent, n, cls + ".__new__(" + cls + ")");
    } else {
      assign(indent, n, call(n));
    }
  }

  struct AutocastObject {
    std::string cls;
    std::map<std::string, std::string> args;  // attribute -> expression
  };
  const Graph& g_;
  ArchivePrint* ar_;
  const FunctionSchema* schema_ = nullptr;
  std::unordered_map<const Value*, AutocastObject> autocast_;
  std::string out_;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_map<const Value*, std::string> pending_;
  std::vector<const Value*> pending_order_;
  std::unordered_set<std::string> used_;
  int counter_ = 0;
  int tensor_consts_ = 0;
};

}  // namespace

std::string python_print(const Graph& g, const std::string& name) {
  return Printer(g).run(name);
}

std::string python_print_for_archive(const Graph& g, const std::string& name, ArchivePrint& ctx,
                                     const FunctionSchema* schema) {
  Printer p(g, &ctx);
  p.set_schema(schema);
  return p.run(name);
}

std::string float_literal(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", d);  // the shortest text that reads back as d
  if (s.find_first_of(".en") == std::string::npos) s += ".";
  return s;
}

std::string string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f)
          out += fmt::format("\\x{:02x}", c);
        else
          out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace ampjit
