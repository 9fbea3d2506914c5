// The graph as JSON and as Graphviz DOT (see graph_render.h).
#include "runtime/ir/graph_render.h"

#include <unordered_map>

#include "runtime/dtype.h"
#include "runtime/ir/ir.h"

namespace ampjit {

namespace {

// Note [Dump value names]
// Unnamed values are numbered in the order the text printer (runtime/ir/ir_printer.cpp) first
// prints them: graph inputs; per node its outputs, then its inputs, then each block's inputs, body
// and outputs; the graph outputs. The DOT and JSON emitters walk in that order too, so %3 in one
// format is %3 in the others.
class ValueNames {
 public:
  std::string operator()(const Value* v) {
    if (v->has_debug_name()) return "%" + v->debug_name();
    auto it = numbers_.find(v);
    if (it == numbers_.end()) it = numbers_.emplace(v, numbers_.size()).first;
    return "%" + std::to_string(it->second);
  }

 private:
  std::unordered_map<const Value*, size_t> numbers_;
};

Json attr_json(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None:
      return Json();
    case IValue::Tag::Bool:
      return Json::boolean(v.to_bool());
    case IValue::Tag::Int:
      return Json::integer(v.to_int());
    case IValue::Tag::Double:
      if (std::isfinite(v.to_double())) return Json::number(v.to_double());
      return Json::string(std::isnan(v.to_double()) ? "nan" : v.to_double() > 0 ? "inf" : "-inf");
    case IValue::Tag::String:
      return Json::string(v.to_string_ref());
    case IValue::Tag::ScalarType:
      return Json::string(std::string("torch.") + dtype_name(v.to_scalar_type()));
    case IValue::Tag::Device:
      return Json::string(v.to_device().str());
    case IValue::Tag::Tensor:
      return Json::string("<Tensor>");
    case IValue::Tag::List:
    case IValue::Tag::Tuple: {
      Json a = Json::array();
      for (const IValue& e : v.is_list() ? v.list_elems() : v.tuple_elems()) a.push(attr_json(e));
      return a;
    }
    case IValue::Tag::Dict:
      return Json::string(v.repr());
    case IValue::Tag::Object:
      return Json::string(std::string("<") + v.object()->type_name() + ">");
  }
  return Json();
}

Json typed_value_json(const Value* v, ValueNames& names) {
  return Json::object()
      .add("name", Json::string(names(v)))
      .add("type", Json::string(v->type()->str()));
}

Json names_json(const std::vector<Value*>& vs, ValueNames& names) {
  Json a = Json::array();
  for (const Value* v : vs) a.push(Json::string(names(v)));
  return a;
}

Json block_nodes_json(const Block& b, ValueNames& names);

Json node_json(const Node& n, ValueNames& names) {
  Json j = Json::object().add("kind", Json::string(n.kind().qualified()));
  if (n.op()) j.add("op", Json::string(n.op()->name));
  Json outputs = Json::array();
  for (const Value* v : n.outputs()) outputs.push(typed_value_json(v, names));
  Json inputs = names_json(n.inputs(), names);  // after the outputs: Note [Dump value names]
  j.add("inputs", std::move(inputs)).add("outputs", std::move(outputs));
  if (!n.attrs().empty()) {
    Json attrs = Json::object();
    for (const auto& [name, value] : n.attrs())
      attrs.add(std::string(name.name()), attr_json(value));
    j.add("attributes", std::move(attrs));
  }
  if (!n.blocks().empty()) {
    Json blocks = Json::array();
    for (const Block* b : n.blocks()) {
      Json bj = Json::object();
      Json bin = Json::array();
      for (const Value* v : b->inputs()) bin.push(typed_value_json(v, names));
      bj.add("inputs", std::move(bin));
      bj.add("nodes", block_nodes_json(*b, names));
      bj.add("outputs", names_json(b->outputs(), names));
      blocks.push(std::move(bj));
    }
    j.add("blocks", std::move(blocks));
  }
  if (const SourceRange& r = n.source_range(); r.valid())
    j.add("source", Json::object()
                        .add("file", Json::string(r.filename()))
                        .add("line", Json::integer(r.start_line()))
                        .add("col", Json::integer(r.start_col())));
  return j;
}

Json block_nodes_json(const Block& b, ValueNames& names) {
  Json a = Json::array();
  for (const Node* n : b) a.push(node_json(*n, names));
  return a;
}

Json graph_json_doc(const Graph& g) {
  ValueNames names;
  Json inputs = Json::array();
  for (const Value* v : g.inputs()) inputs.push(typed_value_json(v, names));
  Json nodes = block_nodes_json(*g.block(), names);
  Json j = Json::object();
  j.add("inputs", std::move(inputs))
      .add("outputs", names_json(g.outputs(), names))
      .add("nodes", std::move(nodes));
  return j;
}

// ---- DOT ---------------------------------------------------------------------------------------

// Text inside a record label: the record syntax characters escaped.
std::string record_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (std::string_view("{}|<>\"\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

std::string attr_text(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::String:
      return Json::quote(v.to_string_ref());
    case IValue::Tag::Bool:
      return v.to_bool() ? "1" : "0";
    case IValue::Tag::ScalarType:
      return std::to_string(torch_dtype_code(v.to_scalar_type()));
    default: {
      std::string s;
      attr_json(v).print(s, 0);
      return s;
    }
  }
}

class DotWriter {
 public:
  explicit DotWriter(std::string& out) : out_(out) {}

  void graph(const Graph& g, std::string_view name) {
    out_ += "digraph " + quoted(name) + " {\n";
    out_ += "  graph [fontname=\"monospace\", label=" + quoted(name) + ", labelloc=t];\n";
    out_ += "  node [shape=record, fontname=\"monospace\", fontsize=10];\n";
    out_ += "  edge [fontname=\"monospace\", fontsize=9];\n";
    block(*g.block(), "graph", 1);
    out_ += edges_;
    out_ += "}\n";
  }

 private:
  std::string id(const Node* n) {
    auto it = ids_.find(n);
    if (it == ids_.end()) it = ids_.emplace(n, "n" + std::to_string(ids_.size())).first;
    return it->second;
  }

  // A record: the title, the attributes, then the outputs as ports o0, o1, ...
  void record(const Node* n, const std::string& title, int indent) {
    std::string label = record_escape(title);
    if (!n->attrs().empty()) {
      std::string attrs;
      for (const auto& [k, v] : n->attrs())
        attrs += (attrs.empty() ? "" : "\n") + std::string(k.name()) + "=" + attr_text(v);
      label += "|" + record_escape(attrs);
    }
    if (!n->outputs().empty()) {
      label += "|{";
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        const Value* v = n->outputs()[i];
        label += fmt::format("{}<o{}> {}", i ? "|" : "", i,
                             record_escape(names_(v) + " : " + v->type()->str()));
      }
      label += "}";
    }
    out_ += fmt::format("{}{} [label=\"{{{}}}\"", std::string(indent * 2, ' '), id(n), label);
    if (n->source_range().valid()) out_ += ", tooltip=" + quoted(n->source_range().location_str());
    out_ += "];\n";
  }

  void uses(const Node* n) {
    for (const Value* v : n->inputs())
      edges_ += fmt::format("  {}:o{} -> {} [label={}];\n", id(v->node()), v->offset(), id(n),
                            quoted(names_(v)));
  }

  void block(const Block& b, const std::string& title, int indent) {
    record(b.param_node(), title + " inputs", indent);
    for (const Node* n : b) {
      record(n, std::string(n->kind().qualified()), indent);  // outputs named before inputs
      uses(n);
      for (size_t i = 0; i < n->blocks().size(); ++i) {
        const Block& sub = *n->blocks()[i];
        const std::string pad(indent * 2, ' ');
        out_ += fmt::format("{}subgraph cluster_{} {{\n", pad, clusters_++);
        out_ += fmt::format("{}  label={}; style=dashed;\n", pad,
                            quoted(fmt::format("block{} of {}", i, n->kind().qualified())));
        block(sub, fmt::format("block{}", i), indent + 1);
        out_ += pad + "}\n";
        edges_ += fmt::format("  {} -> {} [style=dotted, arrowhead=none];\n", id(n),
                              id(sub.param_node()));
      }
    }
    record(b.return_node(), indent == 1 ? "return" : title + " outputs", indent);
    uses(b.return_node());
  }

  std::string& out_;
  std::string edges_;
  ValueNames names_;
  std::unordered_map<const Node*, std::string> ids_;
  int clusters_ = 0;
};

}  // namespace

Json graph_json(const Graph& g) {
  return graph_json_doc(g);
}

std::string graph_to_json(const Graph& g) {
  return graph_json(g).str();
}

std::string graph_to_dot(const Graph& g, std::string_view name) {
  std::string out;
  DotWriter(out).graph(g, name);
  return out;
}

}  // namespace ampjit
