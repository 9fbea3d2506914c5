// The canonical text form of a graph, in TorchScript's format:
//   graph(%x : Tensor,
//         %n : int):
//     %2 : int = prim::Constant[value=1]()
//     %y : Tensor = aten::add(%x, %x, %2) # f.py:3:8
//     return (%y)
// Round trip: parse_graph(g.str()).str() == g.str() (Note [Graph text round trip]).
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "runtime/ir/ir.h"

namespace ampjit {

namespace {

// Unnamed values print as numbers in definition order, so printing is stable under parsing.
struct Names {
  std::unordered_map<const Value*, size_t> numbers;
  std::string operator()(const Value* v) {
    if (v->has_debug_name()) return "%" + v->debug_name();
    auto it = numbers.find(v);
    if (it == numbers.end()) it = numbers.emplace(v, numbers.size()).first;
    return "%" + std::to_string(it->second);
  }
};
thread_local Names* t_names = nullptr;
std::string value_name(const Value* v) {
  return (*t_names)(v);
}

std::string escape(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".e") == std::string::npos) s += ".";
  return s;
}

// Note [Graph text round trip]
// Every attribute prints in a form the parser reads back to an equal value. Tensor constants print
// as <Tensor>; their dtype, shape and device are in the output type, and the parser rebuilds a
// zero tensor of that type (graph text carries no tensor data; serialization stores it apart).
// Objects (a prim::CallFunction's Function, a module) print as <TypeName> for the reader and do not
// parse back: the parser says so. Graphs holding them round-trip after inlining, or not at all.
std::string attr_str(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None:
      return "None";
    case IValue::Tag::Double:
      return format_double(v.to_double());
    case IValue::Tag::Int:
      return std::to_string(v.to_int());
    case IValue::Tag::Bool:
      return v.to_bool() ? "1" : "0";
    case IValue::Tag::String:
      return escape(v.to_string_ref());
    case IValue::Tag::ScalarType:
      return std::to_string(torch_dtype_code(v.to_scalar_type()));
    case IValue::Tag::Device:
      return escape(v.to_device().str());
    case IValue::Tag::Tensor:
      return "<Tensor>";
    case IValue::Tag::List:
    case IValue::Tag::Tuple: {
      const auto& el = v.is_list() ? v.list_elems() : v.tuple_elems();
      std::string s = v.is_list() ? "[" : "(";
      for (size_t i = 0; i < el.size(); ++i) s += (i ? ", " : "") + attr_str(el[i]);
      if (v.is_tuple() && el.size() == 1) s += ",";
      return s + (v.is_list() ? "]" : ")");
    }
    case IValue::Tag::Dict: {
      std::string s = "{";
      bool first = true;
      for (const auto& [k, e] : v.dict_obj()->items()) {
        s += (first ? "" : ", ") + attr_str(k) + ": " + attr_str(e);
        first = false;
      }
      return s + "}";
    }
    case IValue::Tag::Object:
      return std::string("<") + v.object()->type_name() + ">";
  }
  return "?";
}

void print_values(std::ostream& os, const std::vector<Value*>& vs, bool with_types) {
  for (size_t i = 0; i < vs.size(); ++i) {
    if (i) os << ", ";
    os << value_name(vs[i]);
    if (with_types) os << " : " << vs[i]->type()->str();
  }
}

void print_block(std::ostream& os, const Block& b, int indent, bool ranges);

void print_node(std::ostream& os, const Node& n, int indent, bool ranges) {
  // A node without outputs prints as torch prints it: the indent, then " = " ("   =
  // prim::SetAttr").
  os << std::string(indent, ' ');
  print_values(os, n.outputs(), true);
  os << " = " << n.kind().qualified();
  if (!n.attrs().empty()) {
    os << "[";
    for (size_t i = 0; i < n.attrs().size(); ++i) {
      if (i) os << ", ";
      os << n.attrs()[i].first.name() << "=" << attr_str(n.attrs()[i].second);
    }
    os << "]";
  }
  os << "(";
  print_values(os, n.inputs(), false);
  os << ")";
  if (ranges && n.source_range().valid()) os << " # " << n.source_range().location_str();
  os << "\n";
  for (size_t i = 0; i < n.blocks().size(); ++i) {
    const Block& b = *n.blocks()[i];
    os << std::string(indent + 2, ' ') << "block" << i << "(";
    print_values(os, b.inputs(), true);
    os << "):\n";
    print_block(os, b, indent + 4, ranges);
    os << std::string(indent + 4, ' ') << "-> (";
    print_values(os, b.outputs(), false);
    os << ")\n";
  }
}

void print_block(std::ostream& os, const Block& b, int indent, bool ranges) {
  for (const Node* n : b) print_node(os, *n, indent, ranges);
}

}  // namespace

std::string Graph::str(bool ranges) const {
  Names names;
  Names* saved = t_names;
  t_names = &names;
  struct Restore {
    Names* s;
    ~Restore() { t_names = s; }
  } restore{saved};
  std::ostringstream os;
  os << "graph(";
  const auto& ins = inputs();
  for (size_t i = 0; i < ins.size(); ++i) {
    if (i) os << ",\n      ";
    os << value_name(ins[i]) << " : " << ins[i]->type()->str();
  }
  os << "):\n";
  print_block(os, *block(), 2, ranges);
  os << "  return (";
  print_values(os, outputs(), false);
  os << ")\n";
  return os.str();
}

}  // namespace ampjit
