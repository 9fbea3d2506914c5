// The two JIT autocast semantics and how one is chosen.
//
//   set_autocast_semantics(AutocastSemantics::Eager);     // the process-wide default
//   fn.set_autocast_semantics(AutocastSemantics::TorchScript);  // one Function (interpreter.h)
//
// Note [Autocast semantics]
// `torchscript` (the default) behaves as PyTorch 1.13's TorchScript, limitations included; `eager`
// lifts them, with one invariant: a traced or scripted function gives what the same Python code
// gives when run eagerly, under every eager autocast state. Everything that differs between the two
// is decided from this one enum, in this folder:
//  - Which graph a Function runs (Note [Function specialization], runtime/interpreter.h): the
//    semantics is part of the specialization key. `torchscript` runs the JIT autocast pass seeded
//    from the caller's eager state; `eager` never runs it: the eager dispatcher alone autocasts.
//  - What `with autocast(...)` in a graph does at run time (Note [Autocast regions at run time],
//    runtime/autocast/autocast_regions.h): prim::Enter/prim::Exit on an autocast object are inert
//    in `torchscript` and really enter/leave the region in `eager`. A prim::AutocastRegion node (a
//    region with constant settings, what an eager-semantics trace records) always does.
//  - What a trace records (Note [Eager-semantics tracing], tracer/tracer.h): `torchscript` records
//    the casts eager autocast made, baked in, and keeps regions as metadata only; `eager` records
//    every op as the user called it and each region as a prim::AutocastRegion node.
// Where the semantics comes from, most specific first: a Function's own setting (jit.trace and
// jit.script's `autocast_semantics=`; a trace is pinned to the semantics it was recorded with,
// since what it recorded depends on it), else the process-wide default *at call time*, which
// starts as $AMPJIT_AUTOCAST_SEMANTICS (`torchscript` or `eager`; unset: `torchscript`) and changes
// with set_autocast_semantics. A malformed variable is a ValueError at first use (every use,
// until set_autocast_semantics replaces it), never a silent fallback.
#pragma once
#include <optional>
#include <string_view>

namespace ampjit {

enum class AutocastSemantics : unsigned char { TorchScript = 0, Eager = 1 };

// "torchscript" / "eager".
const char* autocast_semantics_name(AutocastSemantics s);
// Parses "torchscript" / "eager"; anything else is a ValueError naming the allowed values and
// `what` (e.g. "AMPJIT_AUTOCAST_SEMANTICS").
AutocastSemantics parse_autocast_semantics(std::string_view name,
                                           std::string_view what = "autocast semantics");

// The process-wide default (first use reads $AMPJIT_AUTOCAST_SEMANTICS; ValueError if malformed).
AutocastSemantics autocast_semantics();
// Sets the process-wide default; returns the previous one (the environment's, when it was never
// set; a malformed environment value is not an error here, and the previous is then TorchScript).
AutocastSemantics set_autocast_semantics(AutocastSemantics s);

// Forgets the default set so far: the next use reads the environment again (for tests).
void reset_autocast_semantics();

// A per-function setting resolved against the default: `own` when set, else the default now.
inline AutocastSemantics resolve_autocast_semantics(std::optional<AutocastSemantics> own) {
  return own ? *own : autocast_semantics();
}

}  // namespace ampjit
