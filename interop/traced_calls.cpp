// The traced-calling-script rule (see traced_calls.h).
#include "interop/traced_calls.h"

#include "runtime/diagnostic.h"

namespace ampjit {

void record_traced_call(tracer::TracingState& st, const std::shared_ptr<Function>& fn, Stack& s) {
  const SourceRange where = st.location();
  if (st.semantics == AutocastSemantics::TorchScript) {
    for (auto it = st.autocast_scopes.rbegin(); it != st.autocast_scopes.rend(); ++it) {
      if (!it->enabled) break;  // an inner disabled region: nothing autocasts around the call
      warn_autocast_interop(
          fmt::format(
              "the autocast region at {} does not apply to the scripted function '{}' called "
              "inside it while tracing: the trace records the call, which runs without that "
              "autocast (PyTorch does this silently; trace with autocast_semantics='eager' to "
              "record the region)",
              it->where.location_str(), fn->name()),
          where);
      break;
    }
  }
  tracer::record_call(st, fn, s);
}

}  // namespace ampjit
