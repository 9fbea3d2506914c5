// The JIT autocast pass (see autocast_pass.h): torch 1.13's handleBlock, parseAutocast,
// castTensorInputs and castInputsToWidestType, over ampjit's IR and the generated `jit_pass` lists.
#include "script/passes/autocast_pass.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/autocast/autocast_regions.h"
#include "runtime/autocast/policy_profiles.h"
#include "runtime/diagnostic.h"
#include "runtime/ir/queries.h"
#include "script/passes/inline_calls.h"
#include "tracer/tracer.h"

namespace ampjit {

namespace {

// torch's Error text, then where the node came from: its line, and each call it was inlined from.
[[noreturn]] void fail(const Node* n, const std::string& msg) {
  std::string text = msg;
  if (n && n->source_range().valid()) text += "\n" + n->source_range().highlight();
  Error e(text);
  if (n)
    for (const InlinedCall& call : n->inlined_calls()) e.add_note({"called from", call.call_site});
  throw e;
}

// The pass's policy for a node kind, from the generated `jit_pass` lists (ops the lists name that
// the op table lacks never occur in a graph, so their entries are simply never met).
AutocastPolicy jit_policy(Symbol kind) {
  static const std::unordered_map<Symbol, AutocastPolicy> table = [] {
    std::unordered_map<Symbol, AutocastPolicy> t;
    for (size_t i = 0; i < autocast_data::kNumJitPass; ++i) {
      const auto& e = autocast_data::kJitPass[i];
      t.emplace(Symbol::intern("aten", e.op), e.policy);
    }
    // Fused ops cast as their base op (Note [Fused convolutions] in inference.h).
    if (auto conv = t.find(Symbol::intern("aten::conv2d")); conv != t.end())
      t.emplace(Symbol::intern("ampjit::_conv2d_relu"), conv->second);
    return t;
  }();
  auto it = table.find(kind);
  return it == table.end() ? AutocastPolicy::None : it->second;
}

const Symbol kToReduced = Symbol::intern("aten::_autocast_to_reduced_precision");
const Symbol kToFull = Symbol::intern("aten::_autocast_to_full_precision");
const Symbol kIsAutocastEnabled = Symbol::intern("aten::is_autocast_enabled");
const Symbol kIsAutocastCpuEnabled = Symbol::intern("aten::is_autocast_cpu_enabled");
const Symbol kSoftmax = Symbol::intern("aten::softmax");

bool is_autocast_object(const Value* v) {
  const Type& t = *v->type();
  return t.kind() == TypeKind::Object && is_autocast_class_name(t.name());
}

// The eager state the pass was seeded with (for the interop warnings of this file).
thread_local const AutocastContext* t_eager = nullptr;

// Note [Interop warnings of the JIT autocast pass]
// Two places where torch 1.13's pass is silently wrong, and ampjit says so (torchscript semantics
// only: in eager semantics the pass does not run):
//  - A traced `with autocast(enabled=False)` is stripped by tracing (its ops carry the scope only
//    as metadata, Note [Traced autocast scopes]); when the trace runs where the pass autocasts
//    (called from script under autocast, or under eager autocast) its lower-precision ops are
//    cast anyway. Warned at the scripted call site the ops were inlined from (else at the op).
//  - A scripted `with autocast(enabled=False)` does not disable *eager* autocast: the dispatcher
//    still autocasts the region's ops at run time (the limitation matrix's last section). Warned at
//    the `with` line, when a specialization is built under an eager state that enables that device.
// The pass runs once per specialization, so each fires once per function and eager state.
void warn_stripped_traced_disable(const Node* n, const AutocastContext& ctx) {
  const IValue* scope_on = n->find_meta(tracer::meta_autocast_scope_enabled());
  if (!scope_on || !scope_on->is_bool() || scope_on->to_bool()) return;
  const IValue* dev = n->find_meta(tracer::meta_autocast_device());
  const bool cuda = dev && dev->is_int() && dev->to_int() == static_cast<int64_t>(DeviceType::CUDA);
  if (!(cuda ? ctx.cuda_enabled : ctx.cpu_enabled)) return;
  const IValue* where = n->find_meta(tracer::meta_autocast_where());
  // Warned at the scripted call the trace was inlined from (the innermost), else at the op.
  const InlinedCall* call = n->inlined_calls().empty() ? nullptr : &n->inlined_calls().front();
  const std::string fn = call ? " '" + call->callee + "'" : "";
  warn_autocast_interop(
      fmt::format(
          "autocast(enabled=False) at {} in the traced function{} is lost when script calls it "
          "or it runs under eager autocast: {} is autocast to {} here (PyTorch does this "
          "silently; trace with autocast_semantics='eager' to keep the region)",
          where && where->is_string() ? where->to_string_ref() : "?", fn, n->kind().qualified(),
          dtype_name(cuda ? ctx.cuda_dtype : ctx.cpu_dtype)),
      call ? call->call_site : n->source_range());
}

struct Region {
  const Value* instance;
  AutocastContext context;
};

// torch's parseAutocast: the region `with <value>:` opens, or nothing when the value is not an
// autocast object (some other `with`).
std::optional<Region> parse_autocast(const Node* enter, const AutocastContext& current) {
  Value* obj = enter->input(0);
  if (!is_autocast_object(obj)) return std::nullopt;
  // Only an object made right here by prim::CreateObject has statically known settings;
  // `with a if cond else b:` gives the output of a prim::If.
  if (obj->node()->kind() != sym::prim::CreateObject) fail(enter, "Unsupported autocast syntax");
  std::optional<bool> enabled;
  std::string device;
  std::optional<ScalarType> dtype;
  // The settings are the prim::SetAttr nodes the inlined __init__ left on the object, wherever
  // they are (not necessarily in the Enter's block), in use order.
  for (const Use& u : obj->uses()) {
    const Node* set = u.user;
    if (set->kind() != sym::prim::SetAttr || u.offset != 0) continue;
    const std::string& name = set->attr(sym::attr::name).to_string_ref();
    const Node* where = set->source_range().valid() ? set : enter;
    const IValue* c = constant_value(set->input(1));
    if (name == "_enabled") {
      if (!c || !c->is_bool()) fail(where, "Autocast _enabled argument must be a constant");
      enabled = c->to_bool();
    } else if (name == "device") {
      if (!c || !c->is_string()) fail(where, "Autocast device argument must be a constant");
      device = c->to_string_ref();
    } else if (name == "fast_dtype") {
      std::optional<ScalarType> t;
      if (c && c->is_scalar_type()) t = c->to_scalar_type();
      if (c && c->is_int()) t = from_torch_dtype_code(c->to_int());
      if (!t || *t == ScalarType::Undefined)
        fail(where, "Autocast dtype argument must be a constant and defined");
      dtype = t;
    }
  }
  if (!enabled) fail(enter, "Autocast missing _enabled attribute");
  if (!dtype) fail(enter, "Autocast missing fast_dtype attribute");
  if (device.empty()) fail(enter, "Autocast missing device attribute");
  if (!*enabled && t_eager && (device == "cuda" ? t_eager->cuda_enabled : t_eager->cpu_enabled)) {
    warn_autocast_interop(
        fmt::format(
            "autocast(enabled=False) in scripted code does not disable eager autocast: the caller "
            "has {} "
            "autocast enabled, so the ops in this region are still autocast to {} (as in PyTorch; "
            "autocast_semantics='eager' lets the region win)",
            device, dtype_name(device == "cuda" ? t_eager->cuda_dtype : t_eager->cpu_dtype)),
        enter->source_range());
  }
  Region r{obj, current};
  if (device == "cuda") {
    r.context.cuda_enabled = *enabled;
    r.context.cuda_dtype = *dtype;
  } else if (device == "cpu") {
    r.context.cpu_enabled = *enabled;
    r.context.cpu_dtype = *dtype;
  } else {
    // torch: an internal assert (its autocast __init__ already rejects other device types).
    fail(enter, "unrecognized device for autocast pass: " + device);
  }
  return r;
}

bool schema_is_mutable(const Node* n) {
  const auto& args = n->op()->schema.args;
  return std::any_of(args.begin(), args.end(), [](const Argument& a) { return a.is_write; });
}

// torch's castTensorInputs: `cast` on every distinct input whose static type is Tensor and that
// is not already that cast's output, inserted before `n` in input order.
void cast_tensor_inputs(Node* n, Symbol cast, const AutocastContext& ctx) {
  if (!ctx.any_enabled()) return;
  std::vector<Value*> inputs;
  std::unordered_set<Value*> seen;
  for (Value* in : n->inputs()) {
    if (in->type()->kind() == TypeKind::Tensor && in->node()->kind() != cast &&
        seen.insert(in).second)
      inputs.push_back(in);
  }
  Graph& g = *n->owning_graph();
  Node* saved = g.insert_point();
  g.set_insert_point(n);
  for (Value* in : inputs) {
    Value* out;
    if (cast == kToFull) {
      out = g.insert_op(op_entry(OpId::_autocast_to_full_precision),
                        {in, g.insert_constant(IValue(ctx.cuda_enabled)),
                         g.insert_constant(IValue(ctx.cpu_enabled))},
                        n->source_range());
    } else {
      Value* cuda_on = g.insert_constant(IValue(ctx.cuda_enabled));
      Value* cpu_on = g.insert_constant(IValue(ctx.cpu_enabled));
      Value* cuda_dt = g.insert_constant(IValue(ctx.cuda_dtype));
      Value* cpu_dt = g.insert_constant(IValue(ctx.cpu_dtype));
      out = g.insert_op(op_entry(OpId::_autocast_to_reduced_precision),
                        {in, cuda_on, cpu_on, cuda_dt, cpu_dt}, n->source_range());
    }
    n->replace_input_with(in, out);
  }
  g.set_insert_point(saved);
}

// torch's hasExplicitDtypeArgument: a `dtype` input whose static type is not NoneType (so an
// Optional[int] variable holding None counts as explicit).
bool has_explicit_dtype(const Node* n) {
  const int i = n->op()->dtype_arg;
  return i >= 0 && static_cast<size_t>(i) < n->inputs().size() &&
         n->input(static_cast<size_t>(i))->type()->kind() != TypeKind::None;
}

// torch's castInputsToWidestType: promotion without type propagation. A tensor input of unknown
// or float32 dtype makes every tensor input full precision.
void cast_inputs_to_widest_type(Node* n, const AutocastContext& ctx) {
  if (!ctx.any_enabled()) return;
  for (const Value* in : n->inputs()) {
    if (in->type()->kind() != TypeKind::Tensor) continue;
    const std::optional<ScalarType> dt = in->type()->tensor_dtype();
    if (!dt || *dt == ScalarType::Float32) {
      cast_tensor_inputs(n, kToFull, ctx);
      return;
    }
  }
}

// torch's updateAutocastEnabledCheck: where the pass autocasts that device, the check is `true`.
void fold_enabled_check(Node* n, bool jit_enabled) {
  if (!jit_enabled) return;
  Graph& g = *n->owning_graph();
  Node* saved = g.insert_point();
  g.set_insert_point(n);
  Value* t = g.insert_constant(IValue(true), n->source_range());
  g.set_insert_point(saved);
  n->output()->replace_all_uses_with(t);
  n->destroy();
}

// The context inside a prim::AutocastRegion: the region's device slot overwritten, as
// parse_autocast does for a `with` region (its dtype only when enabled, as eager's __enter__).
AutocastContext region_context(const Node& region, AutocastContext ctx) {
  const AutocastRegionSpec spec = autocast_region_spec(region);
  bool& on = spec.device == DeviceType::CUDA ? ctx.cuda_enabled : ctx.cpu_enabled;
  ScalarType& dtype = spec.device == DeviceType::CUDA ? ctx.cuda_dtype : ctx.cpu_dtype;
  on = spec.enabled;
  if (spec.enabled) dtype = *spec.dtype;
  return ctx;
}

void handle_block(Block* block, const AutocastContext& initial) {
  std::vector<Region> regions;
  // torch's incompatible_amp: a block may not mix autocast regions with calls made under another
  // state than the initial one.
  std::optional<bool> incompatible_amp;
  auto current = [&]() -> const AutocastContext& {
    return regions.empty() ? initial : regions.back().context;
  };

  for (Node* n : block->nodes()) {
    const Symbol k = n->kind();
    if (k == sym::prim::CallFunction) {
      // torch compares two contexts with `==` through their `operator bool`: "as enabled as the
      // initial state", not "the same state".
      if (current().any_enabled() == initial.any_enabled()) {
        if (current().any_enabled()) cast_tensor_inputs(n, kToFull, current());
      } else {
        if (incompatible_amp.has_value() && !*incompatible_amp)
          fail(n, n->has_attr(kInterfaceCall) ? "Unexpected prim::CallMethod form with AMP & JIT"
                                              : "Calls are not expected with AMP & JIT");
        incompatible_amp = true;
      }
    } else if (k == sym::prim::Enter) {
      if (std::optional<Region> r = parse_autocast(n, current())) {
        if (std::any_of(n->outputs().begin(), n->outputs().end(),
                        [](const Value* v) { return v->has_uses(); }))
          fail(n, "`with autocast() as ...` is not supported");
        if (incompatible_amp.has_value() && *incompatible_amp)
          fail(n, "Unsupported case by AMP & JIT");
        incompatible_amp = false;
        regions.push_back(*r);
      }
    } else if (k == sym::prim::Exit) {
      if (is_autocast_object(n->input(0))) {
        // torch: internal asserts. A region closes in the block that opened it.
        if (regions.empty() || regions.back().instance != n->input(0))
          fail(n, "Autocast: prim::Exit does not match the innermost prim::Enter of its block");
        if (incompatible_amp.has_value() && *incompatible_amp)
          fail(n, "Unsupported case by AMP & JIT");
        incompatible_amp = false;
        regions.pop_back();
      }
    } else if (k == kIsAutocastEnabled) {
      fold_enabled_check(n, current().cuda_enabled);
      continue;
    } else if (k == kIsAutocastCpuEnabled) {
      fold_enabled_check(n, current().cpu_enabled);
      continue;
    } else if (n->op()) {
      switch (jit_policy(k)) {
        case AutocastPolicy::LowerPrecisionFp:
          if (!schema_is_mutable(n)) {
            warn_stripped_traced_disable(n, current());
            cast_tensor_inputs(n, kToReduced, current());
          }
          break;
        case AutocastPolicy::Fp32:
          if (!schema_is_mutable(n)) cast_tensor_inputs(n, kToFull, current());
          break;
        case AutocastPolicy::Fp32SetOptDtype:
          if (!schema_is_mutable(n) && !has_explicit_dtype(n)) {
            AutocastContext ctx = current();
            // Eager CPU autocast has no softmax rule, so the pass casts softmax on CUDA only.
            if (k == kSoftmax) ctx.cpu_enabled = false;
            cast_tensor_inputs(n, kToFull, ctx);
          }
          break;
        case AutocastPolicy::Promote:
          if (!schema_is_mutable(n)) cast_inputs_to_widest_type(n, current());
          break;
        case AutocastPolicy::Banned:
          if (current().any_enabled()) fail(n, "Unsafe to autocast");
          break;
        case AutocastPolicy::Fp32AppendDtype:  // not implemented by torch's pass (its list is
                                               // empty)
        case AutocastPolicy::None:
          break;
      }
    }
    // A prim::AutocastRegion (an eager-semantics trace's region, Note [Autocast regions at run
    // time]) is a scope with its constant settings, as a `with autocast(...)` region is.
    const AutocastContext inner =
        k == sym::prim::AutocastRegion ? region_context(*n, current()) : current();
    for (Block* sub : n->blocks()) handle_block(sub, inner);
  }
  // torch: an internal assert. Every region opened in a block closes in it.
  if (!regions.empty()) {
    const Node* enter = nullptr;
    for (const Use& u : regions.back().instance->uses())
      if (u.user->kind() == sym::prim::Enter && u.user->owning_block() == block) enter = u.user;
    fail(enter, "Autocast: prim::Enter without a matching prim::Exit in the same block");
  }
}

}  // namespace

void autocast_pass(Graph& g, const AutocastContext& initial) {
  const AutocastContext* saved = t_eager;
  t_eager = &initial;
  try {
    handle_block(g.block(), initial);
  } catch (...) {
    t_eager = saved;
    throw;
  }
  t_eager = saved;
}

}  // namespace ampjit
