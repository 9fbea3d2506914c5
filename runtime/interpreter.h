// The interpreter: a graph is compiled once into a flat instruction list over registers (one per
// value) and run by a tight loop. Ops go through the dispatcher, so the caller's eager autocast
// state applies at run time, as in PyTorch's graph executor. A compiled Code is immutable: many
// threads can run it at once, each with its own registers and its own autocast state.
#pragma once
#include <memory>
#include <mutex>
#include <unordered_map>
#include <string>
#include <vector>

#include "runtime/ir/ir.h"

namespace ampjit {

class Function;

struct Instruction {
  enum Op : uint8_t {
    kOp,          // dispatch `op` with args regs[args..], results to regs[outs..]
    kConst,       // regs[a] = constants[b]
    kMove,        // regs[a] = regs[b]
    kJumpIfFalse, // if !regs[a] jump to b
    kJump,        // jump to b
    kLoopCheck,   // regs[a] (trip index) < regs[b] (max) && regs[c] (cond)? continue : jump to `target`
    kIncrement,   // regs[a] += 1
    kTuple,       // regs[out] = tuple(regs[args..])
    kList,        // regs[out] = list(regs[args..])
    kUnpack,      // regs[outs..] = elements of regs[a] (tuple or list)
    kTupleIndex,  // regs[out] = regs[a][regs[b]]
    kGetAttr,     // regs[out] = attribute constants[b] (a name) of the module in regs[a]
    kCall,        // regs[outs..] = fn(regs[args..])
    kRaise,       // throw Error(regs[a])
    kNode,        // a prim node with a registered handler (extension point, e.g. autocast regions)
    kReturn,      // results = regs[args..]
  };
  Op op;
  uint32_t a = 0, b = 0, c = 0;
  uint32_t args = 0, nargs = 0;  // into Code::operand_regs
  uint32_t outs = 0, nouts = 0;  // into Code::operand_regs
  uint32_t target = 0;
  const OpEntry* entry = nullptr;
  Function* fn = nullptr;
  const Node* node = nullptr;  // for diagnostics and kNode handlers
};

// Handlers for prim nodes that other layers define (autocast enter/exit, ...): they run with the
// node's inputs and must produce its outputs.
using PrimHandler = void (*)(const Node& node, Stack& inputs_then_outputs);
void register_prim_handler(Symbol kind, PrimHandler handler);

class Code {
 public:
  explicit Code(const Graph& graph);
  // Runs with `stack` holding the graph inputs; leaves the graph outputs on it.
  void run(Stack& stack) const;
  size_t num_registers() const { return num_regs_; }
  const std::vector<Instruction>& instructions() const { return instrs_; }
  std::string dump() const;  // the instruction listing, for tests and ampjit-dump

 private:
  uint32_t reg(const Value* v);
  uint32_t operands(const std::vector<Value*>& vs);
  void emit_block(const Block& b);
  void emit_node(const Node& n);
  void emit_moves(const std::vector<Value*>& from, const std::vector<Value*>& to);

  std::vector<Instruction> instrs_;
  std::vector<uint32_t> operand_regs_;
  std::vector<IValue> constants_;
  std::vector<uint32_t> input_regs_;
  std::unordered_map<const Value*, uint32_t> regs_;
  size_t num_regs_ = 0;
};

// A named, callable graph: what jit.trace and jit.script produce and what graphs call.
class Function {
 public:
  Function(std::string name, std::shared_ptr<Graph> graph);
  const std::string& name() const { return name_; }
  const std::shared_ptr<Graph>& graph() const { return graph_; }
  // Compiles on first use (thread-safe); the graph must not change afterwards.
  const Code& code() const;
  void run(Stack& stack) const { code().run(stack); }
  Stack operator()(Stack args) const {
    run(args);
    return args;
  }

 private:
  std::string name_;
  std::shared_ptr<Graph> graph_;
  mutable std::once_flag compiled_;
  mutable std::unique_ptr<Code> code_;
};

// A Function boxed in an IValue (the `fn` constant of prim::CallFunction).
struct FunctionObject : ObjectBase {
  std::shared_ptr<Function> fn;
  explicit FunctionObject(std::shared_ptr<Function> f) : fn(std::move(f)) {}
  const char* type_name() const override { return "Function"; }
};

}  // namespace ampjit
