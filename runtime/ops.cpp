// The C++ eager API's entry points.
#include "runtime/ops.h"

#include "runtime/boxing.h"

namespace ampjit {

void detail::throw_arity(size_t want, size_t got) {
  throw Error(fmt::format("internal error: kernel expects {} arguments, stack has {}", want, got));
}

OpResult call_op(const OpEntry& op, Stack stack) {
  const auto& args = op.schema.args;
  if (stack.size() > args.size()) {
    throw TypeError(fmt::format("{}() takes {} arguments but {} were given", op.name, args.size(),
                                stack.size()));
  }
  for (size_t i = stack.size(); i < args.size(); ++i) {
    if (!args[i].default_value) {
      throw TypeError(fmt::format("{}() missing required argument '{}' (position {})", op.name,
                                  args[i].name, i + 1));
    }
    stack.push_back(*args[i].default_value);
  }
  dispatch(op, stack);
  return OpResult(std::move(stack));
}

OpResult call_op(std::string_view full_name, std::vector<IValue> args, std::vector<Kwarg> kwargs) {
  const OpEntry* op = find_op(full_name);
  if (!op) throw NotImplementedError(fmt::format("ampjit has no op named '{}'", full_name));
  Stack s = bind_arguments(op->schema, std::move(args), std::move(kwargs));
  dispatch(*op, s);
  return OpResult(std::move(s));
}

}  // namespace ampjit
