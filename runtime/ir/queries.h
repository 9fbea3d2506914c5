// What passes and printers ask of a node, answered once: the value of a constant, and whether a
// node has side effects or may write its inputs.
//
//   if (const IValue* c = constant_value(n->input(0))) ...     // nullptr: computed at run time
//   if (!has_side_effects(*n) && n->outputs_unused()) remove(n);
//
// Note [Side effects]
// A node must run even when nothing uses its results when it writes one of its arguments
// (in-place and out= ops, batch_norm's running statistics in training), draws random numbers
// (kNondeterministic: removing or merging it changes every later random value), raises, prints,
// sets an attribute, enters or exits an autocast region, calls a function, or is a kind this file
// does not know to be pure. An If or a Loop has side effects when a node in its blocks has.
// Dead code elimination, common subexpression elimination and constant propagation read these
// predicates.
#pragma once
#include <optional>

#include "runtime/ir/ir.h"

namespace ampjit {

// The value of `v` when a prim::Constant produces it (a constant without `value` is None), or
// nullptr when `v` is computed.
const IValue* constant_value(const Value* v);
// A constant bool (or the 0/1 int graph text may give for one); nullopt otherwise.
std::optional<bool> constant_bool(const Value* v);

// prim kinds whose only effect is their outputs (some may raise, as ops may: unused, they go).
bool is_pure_prim(Symbol k);
// Whether `n` must run even when its outputs are unused (Note [Side effects]).
bool has_side_effects(const Node& n);
// Whether `n` may write to (mutate) one of its inputs: in-place and out= arguments, batch_norm's
// running statistics unless `training` is a constant false, and every node of a kind that is not
// a pure op or a known pure prim (calls, SetAttr, unknown kinds).
bool may_write_inputs(const Node& n);

}  // namespace ampjit
