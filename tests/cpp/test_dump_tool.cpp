// ampjit-dump (script/dump_tool.h) and the static resolver (script/static_resolver.h): the
// resolver's mappings, pass selection and order, options, the text/DOT/JSON shapes, error exits;
// then the golden dump files (tests/golden/dump/*.py), each run through the tool and checked with
// FileCheck.
#include <gmock/gmock.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <variant>

#include "runtime/ir/filecheck.h"
#include "runtime/ir/ir.h"
#include "script/dump_tool.h"
#include "script/parser.h"
#include "script/static_resolver.h"

namespace ampjit::script {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void expect_checks(const std::string& text, const std::string& checks) {
  FileCheckResult r = filecheck(text, checks);
  EXPECT_TRUE(r.ok) << r.message << "\n--- output ---\n" << text;
}

// ---- The static resolver -----------------------------------------------------------------------

Resolved resolve_in(const std::string& file_text, const std::string& name) {
  auto source = std::make_shared<const Source>(file_text, "model.py");
  auto module = parse_module(source);
  return static_resolver(*module)->resolve(name, SourceRange(source, 0, 1));
}

constexpr const char* kImports = R"(import torch
import ampjit as at
import torch.nn.functional as F
from torch.nn import functional as G
import torch.nn as nn
from ampjit import nn as nn2
import math
from torch import autocast
from torch.cpu.amp import autocast as cpu_autocast
from ampjit.cuda.amp import autocast as cuda_autocast
from typing import List, Optional
from torch import relu, float16 as half_t
import numpy as np
from os.path import join
import os.path
N = 4
SCALE = 0.5
NAME = "x"
NEG = -3
DT = torch.bfloat16
PI = math.pi
ALIAS = N
SHAPE = (2, N)
A, B = 1, 2.5
X = torch.randn(2)
N2 = 1
N2 += 1

class Net(nn.Module):
    pass

def f(x):
    return x
)";

void expect_namespace(const std::string& name, const std::string& path) {
  Resolved r = resolve_in(kImports, name);
  EXPECT_EQ(r.kind, Resolved::kNamespace) << name;
  EXPECT_EQ(r.path, path) << name;
}

TEST(StaticResolver, ImportsAreNamespaces) {
  expect_namespace("torch", "torch");
  expect_namespace("at", "torch");
  expect_namespace("F", "torch.nn.functional");
  expect_namespace("G", "torch.nn.functional");
  expect_namespace("nn", "torch.nn");
  expect_namespace("nn2", "torch.nn");
  expect_namespace("math", "math");
  expect_namespace("List", "typing.List");
  expect_namespace("Optional", "typing.Optional");
  expect_namespace("relu", "torch.relu");
}

TEST(StaticResolver, AutocastClasses) {
  for (auto [name, path] : {std::pair{"autocast", "torch.autocast"},
                            {"cpu_autocast", "torch.cpu.amp.autocast"},
                            {"cuda_autocast", "torch.cuda.amp.autocast"}}) {
    Resolved r = resolve_in(kImports, name);
    EXPECT_EQ(r.kind, Resolved::kAutocastClass) << name;
    EXPECT_EQ(r.path, path) << name;
  }
}

TEST(StaticResolver, Constants) {
  auto constant = [](const std::string& name) {
    Resolved r = resolve_in(kImports, name);
    EXPECT_EQ(r.kind, Resolved::kConstant) << name << ": " << r.message;
    return r.constant;
  };
  EXPECT_EQ(constant("N").to_int(), 4);
  EXPECT_EQ(constant("SCALE").to_double(), 0.5);
  EXPECT_EQ(constant("NAME").to_string_ref(), "x");
  EXPECT_EQ(constant("NEG").to_int(), -3);
  EXPECT_EQ(constant("DT").to_scalar_type(), ScalarType::BFloat16);
  EXPECT_EQ(constant("half_t").to_scalar_type(), ScalarType::Float16);
  EXPECT_NEAR(constant("PI").to_double(), 3.14159265, 1e-8);
  EXPECT_EQ(constant("ALIAS").to_int(), 4);
  EXPECT_EQ(constant("A").to_int(), 1);
  EXPECT_EQ(constant("B").to_double(), 2.5);
  IValue shape = constant("SHAPE");
  ASSERT_TRUE(shape.is_tuple());
  ASSERT_EQ(shape.tuple_elems().size(), 2u);
  EXPECT_EQ(shape.tuple_elems()[1].to_int(), 4);
}

TEST(StaticResolver, UnsupportedValuesSayWhy) {
  auto message = [](const std::string& name) {
    Resolved r = resolve_in(kImports, name);
    EXPECT_EQ(r.kind, Resolved::kUnsupported) << name;
    return r.message;
  };
  EXPECT_THAT(message("np"), HasSubstr("'numpy'"));
  EXPECT_THAT(message("np"), HasSubstr("model.py:13:"));
  EXPECT_THAT(message("join"), HasSubstr("os.path.join"));
  EXPECT_THAT(message("os"), HasSubstr("'os'"));
  EXPECT_THAT(message("X"), HasSubstr("model.py:25:"));
  EXPECT_THAT(message("N2"), HasSubstr("model.py:27:"));  // the augmented assignment
  EXPECT_THAT(message("Net"), HasSubstr("'Net' is a class (defined at model.py:29:1)"));
  EXPECT_THAT(message("Net"), HasSubstr("nn.Module"));
}

TEST(StaticResolver, DefsAreLeftToCompileSource) {
  auto module = parse_module(std::make_shared<const Source>(kImports, "model.py"));
  auto resolver = static_resolver(*module);
  EXPECT_EQ(resolver->bindings().count("f"), 0u);
  EXPECT_EQ(resolver->bindings().count("torch"), 1u);
}

TEST(StaticResolver, ModulesNeedTheirImport) {
  Resolved r = resolve_in("def f(x):\n    return torch.relu(x)\n", "torch");
  EXPECT_EQ(r.kind, Resolved::kUnsupported);
  EXPECT_THAT(r.message, HasSubstr("add `import torch`"));
  // A later binding replaces an earlier one, as in Python.
  EXPECT_EQ(resolve_in("import numpy as torch\nimport torch\n", "torch").kind,
            Resolved::kNamespace);
  EXPECT_EQ(resolve_in("import torch\ntorch = 3\n", "torch").kind, Resolved::kConstant);
}

// ---- Options -----------------------------------------------------------------------------------

TEST(DumpOptions, PassesRunInPipelineOrder) {
  EXPECT_THAT(pipeline_pass_names(), ElementsAre("inline", "constprop", "autocast", "cse", "dce"));
  EXPECT_EQ(parse_pass_list("all"), pipeline_pass_names());
  EXPECT_THAT(parse_pass_list("dce,inline"), ElementsAre("inline", "dce"));
  EXPECT_THAT(parse_pass_list("cse,cse,autocast"), ElementsAre("autocast", "cse"));
  EXPECT_THAT(parse_pass_list("dead_code_elimination,constant_propagation"),
              ElementsAre("constprop", "dce"));
  EXPECT_EQ(parse_pass_list("dce,all"), pipeline_pass_names());
  try {
    parse_pass_list("inline,fold");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr("unknown pass 'fold'; the passes are inline, constprop, autocast, cse, dce"));
  }
  EXPECT_THROW(parse_pass_list("inline,"), UsageError);
}

TEST(DumpOptions, EagerAutocast) {
  AutocastContext c = parse_eager_autocast("cpu=bfloat16,cuda=float16");
  EXPECT_TRUE(c.cpu_enabled && c.cuda_enabled);
  EXPECT_EQ(c.cpu_dtype, ScalarType::BFloat16);
  EXPECT_EQ(c.cuda_dtype, ScalarType::Float16);
  c = parse_eager_autocast("cpu=float16");
  EXPECT_TRUE(c.cpu_enabled);
  EXPECT_FALSE(c.cuda_enabled);
  EXPECT_EQ(c.cpu_dtype, ScalarType::Float16);
  EXPECT_EQ(parse_eager_autocast("cpu=off"), AutocastContext{});
  c = parse_eager_autocast("cuda");
  EXPECT_TRUE(c.cuda_enabled);
  EXPECT_EQ(c.cuda_dtype, ScalarType::Float16);
  EXPECT_EQ(parse_eager_autocast("cuda=half").cuda_dtype, ScalarType::Float16);
  EXPECT_THROW(parse_eager_autocast("cpu=float32"), UsageError);
  EXPECT_THROW(parse_eager_autocast("tpu=bfloat16"), UsageError);
  EXPECT_THROW(parse_eager_autocast(""), UsageError);
}

TEST(DumpOptions, CommandLine) {
  DumpOptions o =
      parse_dump_args({"m.py", "--function", "g", "--passes=cse,inline", "--print-after-each",
                       "--eager-autocast", "cpu=bfloat16", "--format", "json", "--png=o.png"});
  EXPECT_EQ(o.file, "m.py");
  EXPECT_EQ(o.function, "g");
  EXPECT_THAT(o.passes, ElementsAre("inline", "cse"));
  EXPECT_TRUE(o.print_after_each);
  EXPECT_TRUE(o.eager.cpu_enabled);
  EXPECT_EQ(o.format, DumpFormat::Json);
  EXPECT_EQ(o.png, "o.png");
  EXPECT_EQ(o.semantics, AutocastSemantics::TorchScript);
  EXPECT_EQ(parse_dump_args({"--semantics", "eager", "m.py"}).semantics, AutocastSemantics::Eager);
  EXPECT_TRUE(parse_dump_args({"--help"}).help);

  auto usage_error = [](std::vector<std::string> args) {
    try {
      parse_dump_args(args);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(usage_error({}), "no input file");
  EXPECT_EQ(usage_error({"a.py", "b.py"}), "one FILE.py expected, got 'a.py' and 'b.py'");
  EXPECT_EQ(usage_error({"a.py", "--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(usage_error({"a.py", "--passes"}), "--passes needs a value");
  EXPECT_EQ(usage_error({"a.py", "--print-after-each=1"}), "--print-after-each takes no value");
  EXPECT_EQ(usage_error({"a.py", "--format", "svg"}),
            "--format: 'svg'; expected text, dot or json");
  EXPECT_EQ(usage_error({"a.py", "--semantics", "python"}),
            "--semantics: expected 'torchscript' or 'eager', got 'python'");
}

// ---- Formats -----------------------------------------------------------------------------------

// A loop with an if inside, unnamed values, an attribute of each kind the emitters quote.
constexpr const char* kLoopGraph = R"(graph(%x : Tensor,
      %n : int,
      %flag : bool):
  %3 : bool = prim::Constant[value=1]()
  %alpha : int = prim::Constant[value=1]()
  %s : str = prim::Constant[value="a|b{c}"]()
  %f : float = prim::Constant[value=0.5]()
  %y : Tensor = prim::Loop(%n, %3, %x)
    block0(%i : int, %acc : Tensor):
      %z : Tensor = prim::If(%flag) # model.py:7:8
        block0():
          %neg : Tensor = aten::neg(%acc)
          -> (%neg)
        block1():
          %sum : Tensor = aten::add(%acc, %acc, %alpha)
          -> (%sum)
      -> (%3, %z)
  %dead : Tensor = aten::mul(%y, %f)
  %out : (Tensor, int) = prim::TupleConstruct(%y, %n)
  return (%out)
)";

// A minimal JSON reader: enough to check the emitter's output is well formed and walk it.
struct JValue {
  std::variant<std::nullptr_t, bool, double, std::string, std::vector<JValue>,
               std::map<std::string, JValue>>
      v;
  const JValue& operator[](const std::string& k) const {
    return std::get<std::map<std::string, JValue>>(v).at(k);
  }
  const JValue& operator[](size_t i) const { return std::get<std::vector<JValue>>(v).at(i); }
  size_t size() const {
    if (auto* a = std::get_if<std::vector<JValue>>(&v)) return a->size();
    return std::get<std::map<std::string, JValue>>(v).size();
  }
  bool has(const std::string& k) const {
    return std::get<std::map<std::string, JValue>>(v).count(k) > 0;
  }
  const std::string& str() const { return std::get<std::string>(v); }
  double num() const { return std::get<double>(v); }
};

class JsonReader {
 public:
  explicit JsonReader(std::string_view s) : s_(s) {}
  JValue document() {
    JValue v = value();
    ws();
    if (i_ != s_.size()) throw std::runtime_error("trailing text at " + std::to_string(i_));
    return v;
  }

 private:
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    ws();
    if (i_ >= s_.size() || s_[i_] != c)
      throw std::runtime_error(std::string("expected ") + c + " at " + std::to_string(i_));
    ++i_;
  }
  bool peek(char c) {
    ws();
    return i_ < s_.size() && s_[i_] == c;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        const char e = s_.at(++i_);
        if (e == 'u') {
          out += static_cast<char>(std::stoi(std::string(s_.substr(i_ + 1, 4)), nullptr, 16));
          i_ += 4;
        } else {
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        }
      } else {
        out += s_[i_];
      }
      ++i_;
    }
    expect('"');
    return out;
  }
  JValue value() {
    ws();
    if (peek('{')) {
      expect('{');
      std::map<std::string, JValue> m;
      if (!peek('}')) do {
          std::string k = string();
          expect(':');
          m.emplace(std::move(k), value());
        } while (peek(',') && (expect(','), true));
      expect('}');
      return {std::move(m)};
    }
    if (peek('[')) {
      expect('[');
      std::vector<JValue> a;
      if (!peek(']')) do
          a.push_back(value());
        while (peek(',') && (expect(','), true));
      expect(']');
      return {std::move(a)};
    }
    if (peek('"')) return {string()};
    for (auto [word, val] : {std::pair<std::string_view, JValue>{"null", {nullptr}},
                             {"true", {true}},
                             {"false", {false}}})
      if (s_.substr(i_, word.size()) == word) {
        i_ += word.size();
        return val;
      }
    size_t used = 0;
    const double d = std::stod(std::string(s_.substr(i_, 32)), &used);
    i_ += used;
    return {d};
  }
  std::string_view s_;
  size_t i_ = 0;
};

TEST(DumpFormats, JsonShape) {
  auto g = parse_graph(kLoopGraph);
  const std::string text = graph_to_json(*g);
  JValue j = JsonReader(text).document();
  ASSERT_EQ(j["inputs"].size(), 3u);
  EXPECT_EQ(j["inputs"][1]["name"].str(), "%n");
  EXPECT_EQ(j["inputs"][1]["type"].str(), "int");
  EXPECT_EQ(j["outputs"][0].str(), "%out");
  ASSERT_EQ(j["nodes"].size(), 7u);
  const JValue& c = j["nodes"][0];
  EXPECT_EQ(c["kind"].str(), "prim::Constant");
  EXPECT_EQ(c["outputs"][0]["name"].str(), "%0");     // the text printer's number
  EXPECT_EQ(c["attributes"]["value"].v.index(), 1u);  // a bool
  EXPECT_EQ(j["nodes"][2]["attributes"]["value"].str(), "a|b{c}");
  EXPECT_EQ(j["nodes"][3]["attributes"]["value"].num(), 0.5);
  const JValue& loop = j["nodes"][4];
  EXPECT_EQ(loop["kind"].str(), "prim::Loop");
  EXPECT_EQ(loop["inputs"][1].str(), "%0");
  ASSERT_EQ(loop["blocks"].size(), 1u);
  const JValue& body = loop["blocks"][0];
  EXPECT_EQ(body["inputs"][1]["name"].str(), "%acc");
  EXPECT_EQ(body["outputs"][0].str(), "%0");
  const JValue& cond = body["nodes"][0];
  EXPECT_EQ(cond["kind"].str(), "prim::If");
  EXPECT_EQ(cond["source"]["file"].str(), "model.py");
  EXPECT_EQ(cond["source"]["line"].num(), 7);
  EXPECT_EQ(cond["source"]["col"].num(), 8);
  ASSERT_EQ(cond["blocks"].size(), 2u);
  EXPECT_EQ(cond["blocks"][1]["nodes"][0]["op"].str(), "aten::add.Tensor");
  EXPECT_EQ(cond["blocks"][1]["nodes"][0]["inputs"][2].str(), "%alpha");
  EXPECT_FALSE(j["nodes"][5].has("source"));
}

TEST(DumpFormats, JsonNamesMatchTheTextForm) {
  // Unnamed values everywhere: each JSON name is the one the text form prints at the same place.
  auto g = parse_graph(R"(graph(%0 : Tensor, %1 : bool):
  %7 : Tensor = prim::If(%1)
    block0():
      %8 : Tensor = aten::neg(%0)
      -> (%8)
    block1():
      -> (%0)
  %9 : Tensor = aten::relu(%7)
  return (%9)
)");
  const std::string text = g->str();
  JValue j = JsonReader(graph_to_json(*g)).document();
  const JValue& cond = j["nodes"][0];
  const JValue& neg = cond["blocks"][0]["nodes"][0];
  EXPECT_THAT(text, HasSubstr(cond["outputs"][0]["name"].str() + " : Tensor = prim::If(" +
                              cond["inputs"][0].str()));
  EXPECT_THAT(text, HasSubstr(neg["outputs"][0]["name"].str() + " : Tensor = aten::neg(" +
                              neg["inputs"][0].str()));
  EXPECT_THAT(text, HasSubstr("-> (" + cond["blocks"][1]["outputs"][0].str() + ")"));
  EXPECT_THAT(text, HasSubstr("return (" + j["outputs"][0].str() + ")"));
  EXPECT_EQ(j["outputs"][0].str(), "%4");
}

TEST(DumpFormats, DotShape) {
  auto g = parse_graph(kLoopGraph);
  const std::string dot = graph_to_dot(*g, "f: as built");
  expect_checks(dot, R"(
CHECK: digraph "f: as built" {
CHECK: node [shape=record
CHECK: n0 [label="{graph inputs|{<o0> %x : Tensor|<o1> %n : int|<o2> %flag : bool}}"];
CHECK: [label="{prim::Constant|value=\"a\|b\{c\}\"|{<o0> %s : str}}"];
CHECK: subgraph cluster_0 {
CHECK-NEXT: label="block0 of prim::Loop"; style=dashed;
CHECK-NEXT: [label="{block0 inputs|{<o0> %i : int|<o1> %acc : Tensor}}"];
CHECK: subgraph cluster_1 {
CHECK: label="block1 of prim::If"
CHECK: [label="{aten::add|{<o0> %sum : Tensor}}"];
CHECK: [label="{block0 outputs}"];
CHECK: [label="{return}"];
CHECK: n0:o0 -> {{n[0-9]+}} [label="%x"];
CHECK: }
)");
  EXPECT_THAT(dot, HasSubstr("tooltip=\"model.py:7:8\""));
  // One edge per use, one dotted edge per block.
  size_t uses = 0, solid = 0, dotted = 0;
  std::function<void(const Block&)> count = [&](const Block& b) {
    for (const Node* n : b) {
      uses += n->inputs().size();
      for (const Block* sub : n->blocks()) count(*sub);
    }
    uses += b.outputs().size();
  };
  count(*g->block());
  std::istringstream lines(dot);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" -> ") == std::string::npos) continue;
    (line.find("style=dotted") != std::string::npos ? dotted : solid)++;
  }
  EXPECT_EQ(solid, uses);
  EXPECT_EQ(dotted, 3u);
}

TEST(DumpFormats, StagesAndHeaders) {
  auto g = parse_graph(kLoopGraph);
  DumpOptions o;
  o.passes = {"cse", "dce"};
  std::ostringstream out;
  auto final_graph = dump_graph(*g, "f", o, out);
  expect_checks(out.str(), R"(
CHECK: # f: as built
CHECK-NEXT: graph(%x : Tensor,
CHECK: aten::mul
CHECK: # after cse, dce
CHECK-NEXT: graph(
CHECK-NOT: aten::mul
CHECK: return (%out)
)");
  EXPECT_EQ(final_graph->str().find("aten::mul"), std::string::npos);
  EXPECT_NE(g->str().find("aten::mul"), std::string::npos);  // the input graph is untouched

  o.print_after_each = true;
  out.str("");
  dump_graph(*g, "f", o, out);
  expect_checks(out.str(), R"(
CHECK: # f: as built
CHECK: # after cse
CHECK: aten::mul
CHECK: # after dce
CHECK-NOT: aten::mul
CHECK-NOT: # after
)");
}

TEST(DumpFormats, AutocastPassUsesTheEagerState) {
  auto g = parse_graph(R"(graph(%a : Tensor, %b : Tensor):
  %y : Tensor = aten::mm(%a, %b)
  return (%y)
)");
  DumpOptions o;
  o.passes = {"autocast"};
  std::ostringstream out;
  dump_graph(*g, "f", o, out);
  EXPECT_EQ(out.str().find("_autocast_to_reduced_precision"), std::string::npos);
  o.eager = parse_eager_autocast("cpu=bfloat16");
  out.str("");
  dump_graph(*g, "f", o, out);
  expect_checks(out.str(), R"(
CHECK: # after autocast (eager autocast cpu=bfloat16)
CHECK: %{{[0-9]+}} : Tensor = aten::_autocast_to_reduced_precision(%a,
CHECK: aten::mm(%{{[0-9]+}}, %{{[0-9]+}})
)");
}

TEST(DumpFormats, EagerSemanticsSkipsTheAutocastPass) {
  // Note [Autocast semantics]: a Function in eager semantics never runs the JIT autocast pass.
  auto g = parse_graph(R"(graph(%a : Tensor, %b : Tensor):
  %y : Tensor = aten::mm(%a, %b)
  %z : Tensor = aten::mm(%a, %b)
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::sub(%y, %z, %one)
  return (%s)
)");
  DumpOptions o;
  o.passes = parse_pass_list("all");
  o.eager = parse_eager_autocast("cpu=bfloat16");
  o.semantics = AutocastSemantics::Eager;
  EXPECT_FALSE(dump_pass_runs("autocast", o));
  EXPECT_TRUE(dump_pass_runs("cse", o));
  std::ostringstream out;
  dump_graph(*g, "f", o, out);
  expect_checks(out.str(), R"(
CHECK: # after inline, constprop, autocast, cse, dce (eager semantics: the autocast pass does not run)
CHECK-NOT: _autocast_to
CHECK: %y : Tensor = aten::mm(%a, %b)
CHECK-NOT: aten::mm
CHECK: return
)");
  o.print_after_each = true;
  out.str("");
  dump_graph(*g, "f", o, out);
  EXPECT_THAT(out.str(), HasSubstr("# after autocast (not run in eager semantics)\n"));
}

TEST(DumpFormats, JsonDocumentHoldsEveryStage) {
  auto g = parse_graph(kLoopGraph);
  DumpOptions o;
  o.file = "model.py";
  o.format = DumpFormat::Json;
  o.passes = {"cse", "dce"};
  o.print_after_each = true;
  std::ostringstream out;
  dump_graph(*g, "f", o, out);
  JValue j = JsonReader(out.str()).document();
  EXPECT_EQ(j["function"].str(), "f");
  EXPECT_EQ(j["file"].str(), "model.py");
  EXPECT_EQ(j["semantics"].str(), "torchscript");
  EXPECT_EQ(j["eager_autocast"].str(), "off");
  ASSERT_EQ(j["stages"].size(), 3u);
  EXPECT_EQ(j["stages"][0]["stage"].str(), "as built");
  EXPECT_EQ(j["stages"][2]["stage"].str(), "after dce");
  EXPECT_EQ(j["stages"][0]["graph"]["nodes"].size(), 7u);
  EXPECT_EQ(j["stages"][2]["graph"]["nodes"].size(), 4u);  // mul, then its constant and the str
}

// ---- The tool's exits --------------------------------------------------------------------------

struct DumpRun {
  int status;
  std::string out, err;
};

DumpRun run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = run_dump(args, out, err);
  return {status, out.str(), err.str()};
}

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("ampjit_dump_test_" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(DumpTool, Help) {
  DumpRun r = run({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: ampjit-dump FILE.py"));
  EXPECT_THAT(r.out, HasSubstr("inline, constprop, autocast, cse, dce"));
  EXPECT_EQ(r.err, "");
}

TEST(DumpTool, UsageErrorsExitTwo) {
  DumpRun r = run({"m.py", "--bogus"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "ampjit-dump: unknown option '--bogus'\n(see ampjit-dump --help)\n");
  EXPECT_EQ(run({}).status, 2);
  EXPECT_EQ(run({"m.py", "--passes", "nope"}).status, 2);
}

TEST(DumpTool, MissingFile) {
  DumpRun r = run({"/nonexistent/model.py"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "ampjit-dump: cannot read '/nonexistent/model.py': No such file or directory\n");
  EXPECT_EQ(r.out, "");
}

TEST(DumpTool, SyntaxErrorHasLocationAndCaret) {
  const std::string path = temp_file("syntax.py", "import torch\n\ndef f(x):\n    return x +* 2\n");
  DumpRun r = run({path});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr(path + ":4:"));
  EXPECT_THAT(r.err, HasSubstr("\n    return x +* 2\n"));
  EXPECT_THAT(r.err, HasSubstr("~"));
  EXPECT_EQ(r.out, "");
}

TEST(DumpTool, FunctionSelection) {
  const std::string path =
      temp_file("defs.py", "import torch\n\ndef a(x):\n    return x\n\ndef b(x):\n    return x\n");
  DumpRun r = run({path, "--function", "c"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "ampjit-dump: --function: '" + path +
                       "' defines no function 'c'; its functions are: a, b\n");
  r = run({temp_file("nodefs.py", "import torch\nN = 1\n")});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("defines no function"));
}

TEST(DumpTool, PngNeedsGraphviz) {
  const std::string path = temp_file("png.py", "import torch\n\ndef f(x):\n    return x.relu()\n");
  const std::string png =
      (std::filesystem::temp_directory_path() / "ampjit_dump_test.png").string();
  std::filesystem::remove(png);
  bool have_dot = false;
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"})
    have_dot |= std::filesystem::exists(std::string(dir) + "/dot");
  DumpRun r = run({path, "--png", png});
  if (have_dot) {
    EXPECT_EQ(r.status, 0) << r.err;
    std::ifstream f(png, std::ios::binary);
    char magic[4] = {};
    f.read(magic, 4);
    EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  } else {
    EXPECT_EQ(r.status, 1);
    EXPECT_THAT(r.err, HasSubstr("--png: graphviz's `dot` was not found on PATH"));
  }
  // Without dot on PATH, whatever is installed: the error, after the text dump.
  const char* saved = std::getenv("PATH");
  const std::string old_path = saved ? saved : "";
  setenv("PATH", "/nonexistent", 1);
  r = run({path, "--png", png});
  setenv("PATH", old_path.c_str(), 1);
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("# f: as built"));
  EXPECT_EQ(r.err,
            "ampjit-dump: --png: graphviz's `dot` was not found on PATH; install graphviz "
            "(apt-get install graphviz), or write DOT with --format dot and render it elsewhere\n");
}

// ---- Golden dumps ------------------------------------------------------------------------------

// Each tests/golden/dump/*.py file is run through the tool: "# ARGS:" lines give the options
// (the file's path is added), "# EXIT: N" the expected status (default 0); the CHECK lines are
// matched against stdout followed by stderr.
class GoldenDump : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenDump, MatchesChecks) {
  std::ifstream f(GetParam());
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> args = {GetParam()};
  int expected_status = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# ARGS:")) {
      std::istringstream words(line.substr(7));
      for (std::string w; words >> w;) args.push_back(w);
    } else if (line.starts_with("# EXIT:")) {
      expected_status = std::stoi(line.substr(7));
    }
  }
  DumpRun r = run(args);
  EXPECT_EQ(r.status, expected_status) << r.err;
  expect_checks(r.out + r.err, text);
}

std::vector<std::string> golden_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(AMPJIT_SOURCE_DIR "/tests/golden/dump"))
    if (e.path().extension() == ".py") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Files, GoldenDump, ::testing::ValuesIn(golden_files()),
                         [](const auto& info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

}  // namespace
}  // namespace ampjit::script
