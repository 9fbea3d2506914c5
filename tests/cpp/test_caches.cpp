// Long-lived caches (Note [Long-lived caches] in runtime/caches.h): the registry, and the loader
// keeping nothing past its module (Note [Function caches] in script/compiler.h). CI runs this
// binary under ASan's leak checker too.
#include <gmock/gmock.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "runtime/caches.h"
#include "runtime/module_object.h"
#include "script/compiler.h"
#include "serialization/jit_load.h"
#include "serialization/jit_save.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

size_t cache_size(const std::string& name) {
  for (const CacheInfo& c : registered_caches())
    if (c.name == name) return c.size();
  ADD_FAILURE() << "no cache named " << name;
  return 0;
}

TEST(Caches, EveryCacheIsRegisteredWithItsBound) {
  std::vector<std::string> names;
  for (const CacheInfo& c : registered_caches()) {
    names.push_back(c.name);
    EXPECT_FALSE(c.bound.empty()) << c.name;
  }
  for (const char* want : {"library functions", "cpu large buffers", "autocast weight casts",
                           "symbols", "warnings shown once"})
    EXPECT_THAT(names, ::testing::Contains(std::string(want)));
}

TEST(Caches, EmptyingByNameReachesOnlyThatCache) {
  static size_t a = 3, b = 5;  // registered for the life of the process
  register_cache({"test cache a", "a test", [] { return a; }, [] { a = 0; }});
  register_cache({"test cache b", "a test", [] { return b; }, [] { b = 0; }});
  EXPECT_TRUE(empty_caches("test cache a"));
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 5u);
  EXPECT_FALSE(empty_caches("no such cache"));
  EXPECT_TRUE(empty_caches());  // every cache
  EXPECT_EQ(b, 0u);
}

// A module whose forward calls a torch.nn.functional def, saved as torch does: its archive holds
// the def's code under code/__torch__/torch/nn/functional.py, as archives from torch do.
std::string archive_calling_a_functional() {
  auto info = std::make_shared<script::ModuleInfo>();
  info->class_name = "__torch__.Net";
  info->attrs.push_back({"training", Type::bool_(), false, {}, nullptr});
  info->methods["forward"] = std::make_shared<Source>(
      "def forward(self, x):\n    return torch.nn.functional.relu(x) * 2.0\n", "net.py");
  info->resolver = script::builtin_resolver();
  auto forward = script::compile_module(info);
  auto obj = Ref<ModuleObject>(new ModuleObject(info->class_name));
  obj->set_attr("training", IValue(false));
  jit::SaveClasses classes;
  classes[obj.get()] = jit::SaveClass{info->class_name,
                                      {{"training", jit::Module::AttrKind::kValue, nullptr, {}}},
                                      {{"forward", forward}}};
  return jit::save_bytes(obj, classes, {}, "net");
}

// The Functions a graph calls (its prim::CallFunction nodes' `value`), and theirs, transitively.
void collect_callees(const Graph& g, std::vector<std::weak_ptr<Function>>& out) {
  std::vector<const Block*> blocks{g.block()};
  while (!blocks.empty()) {
    const Block* b = blocks.back();
    blocks.pop_back();
    for (const Node* n : b->nodes()) {
      for (const Block* inner : n->blocks()) blocks.push_back(inner);
      if (n->kind() != sym::prim::CallFunction) continue;
      auto* f = dynamic_cast<FunctionObject*>(n->attr(sym::attr::value).object());
      ASSERT_NE(f, nullptr);
      const bool seen =
          std::any_of(out.begin(), out.end(), [&](const auto& w) { return w.lock() == f->fn; });
      if (seen) continue;
      out.push_back(f->fn);
      collect_callees(*f->fn->graph(), out);
    }
  }
}

TEST(Caches, ALoadedModuleTakesWhatWasCompiledForItWhenItGoes) {
  const std::string bytes = archive_calling_a_functional();
  const Tensor x = testing::random_tensor({3, 4}, ScalarType::Float32, 1);
  std::vector<std::weak_ptr<Function>> compiled;
  size_t library = 0;
  for (int i = 0; i < 20; ++i) {
    jit::Module m = jit::load_bytes(bytes, "net.pt");
    const Tensor y = m.forward({IValue(x)}).to_tensor();
    EXPECT_EQ(testing::values(y), testing::values(ops::mul_Scalar(ops::relu(x), Scalar(2.0))));
    if (i == 0) {
      library = cache_size("library functions");
      compiled.push_back(m.method("forward"));
      collect_callees(*m.method("forward")->graph(), compiled);
    }
    // Loading and running again compiles nothing into a process-wide cache.
    EXPECT_EQ(cache_size("library functions"), library) << "load " << i;
  }
  ASSERT_GE(compiled.size(), 2u);  // forward and the archive's relu
  for (const auto& w : compiled) EXPECT_TRUE(w.expired());
}

}  // namespace
}  // namespace ampjit
