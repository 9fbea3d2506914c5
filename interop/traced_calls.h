// Traced code calling compiled code: the interop rule for a scripted or traced function called
// while tracing (the limitation matrix, docs/limitations.md: "traced calling script"), then the
// call recorded by the tracer.
//
//   if (tracer::TracingState* st = tracer::current()) record_traced_call(*st, fn, stack);
//
// In torchscript semantics an eager `with autocast(...)` region around such a call is lost: the
// trace records the call, which runs without that autocast (PyTorch returns float32 there,
// silently). ampjit warns at the call, naming the region. Note [Compiled functions called while
// tracing] in tracer/tracer.h says how the call is recorded in either semantics.
#pragma once
#include <memory>

#include "runtime/interpreter.h"
#include "tracer/tracer.h"

namespace ampjit {

// Warns as the rule above says, then records the call (tracer::record_call): `s` holds the
// arguments and receives the results.
void record_traced_call(tracer::TracingState& st, const std::shared_ptr<Function>& fn, Stack& s);

}  // namespace ampjit
