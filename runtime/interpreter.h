// The interpreter: a graph is compiled once into a flat instruction list over registers (one per
// value) and run by a tight loop. Ops go through the dispatcher, so the caller's eager autocast
// state applies at run time, as in PyTorch's graph executor. A compiled Code is immutable: many
// threads can run it at once, each with its own registers and its own autocast state.
#pragma once
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/autocast/autocast_regions.h"
#include "runtime/autocast/autocast_state.h"
#include "runtime/autocast/semantics.h"
#include "runtime/ir/ir.h"
#include "runtime/schema.h"

namespace ampjit {

class Function;

struct Instruction {
  enum Op : uint8_t {
    kOp,            // dispatch `op` with args regs[args..], results to regs[outs..]
    kConst,         // regs[a] = constants[b]
    kMove,          // regs[a] = regs[b]
    kJumpIfFalse,   // if !regs[a] jump to b
    kJump,          // jump to b
    kLoopCheck,     // regs[a] (trip index) < regs[b] (max) && regs[c] (cond)? continue : jump to
                    // `target`
    kIncrement,     // regs[a] += 1
    kTuple,         // regs[out] = tuple(regs[args..])
    kList,          // regs[out] = list(regs[args..])
    kUnpack,        // regs[outs..] = elements of regs[a] (tuple or list)
    kTupleIndex,    // regs[out] = regs[a][regs[b]]
    kGetAttr,       // regs[out] = attribute constants[b] (a name) of the module in regs[a]
    kSetAttr,       // attribute constants[b] (a name) of the object in regs[a] = regs[c]
    kCreateObject,  // regs[out] = a new empty object of class constants[b]
    kCall,          // regs[outs..] = fn(regs[args..])
    kRaise,         // throw Error(regs[a])
    kNode,          // a prim node with a registered handler (extension point)
    kRegionEnter,   // enter the autocast region region_specs[b] (prim::AutocastRegion; owner: node)
    kRegionExit,    // leave the region `node` entered
    kWithEnter,     // eager semantics: prim::Enter(regs[a]) on an autocast object enters its region
    kWithExit,      // eager semantics: prim::Exit(regs[a]) leaves it
    kReturn,        // results = regs[args..]
  };
  Op op;
  uint32_t a = 0, b = 0, c = 0;
  uint32_t args = 0, nargs = 0;  // into Code::operand_regs
  uint32_t outs = 0, nouts = 0;  // into Code::operand_regs
  uint32_t target = 0;
  const OpEntry* entry = nullptr;
  Function* fn = nullptr;
  const Node* node = nullptr;  // for diagnostics and kNode handlers
  void (*handler)(const Node&,
                  std::vector<IValue>&) = nullptr;  // kNode: resolved once, at compile time
};

// Handlers for prim nodes that other layers define (autocast enter/exit, ...): they run with the
// node's inputs and must produce its outputs.
using PrimHandler = void (*)(const Node& node, Stack& inputs_then_outputs);
void register_prim_handler(Symbol kind, PrimHandler handler);

// A Code is compiled for one autocast semantics: it decides what prim::Enter / prim::Exit on an
// autocast object do (Note [Autocast regions at run time], runtime/autocast/autocast_regions.h).
// prim::AutocastRegion nodes enter and leave their region in both.
class Code {
 public:
  explicit Code(const Graph& graph, AutocastSemantics semantics = AutocastSemantics::TorchScript);
  AutocastSemantics semantics() const { return semantics_; }
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

  AutocastSemantics semantics_;
  std::vector<Instruction> instrs_;
  std::vector<AutocastRegionSpec> region_specs_;
  std::vector<uint32_t> operand_regs_;
  std::vector<IValue> constants_;
  std::vector<uint32_t> input_regs_;
  std::unordered_map<const Value*, uint32_t> regs_;
  size_t num_regs_ = 0;
};

// Note [Function specialization]
// As torch's GraphFunction does (torch/csrc/jit/api/function_impl.cpp, preoptimizeGraph), a
// Function runs an *optimized copy* of its graph: inlined, and rewritten by the JIT autocast pass
// seeded from the caller's eager autocast state. Because that state differs between calls, a
// Function keeps one optimized graph and Code per specialization key, built lazily (at the first
// call under that key) and published once, so later calls under the same key take no lock.
// `graph()` never changes and never shows casts. The key is: the autocast semantics the call runs
// under (the Function's own, else the process-wide default at call time: Note [Autocast semantics],
// runtime/autocast/semantics.h); in torchscript semantics, whether the autocast pass runs
// (set_jit_autocast_mode, set_ignore_amp) and, if it does, both devices' enabled flags and dtypes.
// In eager semantics the pass never runs (the eager dispatcher alone autocasts, and autocast
// objects' Enter/Exit really enter and leave their regions), so one optimized graph serves every
// eager state. torch keys only on the two enabled flags, so a function first called under bfloat16
// CPU autocast keeps casting to bfloat16 under a float16 region; ampjit keys on the dtypes too (a
// stale-cache artifact not worth reproducing). Toggling the JIT autocast mode takes effect at the
// next call (torch: only for keys not yet built). The pipeline lives in script/
// (script/passes/pipeline.cpp), which installs it with set_graph_optimizer when the library loads;
// without an optimizer (or for a Function marked not optimizable) calls run the plain graph. A
// pipeline that throws (the autocast pass's diagnostics) caches nothing: every call under that key
// raises the same error.
using GraphOptimizer = void (*)(Graph& graph, const AutocastContext& eager, bool disable_autocast);
// Installs the optimization pipeline; returns the previous one.
GraphOptimizer set_graph_optimizer(GraphOptimizer optimizer);
// torch._C._jit_set_autocast_mode: whether optimized graphs run the JIT autocast pass (default on);
// returns the previous value.
bool set_jit_autocast_mode(bool enabled);
bool jit_autocast_mode();
// torch.jit.last_executed_optimized_graph(): the optimized graph of the last Function this thread
// ran (the specialization that ran, casts included), or null before the first run.
std::shared_ptr<const Graph> last_executed_optimized_graph();

// A named, callable graph: what jit.trace and jit.script produce and what graphs call.
class Function {
 public:
  Function(std::string name, std::shared_ptr<Graph> graph);
  ~Function();
  const std::string& name() const { return name_; }
  // The graph as built (never optimized); it must not change after the first call.
  const std::shared_ptr<Graph>& graph() const { return graph_; }

  // Whether calls run the optimized graph (default) or the plain one.
  void set_optimizable(bool on) { optimizable_.store(on, std::memory_order_relaxed); }
  bool optimizable() const { return optimizable_.load(std::memory_order_relaxed); }
  // The signature callers bind arguments against (names, types, defaults): set by the script
  // compiler; traced functions have none (their inputs are positional).
  void set_schema(std::shared_ptr<const FunctionSchema> s) { schema_ = std::move(s); }
  const std::shared_ptr<const FunctionSchema>& schema() const { return schema_; }
  // torch's fn._set_ignore_amp(True): the autocast pass is skipped for this function.
  void set_ignore_amp(bool ignore) { ignore_amp_.store(ignore, std::memory_order_relaxed); }
  bool ignore_amp() const { return ignore_amp_.load(std::memory_order_relaxed); }

  // This function's own autocast semantics (Note [Autocast semantics]); unset (the default): the
  // process-wide default at each call. Takes effect at the next call.
  void set_autocast_semantics(std::optional<AutocastSemantics> s) {
    semantics_.store(s ? static_cast<int>(*s) : -1, std::memory_order_relaxed);
  }
  std::optional<AutocastSemantics> own_autocast_semantics() const {
    const int s = semantics_.load(std::memory_order_relaxed);
    return s < 0 ? std::nullopt
                 : std::optional<AutocastSemantics>(static_cast<AutocastSemantics>(s));
  }
  // The semantics a call from this thread runs under now (ValueError when it comes from a
  // malformed $AMPJIT_AUTOCAST_SEMANTICS).
  AutocastSemantics effective_autocast_semantics() const {
    return resolve_autocast_semantics(own_autocast_semantics());
  }

  // The graph calls from this thread run now: the optimized graph for this thread's eager
  // autocast state (built on first use, thread-safe), or graph() when not optimized.
  std::shared_ptr<const Graph> optimized_graph() const;
  // Its compiled code.
  const Code& code() const;
  void run(Stack& stack) const;
  Stack operator()(Stack args) const {
    run(args);
    return args;
  }

 private:
  struct Specialization {
    std::shared_ptr<const Graph> graph;
    std::unique_ptr<Code> code;
  };
  // Torchscript semantics: slot 0: the plain graph; 1: optimized without the autocast pass;
  // 2 + 16 keys: optimized with the pass, by (cpu on, cpu dtype, cuda on, cuda dtype).
  // Eager semantics: kEagerPlain: the plain graph; kEagerOptimized: optimized (never the pass).
  static constexpr size_t kEagerPlain = 18, kEagerOptimized = 19;
  static constexpr size_t kNumSlots = 20;
  const Specialization& specialization() const;
  const Specialization& build(size_t slot, const AutocastContext& ctx,
                              GraphOptimizer optimizer) const;

  std::string name_;
  std::shared_ptr<Graph> graph_;
  std::shared_ptr<const FunctionSchema> schema_;
  std::atomic<bool> optimizable_{true};
  std::atomic<bool> ignore_amp_{false};
  std::atomic<int> semantics_{-1};  // -1: unset, else an AutocastSemantics
  mutable std::mutex build_mu_;
  mutable std::array<std::atomic<const Specialization*>, kNumSlots> slots_{};
};

// A Function boxed in an IValue (the `fn` constant of prim::CallFunction).
struct FunctionObject : ObjectBase {
  std::shared_ptr<Function> fn;
  explicit FunctionObject(std::shared_ptr<Function> f) : fn(std::move(f)) {}
  const char* type_name() const override { return "Function"; }
};

}  // namespace ampjit
