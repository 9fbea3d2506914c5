// Compiling graphs to instructions, and the run loop (see interpreter.h).
#include "runtime/interpreter.h"

#include <mutex>
#include <unordered_map>

#include "runtime/autocast/autocast_state.h"
#include "runtime/dispatcher.h"
#include "runtime/module_object.h"
#include "runtime/script_error.h"

namespace ampjit {

namespace {
std::mutex g_handlers_mu;
std::unordered_map<uint32_t, PrimHandler>& handlers() {
  static std::unordered_map<uint32_t, PrimHandler> h;
  return h;
}
PrimHandler find_handler(Symbol k) {
  std::lock_guard<std::mutex> lock(g_handlers_mu);
  auto it = handlers().find(k.id());
  return it == handlers().end() ? nullptr : it->second;
}
}  // namespace

void register_prim_handler(Symbol kind, PrimHandler handler) {
  std::lock_guard<std::mutex> lock(g_handlers_mu);
  handlers()[kind.id()] = handler;
}

// ---- Compilation ------------------------------------------------------------------------------

Code::Code(const Graph& graph, AutocastSemantics semantics) : semantics_(semantics) {
  for (const Value* v : graph.inputs()) input_regs_.push_back(reg(v));
  emit_block(*graph.block());
  Instruction ret{Instruction::kReturn};
  ret.args = operands(graph.outputs());
  ret.nargs = static_cast<uint32_t>(graph.outputs().size());
  instrs_.push_back(ret);
}

uint32_t Code::reg(const Value* v) {
  auto it = regs_.find(v);
  if (it != regs_.end()) return it->second;
  const uint32_t r = static_cast<uint32_t>(num_regs_++);
  regs_.emplace(v, r);
  return r;
}

uint32_t Code::operands(const std::vector<Value*>& vs) {
  const uint32_t start = static_cast<uint32_t>(operand_regs_.size());
  for (const Value* v : vs) operand_regs_.push_back(reg(v));
  return start;
}

void Code::emit_block(const Block& b) {
  for (const Node* n : b) emit_node(*n);
}

void Code::emit_moves(const std::vector<Value*>& from, const std::vector<Value*>& to) {
  // Parallel assignment through fresh temporaries, so swaps (a, b) <- (b, a) are safe.
  std::vector<uint32_t> tmp;
  for (const Value* f : from) {
    Instruction m{Instruction::kMove};
    m.a = static_cast<uint32_t>(num_regs_++);
    m.b = reg(f);
    tmp.push_back(m.a);
    instrs_.push_back(m);
  }
  for (size_t i = 0; i < to.size(); ++i) {
    Instruction m{Instruction::kMove};
    m.a = reg(to[i]);
    m.b = tmp[i];
    instrs_.push_back(m);
  }
}

void Code::emit_node(const Node& n) {
  const Symbol k = n.kind();
  Instruction ins{Instruction::kOp};
  ins.node = &n;
  ins.args = operands(n.inputs());
  ins.nargs = static_cast<uint32_t>(n.inputs().size());
  ins.outs = operands(n.outputs());
  ins.nouts = static_cast<uint32_t>(n.outputs().size());
  if (n.op()) {
    ins.entry = n.op();
    instrs_.push_back(ins);
    return;
  }
  if (k == sym::prim::Constant) {
    ins.op = Instruction::kConst;
    ins.a = reg(n.output());
    ins.b = static_cast<uint32_t>(constants_.size());
    constants_.push_back(n.has_attr(sym::attr::value) ? n.attr(sym::attr::value) : IValue());
  } else if (k == sym::prim::TupleConstruct) {
    ins.op = Instruction::kTuple;
  } else if (k == sym::prim::ListConstruct) {
    ins.op = Instruction::kList;
  } else if (k == sym::prim::TupleUnpack || k == sym::prim::ListUnpack) {
    ins.op = Instruction::kUnpack;
    ins.a = reg(n.input());
  } else if (k == sym::prim::TupleIndex) {
    ins.op = Instruction::kTupleIndex;
    ins.a = reg(n.input(0));
    ins.b = reg(n.input(1));
  } else if (k == sym::prim::GetAttr) {
    ins.op = Instruction::kGetAttr;
    ins.a = reg(n.input());
    ins.b = static_cast<uint32_t>(constants_.size());
    constants_.push_back(n.attr(sym::attr::name));
  } else if (k == sym::prim::SetAttr) {
    ins.op = Instruction::kSetAttr;
    ins.a = reg(n.input(0));
    ins.b = static_cast<uint32_t>(constants_.size());
    ins.c = reg(n.input(1));
    constants_.push_back(n.attr(sym::attr::name));
  } else if (k == sym::prim::CreateObject) {
    // The class is the output's type: %ac : __torch__.torch.amp.autocast_mode.autocast =
    // prim::CreateObject()
    const Type& t = *n.output()->type();
    AMPJIT_CHECK(t.kind() == TypeKind::Object,
                 "prim::CreateObject: its output type {} is not a class{}", t.str(),
                 n.source_range().valid() ? " at " + n.source_range().location_str() : "");
    ins.op = Instruction::kCreateObject;
    ins.b = static_cast<uint32_t>(constants_.size());
    constants_.push_back(IValue(t.name()));
  } else if (k == sym::prim::RaiseException) {
    ins.op = Instruction::kRaise;
    ins.a = reg(n.input(0));
  } else if (k == sym::prim::CallFunction) {
    ins.op = Instruction::kCall;
    const IValue& f = n.attr(sym::attr::value);
    auto* fo = dynamic_cast<FunctionObject*>(f.object());
    AMPJIT_CHECK(fo, "prim::CallFunction: its `value` attribute is not a function");
    ins.fn = fo->fn.get();
    constants_.push_back(f);  // keeps the callee alive as long as this code
  } else if (k == sym::prim::If) {
    // cond; JumpIfFalse else; then-block; moves; Jump end; else: else-block; moves; end:
    Instruction jf{Instruction::kJumpIfFalse};
    jf.a = reg(n.input());
    const size_t jf_at = instrs_.size();
    instrs_.push_back(jf);
    emit_block(*n.blocks()[0]);
    emit_moves(n.blocks()[0]->outputs(), n.outputs());
    const size_t j_at = instrs_.size();
    instrs_.push_back(Instruction{Instruction::kJump});
    instrs_[jf_at].b = static_cast<uint32_t>(instrs_.size());
    emit_block(*n.blocks()[1]);
    emit_moves(n.blocks()[1]->outputs(), n.outputs());
    instrs_[j_at].b = static_cast<uint32_t>(instrs_.size());
    return;
  } else if (k == sym::prim::Loop) {
    // i = 0; carried = inits; cond = init_cond
    // top: LoopCheck(i < max && cond) else -> exit; body; (cond, carried) = body outputs;
    //      i++; jump top
    const Block& body = *n.blocks()[0];
    const uint32_t i_reg = reg(body.inputs()[0]);
    Instruction zero{Instruction::kConst};
    zero.a = i_reg;
    zero.b = static_cast<uint32_t>(constants_.size());
    constants_.push_back(IValue(int64_t{0}));
    instrs_.push_back(zero);
    const uint32_t cond_reg = static_cast<uint32_t>(num_regs_++);
    Instruction c0{Instruction::kMove};
    c0.a = cond_reg;
    c0.b = reg(n.input(1));
    instrs_.push_back(c0);
    std::vector<Value*> carried_init(n.inputs().begin() + 2, n.inputs().end());
    std::vector<Value*> carried_params(body.inputs().begin() + 1, body.inputs().end());
    emit_moves(carried_init, carried_params);
    const size_t top = instrs_.size();
    Instruction check{Instruction::kLoopCheck};
    check.a = i_reg;
    check.b = reg(n.input(0));
    check.c = cond_reg;
    instrs_.push_back(check);
    emit_block(body);
    std::vector<Value*> outs(body.outputs().begin() + 1, body.outputs().end());
    Instruction cm{Instruction::kMove};
    cm.a = cond_reg;
    cm.b = reg(body.outputs()[0]);
    instrs_.push_back(cm);
    emit_moves(outs, carried_params);
    Instruction inc{Instruction::kIncrement};
    inc.a = i_reg;
    instrs_.push_back(inc);
    Instruction back{Instruction::kJump};
    back.b = static_cast<uint32_t>(top);
    instrs_.push_back(back);
    instrs_[top].target = static_cast<uint32_t>(instrs_.size());
    // The loop's results are the carried values after the last iteration.
    std::vector<Value*> results(n.outputs().begin(), n.outputs().end());
    emit_moves(carried_params, results);
    return;
  } else if (k == sym::prim::AutocastRegion) {
    // Note [Autocast regions at run time]: enter; block; its outputs to the node's; leave.
    AMPJIT_CHECK(n.blocks().size() == 1 && n.blocks()[0]->inputs().empty() && n.inputs().empty() &&
                     n.blocks()[0]->outputs().size() == n.outputs().size(),
                 "prim::AutocastRegion{}: expected no inputs and one block without inputs yielding "
                 "one value per output",
                 n.source_range().valid() ? " at " + n.source_range().location_str() : "");
    Instruction enter{Instruction::kRegionEnter};
    enter.node = &n;
    enter.b = static_cast<uint32_t>(region_specs_.size());
    region_specs_.push_back(autocast_region_spec(n));
    instrs_.push_back(enter);
    emit_block(*n.blocks()[0]);
    emit_moves(n.blocks()[0]->outputs(), n.outputs());
    Instruction leave{Instruction::kRegionExit};
    leave.node = &n;
    instrs_.push_back(leave);
    return;
  } else if ((k == sym::prim::Enter || k == sym::prim::Exit) &&
             semantics_ == AutocastSemantics::Eager && n.inputs().size() == 1) {
    ins.op = k == sym::prim::Enter ? Instruction::kWithEnter : Instruction::kWithExit;
    ins.a = reg(n.input(0));
    ins.handler = find_handler(k);  // for `with` on an object that is not autocast's
    AMPJIT_CHECK(ins.handler, "internal error: no handler for {}", k.qualified());
  } else if (PrimHandler h = find_handler(k)) {
    ins.op = Instruction::kNode;
    ins.handler = h;
  } else {
    throw Error(
        fmt::format("the interpreter cannot run node {}{}", k.qualified(),
                    n.source_range().valid() ? " at " + n.source_range().location_str() : ""));
  }
  instrs_.push_back(ins);
}

std::string Code::dump() const {
  static const char* names[] = {"OP",      "CONST",  "MOVE",    "JF",     "JMP",  "LOOP",
                                "INC",     "TUPLE",  "LIST",    "UNPACK", "TIDX", "GETATTR",
                                "SETATTR", "NEWOBJ", "CALL",    "RAISE",  "NODE", "REGION",
                                "ENDREG",  "WITH",   "ENDWITH", "RET"};
  std::string s;
  for (size_t i = 0; i < instrs_.size(); ++i) {
    const Instruction& in = instrs_[i];
    s += fmt::format("{:4} {:<6}", i, names[in.op]);
    if (in.entry) s += " " + in.entry->name;
    if (in.op == Instruction::kJump || in.op == Instruction::kJumpIfFalse)
      s += fmt::format(" -> {}", in.b);
    if (in.op == Instruction::kLoopCheck) s += fmt::format(" exit -> {}", in.target);
    s += "\n";
  }
  return s;
}

// ---- Execution ----------------------------------------------------------------------------

namespace {
// The graph node an error was raised in, and the calls it was inlined from, as notes on the error
// (Note [One diagnostic type]).
void note_node(Error& e, const Instruction& in) {
  if (!in.node) return;
  if (in.node->source_range().valid())
    e.add_note({std::string(in.node->kind().qualified()), in.node->source_range(),
                DiagnosticNote::Style::Context});
  for (const InlinedCall& call : in.node->inlined_calls())
    e.add_note({"called from", call.call_site});
}

template <typename E>
[[noreturn]] void raise_at(const Instruction& in, E e) {
  note_node(e, in);
  throw e;
}

// Rethrows the exception in flight with the node noted: an ampjit Error is the same object, so it
// keeps its class (an OutOfMemoryError stays one); another std::exception becomes an Error.
[[noreturn]] void rethrow_at(const Instruction& in) {
  try {
    throw;
  } catch (Error& e) {
    note_node(e, in);
    throw;
  } catch (const std::exception& e) {
    raise_at(in, Error(e.what()));
  }
}

// The autocast object of a `with` (prim::Enter / prim::Exit), or nullptr for any other value.
ModuleObject* autocast_object(const IValue& o) {
  auto* m = o.is_object() ? dynamic_cast<ModuleObject*>(o.object()) : nullptr;
  return m && is_autocast_class_name(m->class_name) ? m : nullptr;
}
}  // namespace

void Code::run(Stack& stack) const {
  AMPJIT_CHECK_T(TypeError, stack.size() == input_regs_.size(), "expected {} argument{} but got {}",
                 input_regs_.size(), input_regs_.size() == 1 ? "" : "s", stack.size());
  std::vector<IValue> regs(num_regs_);
  for (size_t i = 0; i < input_regs_.size(); ++i) regs[input_regs_[i]] = std::move(stack[i]);
  stack.clear();
  const uint32_t* ops = operand_regs_.data();
  Stack args;
  args.reserve(8);
  // The autocast regions this run has entered and not left; an exception leaving the run leaves
  // them (Note [Autocast regions at run time]).
  AutocastRegionStack regions;
  // A prim node with a registered handler (kNode; `with` on an object that is not autocast's).
  auto run_handler = [&](const Instruction& in) {
    Stack io;
    for (uint32_t i = 0; i < in.nargs; ++i) io.push_back(regs[ops[in.args + i]]);
    in.handler(*in.node, io);
    for (uint32_t i = 0; i < in.nouts; ++i) regs[ops[in.outs + i]] = std::move(io.at(i));
  };
  size_t pc = 0;
  for (;;) {
    const Instruction& in = instrs_[pc];
    switch (in.op) {
      case Instruction::kOp: {
        args.clear();
        for (uint32_t i = 0; i < in.nargs; ++i) args.push_back(regs[ops[in.args + i]]);
        try {
          dispatch(*in.entry, args);
        } catch (const std::exception&) {
          rethrow_at(in);
        }
        for (uint32_t i = 0; i < in.nouts; ++i) regs[ops[in.outs + i]] = std::move(args[i]);
        ++pc;
        break;
      }
      case Instruction::kConst:
        regs[in.a] = constants_[in.b];
        ++pc;
        break;
      case Instruction::kMove:
        regs[in.a] = regs[in.b];
        ++pc;
        break;
      case Instruction::kJumpIfFalse:
        pc = regs[in.a].to_bool() ? pc + 1 : in.b;
        break;
      case Instruction::kJump:
        pc = in.b;
        break;
      case Instruction::kLoopCheck:
        pc = (regs[in.a].to_int() < regs[in.b].to_int() && regs[in.c].to_bool()) ? pc + 1
                                                                                 : in.target;
        break;
      case Instruction::kIncrement:
        regs[in.a] = IValue(regs[in.a].to_int() + 1);
        ++pc;
        break;
      case Instruction::kTuple:
      case Instruction::kList: {
        std::vector<IValue> el;
        el.reserve(in.nargs);
        for (uint32_t i = 0; i < in.nargs; ++i) el.push_back(regs[ops[in.args + i]]);
        regs[ops[in.outs]] = in.op == Instruction::kTuple ? IValue::tuple(std::move(el))
                                                          : IValue::list(std::move(el));
        ++pc;
        break;
      }
      case Instruction::kUnpack: {
        const IValue& v = regs[in.a];
        const auto& el = v.is_tuple() ? v.tuple_elems() : v.list_elems();
        if (el.size() != in.nouts) {
          raise_at(in, ValueError(fmt::format("expected {} values to unpack, got {}", in.nouts,
                                              el.size())));
        }
        std::vector<IValue> copy = el;
        for (uint32_t i = 0; i < in.nouts; ++i) regs[ops[in.outs + i]] = std::move(copy[i]);
        ++pc;
        break;
      }
      case Instruction::kTupleIndex: {
        const IValue& t = regs[in.a];
        const auto& el = t.is_tuple() ? t.tuple_elems() : t.list_elems();
        int64_t i = regs[in.b].to_int();
        if (i < 0) i += static_cast<int64_t>(el.size());
        if (i < 0 || i >= static_cast<int64_t>(el.size()))
          raise_at(in, IndexError("tuple index out of range"));
        regs[ops[in.outs]] = el[static_cast<size_t>(i)];
        ++pc;
        break;
      }
      case Instruction::kGetAttr: {
        const IValue& o = regs[in.a];
        auto* m = o.is_object() ? dynamic_cast<const ModuleObject*>(o.object()) : nullptr;
        if (!m)
          raise_at(in, TypeError(fmt::format("prim::GetAttr on a value that is not a module ({})",
                                             o.repr())));
        try {
          regs[ops[in.outs]] = m->attr(constants_[in.b].to_string_ref());
        } catch (const std::exception&) {
          rethrow_at(in);
        }
        ++pc;
        break;
      }
      case Instruction::kSetAttr: {
        const IValue& o = regs[in.a];
        auto* m = o.is_object() ? dynamic_cast<ModuleObject*>(o.object()) : nullptr;
        if (!m)
          raise_at(in, TypeError(fmt::format("prim::SetAttr on a value that is not an object ({})",
                                             o.repr())));
        m->set_attr(constants_[in.b].to_string_ref(), regs[in.c]);
        ++pc;
        break;
      }
      case Instruction::kCreateObject:
        regs[ops[in.outs]] =
            IValue(Ref<ObjectBase>(new ModuleObject(constants_[in.b].to_string_ref())));
        ++pc;
        break;
      case Instruction::kCall: {
        Stack call_args;
        for (uint32_t i = 0; i < in.nargs; ++i) call_args.push_back(regs[ops[in.args + i]]);
        try {
          in.fn->run(call_args);
        } catch (const std::exception&) {
          rethrow_at(in);  // the call site joins the chain of notes, innermost first
        }
        for (uint32_t i = 0; i < in.nouts; ++i) regs[ops[in.outs + i]] = std::move(call_args[i]);
        ++pc;
        break;
      }
      case Instruction::kRaise: {
        const IValue& m = regs[in.a];
        throw ScriptError(m.is_string() ? m.to_string_ref() : m.repr(),
                          in.node ? in.node->source_range() : SourceRange());
      }
      case Instruction::kNode:
        run_handler(in);
        ++pc;
        break;
      case Instruction::kRegionEnter:
        try {
          regions.enter(region_specs_[in.b], in.node, in.node->source_range());
        } catch (const std::exception&) {
          rethrow_at(in);
        }
        ++pc;
        break;
      case Instruction::kRegionExit:
        regions.exit(in.node);
        ++pc;
        break;
      case Instruction::kWithEnter: {
        const IValue o = regs[in.a];
        ModuleObject* m = autocast_object(o);
        if (!m) {  // not an autocast object: whatever handles `with` on it
          run_handler(in);
          ++pc;
          break;
        }
        try {
          regions.enter(autocast_object_spec(*m, in.node->source_range()), m,
                        in.node->source_range());
        } catch (const std::exception&) {
          rethrow_at(in);
        }
        // __enter__ returns the object itself (`with autocast() as ac:`).
        for (uint32_t i = 0; i < in.nouts; ++i) regs[ops[in.outs + i]] = o;
        ++pc;
        break;
      }
      case Instruction::kWithExit: {
        ModuleObject* m = autocast_object(regs[in.a]);
        if (!m) {
          run_handler(in);
          ++pc;
          break;
        }
        regions.exit(m);
        for (uint32_t i = 0; i < in.nouts; ++i) regs[ops[in.outs + i]] = IValue();
        ++pc;
        break;
      }
      case Instruction::kReturn:
        // Copy, not move: one register may be returned more than once (`return (%x, %x)`).
        for (uint32_t i = 0; i < in.nargs; ++i) stack.push_back(regs[ops[in.args + i]]);
        return;
    }
  }
}

// ---- Objects in `with` statements -----------------------------------------------------------

namespace {
// Note [Autocast objects at run time]
// A script `with torch.autocast(...):` compiles to prim::Enter / prim::Exit on an autocast object
// (torch/csrc/jit/passes/autocast.cpp, parseAutocast). In torchscript semantics the object's
// __enter__ and __exit__ return at once when scripting: the JIT autocast pass alone gives the
// region its meaning, by inserting casts into the optimized graph. So at run time both do nothing
// and yield None: these handlers. (Code compiled for eager semantics does not use them: Enter/Exit
// become kWithEnter/kWithExit, Note [Autocast regions at run time] in
// runtime/autocast/autocast_regions.h.) `with` on any other object would call its methods, which
// ampjit's objects do not have.
void enter_or_exit(const Node& n, Stack& io) {
  const IValue& o = io.at(0);
  auto* m = o.is_object() ? dynamic_cast<const ModuleObject*>(o.object()) : nullptr;
  if (!m || !is_autocast_class_name(m->class_name)) {
    throw NotImplementedError(
        fmt::format("{}: `with` on a '{}' object is not supported (only autocast context managers)",
                    n.kind().qualified(), m ? m->class_name : o.tag_name()));
  }
  io.assign(n.outputs().size(), IValue());
}
const bool kEnterExitRegistered = [] {
  register_prim_handler(sym::prim::Enter, enter_or_exit);
  register_prim_handler(sym::prim::Exit, enter_or_exit);
  return true;
}();
}  // namespace

// ---- Function -------------------------------------------------------------------------------

namespace {
std::atomic<GraphOptimizer> g_optimizer{nullptr};
std::atomic<bool> g_jit_autocast_mode{true};

// The dtype's bit in a specialization slot: eager autocast dtypes are float16 or bfloat16.
size_t dtype_bit(ScalarType t) {
  AMPJIT_CHECK(t == ScalarType::Float16 || t == ScalarType::BFloat16,
               "internal error: eager autocast dtype {} is neither float16 nor bfloat16",
               dtype_name(t));
  return t == ScalarType::BFloat16 ? 1 : 0;
}
}  // namespace

GraphOptimizer set_graph_optimizer(GraphOptimizer optimizer) {
  return g_optimizer.exchange(optimizer);
}
bool set_jit_autocast_mode(bool enabled) {
  return g_jit_autocast_mode.exchange(enabled);
}
bool jit_autocast_mode() {
  return g_jit_autocast_mode.load();
}

Function::Function(std::string name, std::shared_ptr<Graph> graph)
    : name_(std::move(name)), graph_(std::move(graph)) {}

Function::~Function() {
  for (auto& s : slots_) delete s.load(std::memory_order_relaxed);
}

// Note [Function specialization] (interpreter.h).
const Function::Specialization& Function::specialization() const {
  size_t slot = 0;
  AutocastContext ctx;
  const GraphOptimizer optimizer =
      optimizable() ? g_optimizer.load(std::memory_order_acquire) : nullptr;
  if (effective_autocast_semantics() == AutocastSemantics::Eager) {
    slot = optimizer ? kEagerOptimized : kEagerPlain;
  } else if (optimizer) {
    if (ignore_amp() || !jit_autocast_mode()) {
      slot = 1;
    } else {
      ctx = current_autocast_context();
      slot = 2 + (ctx.cpu_enabled ? 1 : 0) + 2 * dtype_bit(ctx.cpu_dtype) +
             4 * (ctx.cuda_enabled ? 1 : 0) + 8 * dtype_bit(ctx.cuda_dtype);
    }
  }
  if (const Specialization* s = slots_[slot].load(std::memory_order_acquire)) return *s;
  return build(slot, ctx, optimizer);
}

const Function::Specialization& Function::build(size_t slot, const AutocastContext& ctx,
                                                GraphOptimizer optimizer) const {
  std::lock_guard<std::mutex> lock(build_mu_);
  if (const Specialization* s = slots_[slot].load(std::memory_order_acquire)) return *s;
  auto spec = std::make_unique<Specialization>();
  if (slot == 0 || slot == kEagerPlain) {
    spec->graph = graph_;
  } else {
    std::shared_ptr<Graph> g(graph_->copy());
    optimizer(*g, ctx, /*disable_autocast=*/slot == 1 || slot == kEagerOptimized);
    spec->graph = std::move(g);
  }
  const AutocastSemantics semantics =
      slot >= kEagerPlain ? AutocastSemantics::Eager : AutocastSemantics::TorchScript;
  spec->code = std::make_unique<Code>(*spec->graph, semantics);
  const Specialization* published = spec.release();
  slots_[slot].store(published, std::memory_order_release);
  return *published;
}

std::shared_ptr<const Graph> Function::optimized_graph() const {
  return specialization().graph;
}

namespace {
thread_local std::shared_ptr<const Graph> t_last_executed;
}  // namespace

void Function::run(Stack& stack) const {
  const Specialization& s = specialization();
  s.code->run(stack);
  t_last_executed = s.graph;  // after the run: a call made inside finishes first, the caller last
}

std::shared_ptr<const Graph> last_executed_optimized_graph() {
  return t_last_executed;
}

const Code& Function::code() const {
  return *specialization().code;
}

}  // namespace ampjit
