// ampjit-dump as a library (see dump_tool.h): options, the pass table, the three output formats,
// graphviz rendering and the tool's error handling.
#include "script/dump_tool.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/dtype.h"
#include "runtime/error.h"
#include "script/compiler.h"
#include "script/parser.h"
#include "script/passes/pipeline.h"
#include "script/static_resolver.h"

extern char** environ;

namespace ampjit::script {

// ---- Passes ------------------------------------------------------------------------------------

namespace {

std::string pass_names_joined(const char* sep) {
  std::string s;
  for (const Pass& p : pipeline_passes()) s += (s.empty() ? "" : sep) + std::string(p.name);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t pos = 0;;) {
    const size_t e = s.find(sep, pos);
    out.push_back(s.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos));
    if (e == std::string_view::npos) return out;
    pos = e + 1;
  }
}

}  // namespace

const std::vector<std::string>& pipeline_pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Pass& p : pipeline_passes()) v.emplace_back(p.name);
    return v;
  }();
  return names;
}

std::vector<std::string> parse_pass_list(std::string_view list) {
  const std::span<const Pass> passes = pipeline_passes();
  std::vector<bool> wanted(passes.size(), false);
  for (std::string_view item : split(list, ',')) {
    if (item == "all") {
      wanted.assign(wanted.size(), true);
      continue;
    }
    if (item.empty()) throw UsageError(fmt::format("--passes: empty pass name in '{}'", list));
    const Pass* p = find_pass(item);
    if (!p)
      throw UsageError(fmt::format("--passes: unknown pass '{}'; the passes are {} (or all)", item,
                                   pass_names_joined(", ")));
    wanted[static_cast<size_t>(p - passes.data())] = true;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < wanted.size(); ++i)
    if (wanted[i]) out.emplace_back(passes[i].name);
  return out;
}

bool dump_pass_runs(const std::string& pass, const DumpOptions& options) {
  const Pass* p = find_pass(pass);
  return p && (!p->autocast || options.semantics == AutocastSemantics::TorchScript);
}

void run_dump_pass(Graph& g, const std::string& pass, const AutocastContext& eager) {
  const Pass* p = find_pass(pass);
  if (!p) throw UsageError(fmt::format("unknown pass '{}'", pass));
  p->run(g, eager);
  try {
    g.verify();
  } catch (const Error& e) {
    throw Error(fmt::format("the graph is invalid after the {} pass: {}", p->name, e.what()));
  }
}

// ---- Options -----------------------------------------------------------------------------------

AutocastContext parse_eager_autocast(std::string_view spec) {
  AutocastContext ctx;
  if (spec.empty())
    throw UsageError("--eager-autocast: empty; expected e.g. cpu=bfloat16,cuda=float16");
  for (std::string_view item : split(spec, ',')) {
    const size_t eq = item.find('=');
    const std::string_view device = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "on" : item.substr(eq + 1);
    bool* enabled = device == "cpu"    ? &ctx.cpu_enabled
                    : device == "cuda" ? &ctx.cuda_enabled
                                       : nullptr;
    ScalarType* dtype = device == "cpu" ? &ctx.cpu_dtype : &ctx.cuda_dtype;
    if (!enabled)
      throw UsageError(
          fmt::format("--eager-autocast: unknown device '{}' in '{}'; the devices are cpu and cuda",
                      device, item));
    if (value == "off" || value == "false" || value == "0") {
      *enabled = false;
    } else if (value == "on" || value == "true" || value == "1") {
      *enabled = true;
    } else if (std::optional<ScalarType> t = parse_dtype(value); t && is_reduced_floating(*t)) {
      *enabled = true;
      *dtype = *t;
    } else {
      throw UsageError(
          fmt::format("--eager-autocast: '{}': expected {}=bfloat16, {}=float16, {}=on or {}=off "
                      "(autocast casts to float16 or bfloat16 only)",
                      item, device, device, device, device));
    }
  }
  return ctx;
}

std::string dump_usage() {
  return fmt::format(
      "usage: ampjit-dump FILE.py|MODEL.pt [options]\n"
      "\n"
      "Compiles the TorchScript functions of a standalone Python file (no Python needed),\n"
      "prints one function's graph as built, runs the named JIT passes on a copy and prints\n"
      "the result. Given a TorchScript archive (torch.jit.save, by torch or ampjit), does the\n"
      "same for each method of its module (forward first), or for the one --function names.\n"
      "\n"
      "options:\n"
      "  --function NAME        the function to dump (default: the file's last top-level def;\n"
      "                         for an archive: every method, or forward with --format json)\n"
      "  --passes LIST|all      comma-separated passes, run in pipeline order: {} (default: none)\n"
      "  --print-after-each     print the graph after each pass, under '# after <pass>'\n"
      "  --eager-autocast SPEC  the eager autocast state the autocast pass starts from, e.g.\n"
      "                         cpu=bfloat16,cuda=float16 or cpu=off (default: all off)\n"
      "  --semantics S          torchscript (default: the autocast pass rewrites the graph) or\n"
      "                         eager (the autocast pass does not run: the dispatcher autocasts)\n"
      "  --format F             text (default, TorchScript's graph format), dot or json\n"
      "  --png OUT.png          also render the final graph with graphviz's dot\n"
      "  -h, --help             this text\n"
      "\n"
      "Exit status: 0 on success, 1 when the file does not compile or a pass fails,\n"
      "2 for usage errors.\n",
      pass_names_joined(", "));
}

DumpOptions parse_dump_args(const std::vector<std::string>& args) {
  DumpOptions o;
  bool have_file = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::optional<std::string> inline_value;
    if (arg.starts_with("--"))
      if (const size_t eq = arg.find('='); eq != std::string::npos) {
        inline_value = arg.substr(eq + 1);
        arg.resize(eq);
      }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) throw UsageError(fmt::format("{} needs a value", arg));
      return args[++i];
    };
    auto no_value = [&] {
      if (inline_value) throw UsageError(fmt::format("{} takes no value", arg));
    };
    if (arg == "-h" || arg == "--help") {
      no_value();
      o.help = true;
    } else if (arg == "--function") {
      o.function = value();
      if (o.function.empty()) throw UsageError("--function: empty name");
    } else if (arg == "--passes") {
      o.passes = parse_pass_list(value());
    } else if (arg == "--print-after-each") {
      no_value();
      o.print_after_each = true;
    } else if (arg == "--eager-autocast") {
      o.eager = parse_eager_autocast(value());
    } else if (arg == "--semantics") {
      try {
        o.semantics = parse_autocast_semantics(value(), "--semantics");
      } catch (const ValueError& e) {
        throw UsageError(e.what());
      }
    } else if (arg == "--format") {
      const std::string v = value();
      if (v == "text")
        o.format = DumpFormat::Text;
      else if (v == "dot")
        o.format = DumpFormat::Dot;
      else if (v == "json")
        o.format = DumpFormat::Json;
      else
        throw UsageError(fmt::format("--format: '{}'; expected text, dot or json", v));
    } else if (arg == "--png") {
      o.png = value();
      if (o.png.empty()) throw UsageError("--png: empty file name");
    } else if (arg.size() > 1 && arg.starts_with("-")) {
      throw UsageError(fmt::format("unknown option '{}'", arg));
    } else if (have_file) {
      throw UsageError(fmt::format("one FILE.py expected, got '{}' and '{}'", o.file, arg));
    } else {
      o.file = arg;
      have_file = true;
    }
  }
  if (!have_file && !o.help) throw UsageError("no input file");
  return o;
}

// ---- The tool ----------------------------------------------------------------------------------

namespace {

std::string eager_str(const AutocastContext& c) {
  std::string s;
  if (c.cpu_enabled) s += fmt::format("cpu={}", dtype_name(c.cpu_dtype));
  if (c.cuda_enabled) s += fmt::format("{}cuda={}", s.empty() ? "" : ",", dtype_name(c.cuda_dtype));
  return s.empty() ? "off" : s;
}

// One printed graph: its header and the graph.
struct Stage {
  std::string title;  // "as built", "after inline", ...
  std::string text;   // the graph in the chosen format (text and dot)
  Json json;
};

Stage make_stage(const Graph& g, const std::string& function, std::string title,
                 DumpFormat format) {
  Stage s{std::move(title), "", Json()};
  switch (format) {
    case DumpFormat::Text:
      s.text = g.str();
      break;
    case DumpFormat::Dot:
      s.text = graph_to_dot(g, function + ": " + s.title);
      break;
    case DumpFormat::Json:
      s.json = graph_json(g);
      break;
  }
  return s;
}

// Text and DOT print each stage as it is made, so the graphs before a failing pass are shown.
void print_stage(const Stage& s, const std::string& function, DumpFormat format, bool first,
                 std::ostream& out) {
  if (format == DumpFormat::Json) return;
  // The first header names the function; the others only the stage (`# after dce`).
  if (!first) out << "\n";
  out << (format == DumpFormat::Dot ? "// " : "# ") << (first ? function + ": " : "") << s.title
      << "\n"
      << s.text;
  out.flush();
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  for (std::string_view dir : split(path ? path : "", ':')) {
    const std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, program);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Runs graphviz's `dot -Tpng -o OUT` on `dot_text`.
void render_png(const std::string& dot_text, const std::string& out_path) {
  const std::string dot = find_on_path("dot");
  if (dot.empty())
    throw Error(
        "--png: graphviz's `dot` was not found on PATH; install graphviz (apt-get install "
        "graphviz), or write DOT with --format dot and render it elsewhere");
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmp = fmt::format("{}/ampjit-dump-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    throw Error(fmt::format("--png: cannot create a temporary file: {}", std::strerror(errno)));
  const bool written =
      ::write(fd, dot_text.data(), dot_text.size()) == static_cast<ssize_t>(dot_text.size());
  ::close(fd);
  struct Unlink {
    std::string path;
    ~Unlink() { ::unlink(path.c_str()); }
  } unlink_tmp{tmp};
  if (!written) throw Error(fmt::format("--png: cannot write '{}'", tmp));
  std::vector<std::string> argv_s = {"dot", "-Tpng", "-o", out_path, tmp};
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (const int rc = ::posix_spawn(&pid, dot.c_str(), nullptr, nullptr, argv.data(), environ);
      rc != 0)
    throw Error(fmt::format("--png: cannot run '{}': {}", dot, std::strerror(rc)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(fmt::format("--png: '{} -Tpng -o {}' failed (exit status {})", dot, out_path,
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1));
}

// The header of the last stage when the passes are printed together.
std::string final_stage_title(const DumpOptions& options) {
  if (options.passes.empty()) return "as built";
  std::string title = "after ";
  bool autocast = false;
  for (size_t i = 0; i < options.passes.size(); ++i) {
    title += (i ? ", " : "") + options.passes[i];
    autocast |= options.passes[i] == "autocast";
  }
  if (autocast && options.semantics == AutocastSemantics::Eager)
    title += " (eager semantics: the autocast pass does not run)";
  else if (autocast)
    title += " (eager autocast " + eager_str(options.eager) + ")";
  return title;
}

}  // namespace

std::unique_ptr<Graph> dump_graph(const Graph& g, const std::string& function,
                                  const DumpOptions& options, std::ostream& out) {
  std::vector<Stage> stages;
  auto add = [&](const Graph& graph, std::string title) {
    stages.push_back(make_stage(graph, function, std::move(title), options.format));
    print_stage(stages.back(), function, options.format, stages.size() == 1, out);
  };
  add(g, "as built");
  std::unique_ptr<Graph> work = g.copy();
  for (const std::string& pass : options.passes) {
    const bool runs = dump_pass_runs(pass, options);
    if (runs) run_dump_pass(*work, pass, options.eager);
    if (options.print_after_each)
      add(*work, "after " + pass + (runs ? "" : " (not run in eager semantics)"));
  }
  if (!options.passes.empty() && !options.print_after_each) add(*work, final_stage_title(options));
  if (options.format == DumpFormat::Json) {
    Json doc = Json::object();
    doc.add("function", Json::string(function)).add("file", Json::string(options.file));
    Json passes = Json::array();
    for (const std::string& p : options.passes) passes.push(Json::string(p));
    doc.add("passes", std::move(passes))
        .add("semantics", Json::string(autocast_semantics_name(options.semantics)))
        .add("eager_autocast", Json::string(eager_str(options.eager)));
    Json js = Json::array();
    for (Stage& s : stages)
      js.push(Json::object().add("stage", Json::string(s.title)).add("graph", std::move(s.json)));
    doc.add("stages", std::move(js));
    out << doc.str();
  }
  return work;
}

int run_dump(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
             const ArchiveMethods& archive) {
  DumpOptions o;
  try {
    o = parse_dump_args(args);
  } catch (const UsageError& e) {
    err << "ampjit-dump: " << e.what() << "\n(see ampjit-dump --help)\n";
    return 2;
  }
  if (o.help) {
    out << dump_usage();
    return 0;
  }
  try {
    std::string text = read_file(o.file);
    if (archive && text.rfind("PK\x03\x04", 0) == 0) {  // a zip file: a TorchScript archive
      std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> methods = archive(o.file);
      std::vector<std::string> names;
      for (const auto& [name, _] : methods) names.push_back(name);
      std::string chosen = o.function;
      if (chosen.empty() && o.format == DumpFormat::Json) chosen = "forward";
      if (!chosen.empty() && std::find(names.begin(), names.end(), chosen) == names.end())
        throw Error(
            fmt::format("--function: the module in '{}' has no method '{}'; its methods "
                        "are: {}",
                        o.file, chosen, fmt::join(names, ", ")));
      for (const auto& [name, graph] : methods) {
        if (!chosen.empty() && name != chosen) continue;
        std::unique_ptr<Graph> final_graph = dump_graph(*graph, name, o, out);
        if (!o.png.empty() && (name == chosen || (chosen.empty() && name == methods[0].first)))
          render_png(graph_to_dot(*final_graph, name + ": " + final_stage_title(o)), o.png);
      }
      return 0;
    }
    auto source = std::make_shared<const Source>(std::move(text), o.file);
    std::unique_ptr<Module> module = parse_module(source);
    std::vector<std::string> defs;
    for (const StmtPtr& s : module->body)
      if (s->kind == StmtKind::FunctionDef) defs.push_back(s->as<FunctionDef>().name);
    if (defs.empty()) throw Error(fmt::format("'{}' defines no function", o.file));
    size_t index = defs.size() - 1;
    if (!o.function.empty()) {
      auto it = std::find(defs.rbegin(), defs.rend(), o.function);  // the last def of that name
      if (it == defs.rend()) {
        std::string list;
        for (const std::string& d : defs) list += (list.empty() ? "" : ", ") + d;
        throw Error(fmt::format("--function: '{}' defines no function '{}'; its functions are: {}",
                                o.file, o.function, list));
      }
      index = defs.size() - 1 - (it - defs.rbegin());
    }
    std::vector<std::shared_ptr<Function>> functions =
        compile_source(source, static_resolver(*module));
    if (functions.size() != defs.size())
      throw Error(fmt::format("internal error: {} defs but {} compiled functions", defs.size(),
                              functions.size()));
    const std::shared_ptr<Function>& fn = functions[index];
    std::unique_ptr<Graph> final_graph = dump_graph(*fn->graph(), defs[index], o, out);
    if (!o.png.empty()) {
      const std::string last = o.print_after_each && !o.passes.empty() ? "after " + o.passes.back()
                                                                       : final_stage_title(o);
      render_png(graph_to_dot(*final_graph, defs[index] + ": " + last), o.png);
    }
    return 0;
  } catch (const CompileError& e) {
    out.flush();
    err << e.what() << "\n";
  } catch (const UsageError& e) {
    out.flush();
    err << "ampjit-dump: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    out.flush();
    err << "ampjit-dump: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace ampjit::script
