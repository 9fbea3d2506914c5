// Graph, Block, Node and Value (see ir.h).
#include "runtime/ir/ir.h"

#include <algorithm>
#include <unordered_map>

namespace ampjit {

// ---- Value ------------------------------------------------------------------------------------

Graph* Value::owning_graph() const {
  return node_->owning_graph();
}

Value* Value::set_debug_name(const std::string& name) {
  if (name.empty()) {
    name_.clear();
    return this;
  }
  name_ = owning_graph()->unique_name(name, this);
  return this;
}

void Value::replace_all_uses_with(Value* v) {
  if (v == this) return;
  const std::vector<Use> uses = uses_;
  for (const Use& u : uses) u.user->replace_input(u.offset, v);
}

// ---- Node -------------------------------------------------------------------------------------

Value* Node::add_input(Value* v) {
  v->uses_.push_back({this, inputs_.size()});
  inputs_.push_back(v);
  return v;
}

void Node::insert_input(size_t i, Value* v) {
  for (size_t k = i; k < inputs_.size(); ++k) {
    for (Use& u : inputs_[k]->uses_)
      if (u.user == this && u.offset == k) ++u.offset;
  }
  inputs_.insert(inputs_.begin() + static_cast<ptrdiff_t>(i), v);
  v->uses_.push_back({this, i});
}

void Node::drop_use(size_t i) {
  auto& uses = inputs_[i]->uses_;
  auto it = std::find(uses.begin(), uses.end(), Use{this, i});
  if (it != uses.end()) uses.erase(it);
}

void Node::replace_input(size_t i, Value* v) {
  drop_use(i);
  inputs_[i] = v;
  v->uses_.push_back({this, i});
}

void Node::replace_input_with(Value* from, Value* to) {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i] == from) replace_input(i, to);
}

void Node::remove_input(size_t i) {
  drop_use(i);
  for (size_t k = i + 1; k < inputs_.size(); ++k) {
    for (Use& u : inputs_[k]->uses_)
      if (u.user == this && u.offset == k) --u.offset;
  }
  inputs_.erase(inputs_.begin() + static_cast<ptrdiff_t>(i));
}

void Node::remove_all_inputs() {
  for (size_t i = 0; i < inputs_.size(); ++i) drop_use(i);
  inputs_.clear();
}

Value* Node::add_output() {
  Value* v = graph_->new_value(this, outputs_.size());
  outputs_.push_back(v);
  return v;
}

void Node::erase_output(size_t i) {
  AMPJIT_CHECK(!outputs_[i]->has_uses(), "erase_output: output {} of {} still has uses", i,
               kind_.qualified());
  outputs_.erase(outputs_.begin() + static_cast<ptrdiff_t>(i));
  for (size_t k = i; k < outputs_.size(); ++k) outputs_[k]->offset_ = k;
}

Block* Node::add_block() {
  Block* b = graph_->new_block(this);
  blocks_.push_back(b);
  return b;
}

bool Node::has_attr(Symbol name) const {
  for (const auto& [k, v] : attrs_)
    if (k == name) return true;
  return false;
}

const IValue& Node::attr(Symbol name) const {
  for (const auto& [k, v] : attrs_)
    if (k == name) return v;
  throw Error(fmt::format("{} has no attribute '{}'", kind_.qualified(), name.qualified()));
}

Node* Node::set_attr(Symbol name, IValue v) {
  for (auto& [k, val] : attrs_) {
    if (k == name) {
      val = std::move(v);
      return this;
    }
  }
  attrs_.emplace_back(name, std::move(v));
  return this;
}

const IValue* Node::find_meta(Symbol key) const {
  for (const auto& [k, v] : meta_)
    if (k == key) return &v;
  return nullptr;
}

Node* Node::insert_before(Node* n) {
  AMPJIT_CHECK(!in_block_list(), "insert_before: node {} is already in a block", kind_.qualified());
  block_ = n->block_;
  next_ = n;
  prev_ = n->prev_;
  n->prev_->next_ = this;
  n->prev_ = this;
  return this;
}

Node* Node::insert_after(Node* n) {
  AMPJIT_CHECK(!in_block_list(), "insert_after: node {} is already in a block", kind_.qualified());
  return insert_before(n->next_);
}

void Node::remove_from_list() {
  if (!in_block_list()) return;
  prev_->next_ = next_;
  next_->prev_ = prev_;
  next_ = prev_ = nullptr;
  block_ = nullptr;
}

void Node::move_before(Node* n) {
  remove_from_list();
  insert_before(n);
}

void Node::move_after(Node* n) {
  remove_from_list();
  insert_after(n);
}

bool Node::is_before(const Node* other) const {
  for (const Node* n = next_; n; n = n->next_)
    if (n == other) return true;
  return false;
}

void Node::destroy() {
  for (Value* o : outputs_) {
    AMPJIT_CHECK(!o->has_uses(), "destroy: output %{} of {} still has {} use(s)", o->unique(),
                 kind_.qualified(), o->uses().size());
  }
  // Inner blocks go first, last node first, so every destroyed node's outputs are already unused.
  for (Block* b : blocks_) {
    b->return_->remove_all_inputs();
    std::vector<Node*> inner = b->nodes();
    for (auto it = inner.rbegin(); it != inner.rend(); ++it) (*it)->destroy();
    graph_->free_node(b->param_);
    graph_->free_node(b->return_);
  }
  remove_all_inputs();
  remove_from_list();
  graph_->free_node(this);
}

// ---- Block ------------------------------------------------------------------------------------

Block::Block(Graph* g, Node* owner) : graph_(g), owning_node_(owner) {
  param_ = g->create(sym::prim::Param, {}, 0);
  return_ = g->create(sym::prim::Return, {}, 0);
  param_->block_ = this;
  return_->block_ = this;
  // The list is circular through the sentinels: param <-> ... <-> return.
  param_->next_ = return_;
  return_->prev_ = param_;
  param_->prev_ = return_;
  return_->next_ = param_;
}

Value* Block::add_input(const std::string& name) {
  Value* v = param_->add_output();
  if (!name.empty()) v->set_debug_name(name);
  return v;
}

Value* Block::insert_input(size_t i, const std::string& name) {
  Value* v = graph_->new_value(param_, i);
  param_->outputs_.insert(param_->outputs_.begin() + static_cast<ptrdiff_t>(i), v);
  for (size_t k = 0; k < param_->outputs_.size(); ++k) param_->outputs_[k]->offset_ = k;
  if (!name.empty()) v->set_debug_name(name);
  return v;
}

void Block::erase_input(size_t i) {
  param_->erase_output(i);
}

size_t Block::register_output(Value* v) {
  return_->add_input(v);
  return return_->inputs().size() - 1;
}

void Block::erase_output(size_t i) {
  return_->remove_input(i);
}

std::vector<Node*> Block::nodes() const {
  std::vector<Node*> out;
  for (Node* n : *this) out.push_back(n);
  return out;
}

// ---- Graph ------------------------------------------------------------------------------------

Graph::Graph() {
  block_ = new_block(nullptr);
  insert_before_ = block_->return_node();
}

Graph::~Graph() {
  for (Node* n : all_nodes_) delete n;
}

Value* Graph::new_value(Node* n, size_t offset) {
  all_values_.push_back(std::unique_ptr<Value>(new Value(n, offset, next_unique_++)));
  return all_values_.back().get();
}

Block* Graph::new_block(Node* owner) {
  all_blocks_.push_back(std::unique_ptr<Block>(new Block(this, owner)));
  return all_blocks_.back().get();
}

void Graph::free_node(Node* n) {
  all_nodes_.erase(n);
  delete n;
}

std::string Graph::unique_name(const std::string& base, const Value* v) {
  (void)v;
  auto all_digits = [](const std::string& x) {
    return !x.empty() && std::all_of(x.begin(), x.end(), ::isdigit);
  };
  // An unused name is kept as is; otherwise "x" becomes "x.1", "x.2", ... (torch's scheme).
  if (!used_names_.count(base) && !all_digits(base)) {
    used_names_.insert(base);
    return base;
  }
  std::string stem = base;
  const size_t dot = stem.rfind('.');
  if (dot != std::string::npos && dot > 0 && all_digits(stem.substr(dot + 1)))
    stem = stem.substr(0, dot);
  // The next suffix to try per stem, so naming a value "x" n times costs O(n), not O(n^2).
  int& next = next_suffix_[stem];
  std::string name = stem;
  for (int k = std::max(next, 1); used_names_.count(name) || all_digits(name); ++k) {
    name = stem + "." + std::to_string(k);
    next = k + 1;
  }
  used_names_.insert(name);
  return name;
}

Node* Graph::create(Symbol kind, const std::vector<Value*>& inputs, size_t num_outputs) {
  Node* n = new Node(this, kind);
  all_nodes_.insert(n);
  for (Value* v : inputs) n->add_input(v);
  for (size_t i = 0; i < num_outputs; ++i) n->add_output();
  return n;
}

Node* Graph::create_op(const OpEntry& op, const std::vector<Value*>& inputs) {
  Node* n = create(Symbol::intern(op.base_name), inputs, op.schema.returns.size());
  n->set_op(&op);
  for (size_t i = 0; i < op.schema.returns.size(); ++i)
    n->output(i)->set_type(op.schema.returns[i].type);
  return n;
}

namespace {
TypePtr type_of_constant(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None:
      return Type::none();
    case IValue::Tag::Tensor: {
      const TensorImpl* t = v.tensor_impl();
      return Type::tensor_of(t->dtype, std::vector<int64_t>(t->sizes.begin(), t->sizes.end()),
                             t->device);
    }
    case IValue::Tag::Double:
      return Type::float_();
    case IValue::Tag::Int:
      return Type::int_();
    case IValue::Tag::Bool:
      return Type::bool_();
    case IValue::Tag::String:
      return Type::str_();
    case IValue::Tag::ScalarType:
      return Type::int_();  // TorchScript: a dtype is an int
    case IValue::Tag::Device:
      return Type::device();
    case IValue::Tag::List: {
      const auto& el = v.list_elems();
      return Type::list(el.empty() ? Type::int_() : type_of_constant(el[0])->unrefined());
    }
    case IValue::Tag::Tuple: {
      std::vector<TypePtr> ts;
      for (const auto& e : v.tuple_elems()) ts.push_back(type_of_constant(e));
      return Type::tuple(std::move(ts));
    }
    case IValue::Tag::Dict: {
      const auto& items = v.dict_obj()->items();
      if (items.empty()) return Type::dict(Type::str_(), Type::tensor());
      return Type::dict(type_of_constant(items[0].first)->unrefined(),
                        type_of_constant(items[0].second)->unrefined());
    }
    case IValue::Tag::Object:
      return Type::named(TypeKind::Object, v.object()->type_name());
  }
  return Type::any();
}
}  // namespace

Node* Graph::create_constant(const IValue& v) {
  Node* n = create(sym::prim::Constant, {}, 1);
  if (!v.is_none()) n->set_attr(sym::attr::value, v);
  n->output()->set_type(type_of_constant(v));
  return n;
}

Node* Graph::create_tuple(const std::vector<Value*>& values) {
  Node* n = create(sym::prim::TupleConstruct, values, 1);
  std::vector<TypePtr> ts;
  for (Value* v : values) ts.push_back(v->type());
  n->output()->set_type(Type::tuple(std::move(ts)));
  return n;
}

Node* Graph::create_list(TypePtr elem_type, const std::vector<Value*>& values) {
  Node* n = create(sym::prim::ListConstruct, values, 1);
  n->output()->set_type(Type::list(std::move(elem_type)));
  return n;
}

Value* Graph::insert_op(const OpEntry& op, const std::vector<Value*>& inputs,
                        const SourceRange& r) {
  Node* n = insert(create_op(op, inputs));
  n->set_source_range(r);
  return n->output();
}

Value* Graph::insert_constant(const IValue& v, const SourceRange& r) {
  Node* n = insert(create_constant(v));
  n->set_source_range(r);
  return n->output();
}

namespace {
void clone_block_into(const Block& src, Block* dst, Graph& g,
                      std::unordered_map<const Value*, Value*>& env, Node* insert_before) {
  for (Node* n : src) {
    Node* c = g.create(n->kind(), {}, 0);
    for (Value* in : n->inputs()) {
      auto it = env.find(in);
      AMPJIT_CHECK(it != env.end(), "insert_graph: value %{} used before its definition",
                   in->unique());
      c->add_input(it->second);
    }
    for (Value* o : n->outputs()) {
      Value* co = c->add_output();
      co->set_type(o->type());
      if (o->has_debug_name()) co->set_debug_name(o->debug_name());
      env[o] = co;
    }
    for (const auto& [k, v] : n->attrs()) c->set_attr(k, v);
    c->meta() = n->meta();
    for (const InlinedCall& call : n->inlined_calls()) c->add_inlined_call(call);
    c->set_source_range(n->source_range());
    c->set_op(n->op());
    if (insert_before)
      c->insert_before(insert_before);
    else
      dst->append(c);
    for (Block* b : n->blocks()) {
      Block* cb = c->add_block();
      for (Value* in : b->inputs()) {
        Value* ci = cb->add_input(in->has_debug_name() ? in->debug_name() : "");
        ci->set_type(in->type());
        env[in] = ci;
      }
      clone_block_into(*b, cb, g, env, nullptr);
      for (Value* out : b->outputs()) cb->register_output(env.at(out));
    }
  }
}
}  // namespace

std::vector<Value*> Graph::insert_graph(const Graph& callee, const std::vector<Value*>& args) {
  AMPJIT_CHECK(args.size() == callee.inputs().size(), "insert_graph: {} arguments for {} inputs",
               args.size(), callee.inputs().size());
  std::unordered_map<const Value*, Value*> env;
  for (size_t i = 0; i < args.size(); ++i) env[callee.inputs()[i]] = args[i];
  clone_block_into(*callee.block(), insert_before_->owning_block(), *this, env, insert_before_);
  std::vector<Value*> outs;
  for (Value* o : callee.outputs()) outs.push_back(env.at(o));
  return outs;
}

std::unique_ptr<Graph> Graph::copy() const {
  auto g = std::make_unique<Graph>();
  std::vector<Value*> args;
  for (Value* in : inputs()) {
    Value* v = g->add_input(in->has_debug_name() ? in->debug_name() : "");
    v->set_type(in->type());
    args.push_back(v);
  }
  for (Value* o : g->insert_graph(*this, args)) g->register_output(o);
  return g;
}

}  // namespace ampjit
