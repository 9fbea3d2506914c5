// ampjit-dump as a library: compiles a standalone .py file without Python (compile_source with
// the static resolver), prints one function's graph as built, runs the JIT passes the user names
// on a copy, and prints the graph after them, as text, DOT or JSON. tools/ampjit_dump.cpp is only
// `return run_dump(args, std::cout, std::cerr)`.
//
//   $ ampjit-dump model.py --function f --passes all --eager-autocast cpu=bfloat16
//   # f: as built
//   graph(%x : Tensor, ...
//
//   # after inline, constprop, autocast, cse, dce (eager autocast cpu=bfloat16)
//   graph(%x : Tensor, ...
//
// With --print-after-each the second header is one `# after <pass>` per pass instead. Text and
// DOT print each stage under its header (`// ...` before each digraph) as soon as it exists, so a
// failing pass still shows the graphs before it; JSON prints one document holding every stage.
//
// Every error (a bad flag, a missing file, a CompileError with its file:line:col and caret, a pass
// diagnostic) goes to `err` with a non-zero status: 2 for usage errors, 1 for the rest.
#pragma once
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/autocast/autocast_state.h"
#include "runtime/autocast/semantics.h"
#include "runtime/error.h"
#include "runtime/ir/graph_render.h"
#include "runtime/ir/ir.h"

namespace ampjit::script {

// A bad command line: reported with the usage hint, exit status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

enum class DumpFormat { Text, Dot, Json };

struct DumpOptions {
  std::string file;
  std::string function;             // "" = the last top-level def
  std::vector<std::string> passes;  // short names, in pipeline order
  bool print_after_each = false;
  AutocastContext eager;  // the state the autocast pass starts from (all off by default)
  // Note [Autocast semantics] (runtime/autocast/semantics.h): in eager semantics the autocast pass
  // does not run (a Function's pipeline skips it; the dispatcher autocasts at run time), so neither
  // does the tool's.
  AutocastSemantics semantics = AutocastSemantics::TorchScript;
  DumpFormat format = DumpFormat::Text;
  std::string png;  // render the final graph with graphviz to this file
  bool help = false;
};

// The passes by short name, in the pipeline's order (script/passes/pipeline.h): inline, constprop,
// autocast, cse, dce. `--passes all` is this list.
const std::vector<std::string>& pipeline_pass_names();

// "cse,inline" -> {"inline", "cse"}: the named passes in pipeline order, once each; "all" is every
// pass. Long names (inline_calls, constant_propagation, autocast_pass,
// common_subexpression_elimination, dead_code_elimination) are accepted too. Throws UsageError.
std::vector<std::string> parse_pass_list(std::string_view list);

// "cpu=bfloat16,cuda=float16", "cpu=off", "cuda" (its default dtype): throws UsageError.
AutocastContext parse_eager_autocast(std::string_view spec);

// The command line (without the program name). Throws UsageError.
DumpOptions parse_dump_args(const std::vector<std::string>& args);

// The --help text.
std::string dump_usage();

// Runs one named pass in place (the autocast pass from `eager`), then verifies the graph.
void run_dump_pass(Graph& g, const std::string& pass, const AutocastContext& eager);
// Whether `pass` runs under `options` (the autocast pass does not in eager semantics).
bool dump_pass_runs(const std::string& pass, const DumpOptions& options);

// Prints `g` (a function's graph as built), then runs options.passes on a copy and prints the
// result (after each pass with print_after_each), in options.format, to `out`. `function` names
// the graph in headers. Returns the final graph. Pass errors propagate.
std::unique_ptr<Graph> dump_graph(const Graph& g, const std::string& function,
                                  const DumpOptions& options, std::ostream& out);

// The methods of the module in a TorchScript archive, as (name, graph as built), forward first:
// what the tool dumps for a zip file. The loader is in a later layer (serialization/jit_load.h), so
// tools/ampjit_dump.cpp gives it.
using ArchiveMethods =
    std::function<std::vector<std::pair<std::string, std::shared_ptr<const Graph>>>(
        const std::string& path)>;

// The whole tool: parses `args`, compiles options.file, dumps the chosen function (for an archive,
// read with `archive` when given: each method, or the chosen one). Returns the exit status (0, 1
// for errors, 2 for usage errors).
int run_dump(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
             const ArchiveMethods& archive = {});

}  // namespace ampjit::script
