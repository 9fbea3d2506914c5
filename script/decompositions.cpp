// Runs the decomposed ops (Note [Decomposed ops] in runtime/op_table.h): the def of each in
// frontend/ampjit/_decompositions.py, embedded in the library, compiled once per op with the eager
// autocast semantics and run by the op's kernel on every device.
#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/caches.h"
#include "runtime/op_table.h"
#include "runtime/script_error.h"
#include "script/emit/emitter.h"
#include "script/parser.h"
#include "script/static_resolver.h"

namespace ampjit::script::detail {
extern const char kDecompositionsSource[];
}  // namespace ampjit::script::detail

namespace ampjit::script {

namespace {

struct Decompositions {
  std::shared_ptr<FileResolver> resolver;
  std::mutex mu;  // guards compilation; `ready` is read without it
  std::vector<std::shared_ptr<Function>> fns;
  std::unique_ptr<std::atomic<const Function*>[]> ready;
  std::atomic<size_t> compiled{0};

  Decompositions() : fns(all_ops().size()), ready(new std::atomic<const Function*>[fns.size()]) {
    for (size_t i = 0; i < fns.size(); ++i) ready[i].store(nullptr, std::memory_order_relaxed);
    auto source = std::make_shared<Source>(std::string(detail::kDecompositionsSource),
                                           "ampjit/_decompositions.py");
    std::shared_ptr<const Module> file(parse_module(source));
    resolver = std::make_shared<FileResolver>(static_resolver(*file), file, "torch._decomp");
  }
};

Decompositions& decompositions() {
  static auto* d = new Decompositions;  // never destroyed: kernels may run during exit
  return *d;
}

// The def of aten::NAME is NAME; of aten::NAME.OVERLOAD, NAME__OVERLOAD.
std::string def_name(const OpEntry& op) {
  return op.schema.overload.empty() ? op.schema.name : op.schema.name + "__" + op.schema.overload;
}

const Function& compile(Decompositions& d, const OpEntry& op) {
  std::lock_guard<std::mutex> lock(d.mu);
  const auto i = static_cast<size_t>(op.id);
  if (d.fns[i]) return *d.fns[i];
  const std::string name = def_name(op);
  Resolved r = d.resolver->resolve(name, SourceRange{});
  if (r.kind != Resolved::kSource)
    throw NotImplementedError(fmt::format(
        "{}: ampjit/_decompositions.py has no def '{}' (Note [Decomposed ops])", op.name, name));
  detail::Session session;
  session.options.semantics = AutocastSemantics::Eager;  // the dispatcher alone autocasts
  std::shared_ptr<Function> fn = session.compile_source_fn(r, SourceRange{});
  const auto& schema = fn->schema();
  std::vector<std::string> want, got;
  for (const Argument& a : op.schema.args) want.push_back(a.name);
  if (schema)
    for (const Argument& a : schema->args) got.push_back(a.name);
  AMPJIT_CHECK(want == got, "{}: its decomposition takes ({}), the op's schema ({})", op.name,
               fmt::join(got, ", "), fmt::join(want, ", "));
  d.fns[i] = fn;
  d.ready[i].store(fn.get(), std::memory_order_release);
  d.compiled.fetch_add(1, std::memory_order_relaxed);
  return *fn;
}

// `raise ValueError("...")` in a def is the op's own error, as a kernel's check would raise it:
// its class and message, without the "ValueError: " the interpreter's ScriptError spells and
// without the def's line (the user called the op, not the def).
[[noreturn]] void rethrow_as_op_error(const ScriptError& e) {
  const std::string& m = e.message();
  const size_t colon = m.find(": ");
  const std::string cls = colon == std::string::npos ? m : m.substr(0, colon);
  const std::string text = colon == std::string::npos ? std::string() : m.substr(colon + 2);
  if (cls == "ValueError") throw ValueError(text);
  if (cls == "TypeError") throw TypeError(text);
  if (cls == "IndexError") throw IndexError(text);
  if (cls == "NotImplementedError") throw NotImplementedError(text);
  if (cls == "LinAlgError") throw LinAlgError(text);
  if (cls == "RuntimeError") throw Error(text);
  throw;
}

void run_decomposition(const OpEntry& op, Stack& stack) {
  Decompositions& d = decompositions();
  const Function* fn = d.ready[static_cast<size_t>(op.id)].load(std::memory_order_acquire);
  if (!fn) [[unlikely]]
    fn = &compile(d, op);
  // A dtype is an int in script (torch's ScalarType code), whatever the caller passed: the def
  // compares it (`dtype == torch.float32`) as one.
  for (IValue& v : stack)
    if (v.is_scalar_type()) v = IValue(torch_dtype_code(v.to_scalar_type()));
  try {
    fn->run(stack);
  } catch (const ScriptError& e) {
    rethrow_as_op_error(e);
  }
  // Several results come back as one tuple; the op's stack holds them one by one.
  if (op.schema.returns.size() > 1 && stack.size() == 1 && stack[0].is_tuple()) {
    std::vector<IValue> elems = stack[0].tuple_elems();
    stack.assign(elems.begin(), elems.end());
  }
}

}  // namespace

std::vector<std::string> check_decompositions() {
  std::vector<std::string> problems;
  Decompositions& d = decompositions();
  for (const OpEntry& op : all_ops()) {
    if (!op.has(kDecomposed) || op.kernels[static_cast<int>(DeviceType::CPU)] == nullptr ||
        kernel_is_derived(op, DeviceType::CPU))
      continue;
    try {
      compile(d, op);
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

namespace {

[[maybe_unused]] const bool g_installed = [] {
  set_decomposition_runner(run_decomposition);
  return register_cache({"decompositions", "one compiled def per decomposed op; never emptied",
                         [] { return decompositions().compiled.load(); }, nullptr});
}();

}  // namespace

}  // namespace ampjit::script
