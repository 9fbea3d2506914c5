// ampjit-dump: prints the graph of a function in a standalone .py file, or of each method of a
// TorchScript archive, before and after the JIT passes (script/dump_tool.h has the options and the
// formats).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "script/dump_tool.h"
#include "serialization/jit_load.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return ampjit::script::run_dump(args, std::cout, std::cerr, [](const std::string& path) {
    const ampjit::jit::Module m = ampjit::jit::load(path);
    std::vector<std::string> names = m.method_names();
    std::stable_partition(names.begin(), names.end(),
                          [](const std::string& n) { return n == "forward"; });
    std::vector<std::pair<std::string, std::shared_ptr<const ampjit::Graph>>> out;
    for (const std::string& name : names) out.emplace_back(name, m.method(name)->graph());
    return out;
  });
}
