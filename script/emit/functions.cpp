// Functions: a def to a Function (parameters, return, the exit flags), and the session that
// compiles callees and methods once each.
#include "script/emit/emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_set>
#include "script/parser.h"

namespace ampjit::script::detail {

std::string qualified_name_for(const std::string& name) {
  return "__torch__." + name;
}

const FunctionDef& single_def(const Module& m, const SourceRange& fallback) {
  const FunctionDef* def = nullptr;
  for (const auto& s : m.body) {
    if (s->kind == StmtKind::FunctionDef) {
      if (def) fail(s->range, "expected the source of one function, found a second def");
      def = &s->as<FunctionDef>();
    } else if (s->kind != StmtKind::Pass && !(s->kind == StmtKind::Expr)) {
      fail(s->range, "expected the source of one function");
    }
  }
  if (!def) fail(fallback, "expected the source of a function (no def found)");
  return *def;
}

// Keeps parsed sources alive as long as the Functions compiled from them (their ranges point in).
std::shared_ptr<Function> compile_def(Session& session, const FunctionDef& def,
                                      std::shared_ptr<Resolver> resolver,
                                      std::shared_ptr<ModuleInfo> self_module,
                                      std::string module_name) {
  if (session.depth >= kMaxCallDepth)
    fail(def.range, fmt::format("calls nested too deeply to compile: '{}' is the {}th function "
                                "compiled inside its callers' compilation (the limit is {})",
                                def.name, session.depth + 1, kMaxCallDepth));
  struct Depth {
    int& d;
    explicit Depth(int& x) : d(++x) {}
    ~Depth() { --d; }
  } depth(session.depth);
  FunctionEmitter em(session, std::move(resolver));
  em.self_module = std::move(self_module);
  em.module_name = std::move(module_name);
  return em.emit_def(def, em.self_module != nullptr);
}

namespace {

FunctionCache::Key cache_key(const Resolved& res, const CompileOptions& o) {
  return {res.identity, o.optimize, o.semantics ? static_cast<int>(*o.semantics) : -1};
}

}  // namespace

std::shared_ptr<Function> Session::compile_source_fn(const Resolved& res,
                                                     const SourceRange& call_site) {
  if (!res.source && !res.def) fail(call_site, "internal: a function to compile has no source");
  const bool cached = res.cache && res.def && res.identity;  // Note [Function caches]
  if (cached) {
    if (auto fn = res.cache->find(cache_key(res, options))) return fn;
  }
  if (res.identity) {
    auto it = compiled.find(res.identity);
    if (it != compiled.end()) return it->second;
    if (in_progress.count(res.identity))
      fail(call_site, "recursive calls are not supported in script");
    in_progress.insert(res.identity);
  }
  try {
    std::shared_ptr<const Module> mod;
    const FunctionDef* def = res.def.get();
    if (!def) {
      mod = parse_module(res.source);
      def = &single_def(*mod, call_site);
    }
    auto fn = compile_def(*this, *def, res.resolver ? res.resolver : builtin_resolver(), nullptr,
                          res.path);
    if (cached) fn = res.cache->insert(cache_key(res, options), res.def, std::move(fn));
    if (res.identity) {
      in_progress.erase(res.identity);
      compiled[res.identity] = fn;
    }
    return fn;
  } catch (const CompileError& e) {
    if (res.identity) in_progress.erase(res.identity);
    if (call_site.valid()) throw e.called_from(call_site);
    throw;
  }
}

std::shared_ptr<Function> Session::compile_method(const std::shared_ptr<ModuleInfo>& m,
                                                  const std::string& name,
                                                  const SourceRange& call_site) {
  auto key = std::make_pair(m.get(), name);
  auto it = methods.find(key);
  if (it != methods.end()) return it->second;
  auto src = m->methods.find(name);
  if (src == m->methods.end())
    fail(call_site, fmt::format("module '{}' has no method '{}'", m->class_name, name));
  if (methods_in_progress.count(key))
    fail(call_site, "recursive method calls are not supported in script");
  methods_in_progress.insert(key);
  try {
    auto mod = parse_module(src->second);
    const FunctionDef& def = single_def(*mod, call_site);
    auto fn = compile_def(*this, def, m->resolver ? m->resolver : builtin_resolver(), m);
    methods_in_progress.erase(key);
    methods[key] = fn;
    return fn;
  } catch (const CompileError& e) {
    methods_in_progress.erase(key);
    if (call_site.valid()) throw e.called_from(call_site);
    throw;
  }
}

// ---- Functions -----------------------------------------------------------------------------

std::shared_ptr<Function> FunctionEmitter::emit_def(const FunctionDef& def, bool is_method) {
  fn_name = def.name;
  Frame top;
  top.block = graph->block();
  env = &top;
  graph->set_insert_point(graph->block());

  auto schema = std::make_shared<FunctionSchema>();
  schema->ns = "__torch__";
  schema->name = def.name;
  for (size_t i = 0; i < def.params.size(); ++i) {
    const Param& p = def.params[i];
    if (p.kind == Param::VarArgs || p.kind == Param::VarKw)
      fail(p.range, "script functions do not support variable arguments (*args, **kwargs)");
    Value* in = graph->add_input(p.name);
    if (i == 0 && is_method) {
      if (!self_module) fail(p.range, "a method needs its module");
      in->set_type(Type::named(TypeKind::Object, self_module->class_name));
      self_value = in;
      top.vars[p.name] = in;
      top.sugared[p.name] = [&] {
        SV s;
        s.kind = SV::kModule;
        s.value = in;
        s.module = self_module;
        return s;
      }();
      continue;
    }
    Argument arg;
    arg.name = p.name;
    arg.kwarg_only = p.kind == Param::KwOnly;
    if (p.default_value) {
      IValue d = eval_constant(*p.default_value);
      if (!p.annotation) {
        // Unannotated means Tensor; a number/str/bool default says otherwise (torch 2 infers too).
        if (d.is_int())
          arg.type = Type::int_();
        else if (d.is_double())
          arg.type = Type::float_();
        else if (d.is_bool())
          arg.type = Type::bool_();
        else if (d.is_string())
          arg.type = Type::str_();
        else if (d.is_none())
          arg.type = Type::optional(Type::tensor());
      }
      if (!arg.type) arg.type = p.annotation ? parse_type(*p.annotation) : Type::tensor();
      arg.list_len = p.annotation ? broadcasting_list_len(*p.annotation) : 0;
      if (d.is_int() && arg.list_len > 0)  // `padding: BroadcastingList2[int] = 0`
        d = IValue::list(std::vector<IValue>(static_cast<size_t>(arg.list_len), d));
      if (d.is_scalar_type()) d = IValue(torch_dtype_code(d.to_scalar_type()));
      if (d.is_int() && arg.type->kind() == TypeKind::Float)
        d = IValue(static_cast<double>(d.to_int()));
      if (!value_matches_type(d, *arg.type) &&
          !(d.is_none() && arg.type->kind() == TypeKind::Optional))
        fail(p.default_value->range,
             fmt::format("Expected a default value of type {} on parameter \"{}\"",
                         type_str(arg.type), p.name));
      arg.default_value = d;
    } else {
      arg.type = p.annotation ? parse_type(*p.annotation) : Type::tensor();
      arg.list_len = p.annotation ? broadcasting_list_len(*p.annotation) : 0;
    }
    in->set_type(arg.type);
    top.vars[p.name] = in;
    schema->args.push_back(std::move(arg));
  }
  if (def.returns) declared_return = parse_type(*def.returns);

  // Decorators: the script markers are ignored; an autocast decorator is torch's error in
  // torchscript semantics and a region around the whole body in eager semantics.
  const bool eager =
      resolve_autocast_semantics(session.options.semantics) == AutocastSemantics::Eager;
  std::vector<std::pair<Value*, SourceRange>> decorator_regions;
  for (const auto& d : def.decorators) {
    const Expr* e = d.get();
    if (e->kind == ExprKind::Call) e = e->as<Call>().func.get();
    SV s = emit_sv(*e);
    if (s.kind == SV::kAutocast && eager) {
      std::vector<Arg> args;
      if (d->kind == ExprKind::Call) args = emit_args(d->as<Call>());
      decorator_regions.emplace_back(call_autocast(s.path, args, d->range), d->range);
      continue;
    }
    if (s.kind == SV::kAutocast && is_method) {
      // torch 1.13 compiles a module method's body and drops its autocast decorator silently:
      // ignored here too, with a warning at the decorator (eager semantics applies it, above).
      warn_autocast_interop(
          "the @autocast decorator of a scripted module's method is ignored in torchscript "
          "semantics, as torch 1.13 ignores it (silently): the method runs without the region; "
          "use `with autocast(...):` inside it, or eager semantics",
          d->range);
      continue;
    }
    if (s.kind == SV::kAutocast)
      fail(d->range, "TorchScript error: @autocast() decorator is not supported in script mode");
    if (s.kind == SV::kNamespace &&
        (s.path == "torch.jit.script" || s.path == "torch.jit.export" ||
         s.path == "torch.jit.script_method" || s.path == "staticmethod"))
      continue;
    fail(d->range,
         "decorators are not supported in script (only @torch.jit.script / @torch.jit.export)");
  }

  use_exit_flags = contains_nested_return(def.body);
  if (use_exit_flags) {
    top.vars[kRet] = constant(IValue(false), def.range);
    Node* u = insert(graph->create(sym::prim::Uninitialized, {}, 1), def.range);
    u->output()->set_type(declared_return ? declared_return : Type::any());
    top.vars[kRetVal] = u->output();
  }
  // Outermost decorator first, as Python applies them.
  for (const auto& [obj, range] : decorator_regions) {
    Node* enter = insert(graph->create(sym::prim::Enter, {obj}, 1), range);
    enter->output()->set_type(obj->type());
  }
  emit_body(def.body);
  const SourceRange end_range = def.body.empty() ? def.range : def.body.back()->range;
  for (size_t i = decorator_regions.size(); i-- > 0;) {
    Node* exit = insert(graph->create(sym::prim::Exit, {decorator_regions[i].first}, 1),
                        decorator_regions[i].second);
    exit->output()->set_type(Type::none());
  }
  if (use_exit_flags && !exits_of(def.body, false).always) {
    // Falling off the end returns None on the paths that did not return.
    Value* ret = lookup_var(kRet);
    Value* not_ret =
        call_builtin_op("aten::__not__", {Arg{SV::of(ret), ret, end_range, ""}}, end_range);
    emit_if_blocks(
        not_ret, end_range, [&] { set_var(kRetVal, none(end_range), end_range); }, [] {});
  }
  Value* result = env->vars.count(kRetVal) ? env->vars[kRetVal] : nullptr;
  if ((!result || is_uninitialized_placeholder(result)) && env->terminated && declared_return) {
    // The body always raises (a @torch.jit.unused stub): the declared type, never produced, as
    // torch's prim::Uninitialized.
    Node* u = insert(graph->create(sym::prim::Uninitialized, {}, 1), end_range);
    u->output()->set_type(declared_return);
    result = u->output();
  }
  if (!result || is_uninitialized_placeholder(result)) result = none(end_range);
  if (declared_return) {
    if (!result->type()->is_subtype_of(*declared_return) &&
        !(is_none(result->type()) && declared_return->kind() == TypeKind::Optional))
      fail(end_range,
           fmt::format("Return value was annotated as having type {} but is actually of type {}",
                       type_str(declared_return), type_str(result->type())));
  }
  graph->register_output(result);
  Argument ret;
  ret.name = "";
  ret.type = declared_return ? declared_return : result->type()->unrefined();
  schema->returns.push_back(ret);
  graph->verify();

  // A script class's method is named by its class (__torch__.Pair.total), as torch names it.
  const std::string name =
      self_module && self_module->is_class
          ? self_module->class_name + "." + def.name
          : qualified_name_for(module_name.empty() ? def.name : module_name + "." + def.name);
  auto fn = std::make_shared<Function>(name, graph);
  fn->set_schema(schema);
  fn->set_optimizable(session.options.optimize);
  if (session.options.semantics) fn->set_autocast_semantics(session.options.semantics);
  return fn;
}

}  // namespace ampjit::script::detail
