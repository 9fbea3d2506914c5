// The graph rendered for tools: as JSON and as a Graphviz DOT digraph (the text form, TorchScript's
// graph format, is ir_printer.cpp's Graph::str). Values are named as the text form names them
// (Note [Dump value names] in graph_render.cpp), so %3 in one rendering is %3 in the others.
//
//   std::string dot = graph_to_dot(g, "f: after cse");   // `dot -Tpng` draws it
//   std::string json = graph_to_json(g);
#pragma once
#include <string>
#include <string_view>

#include "runtime/ir/ir.h"
#include "runtime/ir/json.h"

namespace ampjit {

// The graph as a JSON object: inputs and outputs ({"name", "type"} / names), nodes with kind,
// inputs, outputs, attributes, blocks and source location.
Json graph_json(const Graph& g);
std::string graph_to_json(const Graph& g);  // graph_json(g), printed

// The graph as a DOT digraph: nodes as records (kind, attributes, typed outputs as ports), one
// edge per use of a value, one cluster per block; `name` labels the graph.
std::string graph_to_dot(const Graph& g, std::string_view name);

}  // namespace ampjit
