// ampjit-dump: prints the graph of a function in a standalone .py file before and after the JIT
// passes (script/dump_tool.h has the options and the formats).
#include <iostream>
#include <string>
#include <vector>

#include "script/dump_tool.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return ampjit::script::run_dump(args, std::cout, std::cerr);
}
