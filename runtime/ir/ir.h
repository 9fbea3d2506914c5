// The graph IR both frontends emit: a Graph owns Blocks, Nodes and Values; nodes are in SSA form,
// with nested blocks for control flow, as in TorchScript (PyTorch's ir.h) and MLIR.
//
//   graph(%x : Tensor, %n : int):
//     %1 : int = prim::Constant[value=1]()
//     %y : Tensor = aten::add(%x, %x, %1)   # f.py:3:8
//     return (%y)
//
// A node's kind is an interned Symbol; attributes are (Symbol, IValue) pairs; every node has a
// source range. A block starts with a prim::Param node (its outputs are the block's inputs) and
// ends with a prim::Return node (its inputs are the block's outputs). Values know their uses, so
// passes can replace all uses of a value in O(uses).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/ir/source_range.h"
#include "runtime/ir/symbol.h"
#include "runtime/ivalue.h"
#include "runtime/op_table.h"
#include "runtime/type.h"

namespace ampjit {

class Graph;
class Block;
class Node;

struct Use {
  Node* user;
  size_t offset;  // which input of `user`
  bool operator==(const Use& o) const { return user == o.user && offset == o.offset; }
};

class Value {
 public:
  Node* node() const { return node_; }  // the producer (prim::Param for block inputs)
  size_t offset() const { return offset_; }
  const TypePtr& type() const { return type_; }
  Value* set_type(TypePtr t) {
    type_ = std::move(t);
    return this;
  }
  size_t unique() const { return unique_; }
  const std::string& debug_name() const { return name_; }
  Value* set_debug_name(const std::string& name);  // made unique within the graph
  bool has_debug_name() const { return !name_.empty(); }
  const std::vector<Use>& uses() const { return uses_; }
  bool has_uses() const { return !uses_.empty(); }
  Graph* owning_graph() const;
  void replace_all_uses_with(Value* v);

 private:
  friend class Node;
  friend class Graph;
  friend class Block;
  Value(Node* n, size_t off, size_t unique) : node_(n), offset_(off), unique_(unique) {}
  Node* node_;
  size_t offset_;
  size_t unique_;
  TypePtr type_ = Type::tensor();
  std::string name_;
  std::vector<Use> uses_;
};

// A call a node was inlined from: the callee's name and the call's source range.
struct InlinedCall {
  std::string callee;
  SourceRange call_site;
};

class Node {
 public:
  Symbol kind() const { return kind_; }
  Graph* owning_graph() const { return graph_; }
  Block* owning_block() const { return block_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* input(size_t i = 0) const { return inputs_.at(i); }
  Value* output(size_t i = 0) const { return outputs_.at(i); }
  const std::vector<Block*>& blocks() const { return blocks_; }
  Node* next() const { return next_; }
  Node* prev() const { return prev_; }
  bool in_block_list() const { return next_ != nullptr; }

  Value* add_input(Value* v);
  void insert_input(size_t i, Value* v);
  void replace_input(size_t i, Value* v);
  void replace_input_with(Value* from, Value* to);  // every occurrence
  void remove_input(size_t i);
  void remove_all_inputs();
  Value* add_output();
  void erase_output(size_t i);  // the output must have no uses
  Block* add_block();

  // Attributes: `value` of prim::Constant, `name` of prim::GetAttr, autocast fields, ...
  bool has_attr(Symbol name) const;
  const IValue& attr(Symbol name) const;  // throws when absent
  Node* set_attr(Symbol name, IValue v);
  const std::vector<std::pair<Symbol, IValue>>& attrs() const { return attrs_; }

  const SourceRange& source_range() const { return range_; }
  Node* set_source_range(SourceRange r) {
    range_ = std::move(r);
    return this;
  }
  // The op-table entry this node calls (aten:: nodes resolved by schema), or nullptr.
  const OpEntry* op() const { return op_; }
  Node* set_op(const OpEntry* op) {
    op_ = op;
    return this;
  }
  // The calls this node was inlined from, innermost first (empty: written where it stands), as
  // TorchScript's inlined call stack: diagnostics name each call site (Note [One diagnostic
  // type]). Never printed; survives copies.
  const std::vector<InlinedCall>& inlined_calls() const { return inlined_calls_; }
  // Records that the node now stands where `call` was (an outer call than those recorded).
  void add_inlined_call(InlinedCall call) { inlined_calls_.push_back(std::move(call)); }

  // Metadata the tracer and interop layer attach (e.g. the autocast state a node was traced under).
  // Never printed; survives copies within a graph.
  std::vector<std::pair<Symbol, IValue>>& meta() { return meta_; }
  const std::vector<std::pair<Symbol, IValue>>& meta() const { return meta_; }
  const IValue* find_meta(Symbol key) const;

  // List surgery. The node must not be in a list when inserted.
  Node* insert_before(Node* n);
  Node* insert_after(Node* n);
  void move_before(Node* n);
  void move_after(Node* n);
  // Removes the node from its block and frees it. Its outputs must have no uses.
  void destroy();
  bool is_before(const Node* other) const;  // same block

 private:
  friend class Graph;
  friend class Block;
  Node(Graph* g, Symbol kind) : graph_(g), kind_(kind) {}
  void remove_from_list();
  void drop_use(size_t i);

  Graph* graph_;
  Symbol kind_;
  Block* block_ = nullptr;
  Node* next_ = nullptr;
  Node* prev_ = nullptr;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Block*> blocks_;
  std::vector<std::pair<Symbol, IValue>> attrs_;
  std::vector<std::pair<Symbol, IValue>> meta_;
  std::vector<InlinedCall> inlined_calls_;
  SourceRange range_;
  const OpEntry* op_ = nullptr;
  size_t topo_ = 0;  // position key within the block (for is_before)
};

class Block {
 public:
  Graph* owning_graph() const { return graph_; }
  Node* owning_node() const { return owning_node_; }  // nullptr for the top block
  Node* param_node() const { return param_; }
  Node* return_node() const { return return_; }
  const std::vector<Value*>& inputs() const { return param_->outputs(); }
  const std::vector<Value*>& outputs() const { return return_->inputs(); }
  Value* add_input(const std::string& name = "");
  Value* insert_input(size_t i, const std::string& name = "");
  void erase_input(size_t i);
  size_t register_output(Value* v);
  void erase_output(size_t i);

  // Iteration over the nodes between the param and return nodes.
  class Iterator {
   public:
    explicit Iterator(Node* n) : n_(n) {}
    Node* operator*() const { return n_; }
    Iterator& operator++() {
      n_ = n_->next();
      return *this;
    }
    bool operator!=(const Iterator& o) const { return n_ != o.n_; }

   private:
    Node* n_;
  };
  Iterator begin() const { return Iterator(param_->next()); }
  Iterator end() const { return Iterator(return_); }
  std::vector<Node*> nodes() const;  // a snapshot, safe to mutate while walking

  void append(Node* n) { n->insert_before(return_); }
  void prepend(Node* n) { n->insert_after(param_); }

 private:
  friend class Graph;
  friend class Node;
  Block(Graph* g, Node* owner);
  Graph* graph_;
  Node* owning_node_;
  Node* param_;
  Node* return_;
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Block* block() const { return block_; }
  const std::vector<Value*>& inputs() const { return block_->inputs(); }
  const std::vector<Value*>& outputs() const { return block_->outputs(); }
  Value* add_input(const std::string& name = "") { return block_->add_input(name); }
  size_t register_output(Value* v) { return block_->register_output(v); }

  // A new node, not yet in any block.
  Node* create(Symbol kind, const std::vector<Value*>& inputs = {}, size_t num_outputs = 1);
  // A node calling an op-table entry; outputs typed from its schema.
  Node* create_op(const OpEntry& op, const std::vector<Value*>& inputs);
  Node* create_constant(const IValue& v);
  Node* create_tuple(const std::vector<Value*>& values);
  Node* create_list(TypePtr elem_type, const std::vector<Value*>& values);

  // Insert point: where insert() puts new nodes (before `n`, or at the end of a block).
  void set_insert_point(Node* n) { insert_before_ = n; }
  void set_insert_point(Block* b) { insert_before_ = b->return_node(); }
  Node* insert_point() const { return insert_before_; }
  Node* insert(Node* n) { return n->insert_before(insert_before_); }
  // insert(create_op(...)).output(): the common "emit one op" step.
  Value* insert_op(const OpEntry& op, const std::vector<Value*>& inputs, const SourceRange& r = {});
  Value* insert_constant(const IValue& v, const SourceRange& r = {});

  // Copies another graph's nodes into this one at the insert point, mapping its inputs to `args`;
  // returns the values its outputs map to (used by inlining).
  std::vector<Value*> insert_graph(const Graph& callee, const std::vector<Value*>& args);
  std::unique_ptr<Graph> copy() const;

  // Checks structure, SSA dominance and types; throws Error describing the first violation.
  void verify() const;
  std::string str(bool print_source_ranges = true) const;  // the canonical text form

  size_t num_nodes() const { return all_nodes_.size(); }

 private:
  friend class Node;
  friend class Value;
  friend class Block;
  Value* new_value(Node* n, size_t offset);
  Block* new_block(Node* owner);
  void free_node(Node* n);
  std::string unique_name(const std::string& base, const Value* v);

  Block* block_;
  Node* insert_before_;
  std::unordered_set<Node*> all_nodes_;
  std::vector<std::unique_ptr<Value>> all_values_;
  std::vector<std::unique_ptr<Block>> all_blocks_;
  std::unordered_set<std::string> used_names_;
  std::unordered_map<std::string, int> next_suffix_;
  size_t next_unique_ = 0;
};

// Parses the canonical text form (Graph::str) back into a graph.
std::unique_ptr<Graph> parse_graph(std::string_view text);

}  // namespace ampjit
