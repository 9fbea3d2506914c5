// The script compiler: the AST of one function (or a module's methods) to the shared graph IR.
//
// Names the function does not define are asked of a Resolver: the Python frontend answers from
// the function's globals and closure (frontend/python/script_bindings.cpp), the static resolver
// from a file's top-level imports and defs (script/static_resolver.h). Builtins (`torch.*`,
// `torch.nn.functional.*`, Tensor methods, `len`, `range`, `math.*`, ...) need no resolver beyond
// saying which namespace a name is (`torch`, `math`, ...).
//
// Every error is a CompileError at the offending source; an error inside a callee carries the
// call chain. The graphs are verified before they are returned.
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "runtime/autocast/semantics.h"
#include "runtime/error.h"
#include "runtime/interpreter.h"
#include "runtime/ir/ir.h"
#include "runtime/ivalue.h"
#include "script/ast.h"

namespace ampjit::script {

class Resolver;
struct ModuleInfo;

// Note [Function caches]
// A callee compiles once per compilation session (Session::compiled). Beyond one session, the
// Functions compiled from a source that outlives it are kept by that source's owner, in a
// FunctionCache the resolver stamps on each def it resolves (Resolved::cache):
//  - torch.nn.functional (the embedded library) is the same text in every program: its cache is
//    process-wide, bounded by its defs times the compile options (two `optimize` values, three
//    semantics settings), and emptied by clear_library_functions() (torch.jit._state's
//    _clear_class_state in Python);
//  - a loaded archive's code is its own: its cache belongs to the archive, so everything compiled
//    for a loaded module goes with the last reference to it (jit::Module).
// Keys are the def's address, kept valid by the entry holding the def (and so its parsed file).
class FunctionCache {
 public:
  using Key = std::tuple<uintptr_t, bool, int>;  // def identity, optimize, semantics (-1: unset)
  std::shared_ptr<Function> find(const Key& key) const;
  // Keeps the first Function inserted under `key` (another thread may have compiled it
  // meanwhile) and returns it; `def` keeps the key's address valid.
  std::shared_ptr<Function> insert(const Key& key, std::shared_ptr<const FunctionDef> def,
                                   std::shared_ptr<Function> fn);
  size_t size() const;
  void clear();

 private:
  struct Entry {
    std::shared_ptr<const FunctionDef> def;
    std::shared_ptr<Function> fn;
  };
  mutable std::mutex mu_;
  std::map<Key, Entry> fns_;
};

// The process-wide cache of torch.nn.functional's compiled defs (Note [Function caches]).
const std::shared_ptr<FunctionCache>& library_function_cache();
// Empties it: later programs compile the library's defs again; running Functions keep theirs.
void clear_library_functions();

// What a free name (a global, a closure variable, an import) refers to.
struct Resolved {
  enum Kind {
    kUnknown,    // not found: the compiler reports "undefined value NAME"
    kNamespace,  // a module of builtins: path "torch", "torch.nn.functional", "math", "torch.jit",
                 // ...
    kSource,     // a plain Python function: compiled recursively from `source` with `resolver`
    kFunction,   // an already scripted or traced function: called (prim::CallFunction)
    kAutocastClass,  // torch.autocast / torch.cpu.amp.autocast / torch.cuda.amp.autocast; path is
                     // one of those
    kConstant,       // an int/float/bool/str/None/dtype (a ScalarType constant) value
    kModule,         // a submodule or module object (only inside a module's methods)
    kNamedTuple,     // a NamedTuple class: path is its qualified name ("__torch__.m.Out"), with
                     // `fields` and the annotation text of each (`field_types`)
    kClass,          // a Python class compiled as a script class (Note [Script classes]): `module`
                     // describes it (class_name, method sources, resolver; is_class)
    kUnsupported,    // a Python value script cannot use; `message` says why
  };
  Kind kind = kUnknown;
  std::string path;  // kNamespace, kAutocastClass: the dotted name; kSource: the def's module, if
                     // any ("torch.nn.functional"), which qualifies the compiled function's name
  std::shared_ptr<const Source> source;    // kSource: the function's text (one `def`)
  std::shared_ptr<const FunctionDef> def;  // kSource: or its def, already parsed (a file's def)
  std::shared_ptr<Resolver> resolver;      // kSource: resolves the callee's own free names
  std::shared_ptr<Function> function;      // kFunction
  IValue constant;                         // kConstant
  std::shared_ptr<ModuleInfo> module;      // kModule, kClass
  std::string message;                     // kUnsupported
  std::vector<std::string> fields, field_types;  // kNamedTuple
  // A stable identity for kSource (the Python function object's id), so a function called from
  // several places (or recursively) compiles once; 0 means "no identity" (compile each time).
  uintptr_t identity = 0;
  // kSource with an identity: where Functions compiled from this def outlive one compilation
  // (Note [Function caches]); null: only the session keeps them.
  std::shared_ptr<FunctionCache> cache;

  static Resolved ns(std::string path) {
    Resolved r;
    r.kind = kNamespace;
    r.path = std::move(path);
    return r;
  }
  static Resolved constant_value(IValue v) {
    Resolved r;
    r.kind = kConstant;
    r.constant = std::move(v);
    return r;
  }
  static Resolved unsupported(std::string why) {
    Resolved r;
    r.kind = kUnsupported;
    r.message = std::move(why);
    return r;
  }
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // Resolves a free name; `range` is where it is used (for errors raised while resolving).
  virtual Resolved resolve(const std::string& name, const SourceRange& range) = 0;
};

// A resolver that knows only the builtin namespaces (`torch`, `math`, `F` is not implied).
std::shared_ptr<Resolver> builtin_resolver();

// A module as the compiler sees it: its class, its attributes with their types, and the source of
// its methods. At run time `self` is a ModuleObject (runtime/module_object.h) holding the values
// under the same names; the graph reads them with prim::GetAttr.
//
// Note [Script classes]
// A plain Python class used in script (decorated with @torch.jit.script or not, as torch compiles
// the classes script code reaches) is a ModuleInfo with is_class set and no attributes at first:
// its `__init__` compiles before anything else of it, and each `self.x = v` there (or
// `self.x: T = v`) declares attribute x with v's type (T), in order. `C(args)` is
// prim::CreateObject (a ModuleObject with the class's name) and a call of `__init__` on it; a
// value whose type is the class gets its attributes (prim::GetAttr/SetAttr) and methods as `self`
// does. A compilation session knows each class once, by name.
struct ModuleInfo {
  struct Attr {
    std::string name;
    TypePtr type;  // Tensor for parameters and buffers, the value's type for plain attributes
    bool is_constant = false;               // Final / __constants__: inlined as a constant
    IValue value;                           // the constant's value (is_constant), else unused
    std::shared_ptr<ModuleInfo> submodule;  // set for submodules (type is the submodule's class)
    // A submodule declared with a @torch.jit.interface type (`impl: Iface`): its methods are
    // called, never inlined, as torch's prim::CallMethod on an interface (Note [Interface calls]).
    bool is_interface = false;
  };
  std::string class_name;  // "__torch__.MyNet"
  std::deque<Attr> attrs;  // a deque: a class's __init__ adds to it while Attr pointers are held
  // Method sources by name (a `def` each, `self` first); `forward` is the entry point.
  std::unordered_map<std::string, std::shared_ptr<const Source>> methods;
  // Overloaded methods (torch.jit._overload_method): name -> the mangled names of its overloads
  // ("forward" -> {"forward__0", "forward__1"}), each in `methods` with the implementation's body
  // under that declaration's signature; a call takes the first whose parameters accept its
  // arguments, as torch's does.
  std::unordered_map<std::string, std::vector<std::string>> overloads;
  std::shared_ptr<Resolver> resolver;  // resolves the methods' free names
  // nn.Sequential / nn.ModuleList: iteration and indexing unroll over these attribute names.
  // nn.ModuleDict (is_dict): the same names are its keys, in order; iteration gives the keys,
  // items()/keys()/values() unroll, and a constant string indexes it.
  bool is_sequence = false;
  bool is_dict = false;
  bool is_class = false;  // Note [Script classes]
  std::vector<std::string> sequence;

  const Attr* find(const std::string& name) const {
    for (const Attr& a : attrs)
      if (a.name == name) return &a;
    return nullptr;
  }
};

struct CompileOptions {
  bool optimize = true;  // the Function runs the optimization pipeline (set_optimizable)
  // The compiled functions' own autocast semantics (Note [Autocast semantics]); unset: they follow
  // the process-wide default at call time. What compiles differs in one place: an `@autocast(...)`
  // decorator is torch's error in torchscript semantics and a region around the body in eager
  // semantics (decided with the semantics in force at compile time).
  std::optional<AutocastSemantics> semantics;
};

// Compiles the one `def` in `source` (decorators other than the script ones are rejected).
// `identity` memoizes callees across one compilation session (see CompileSession).
std::shared_ptr<Function> compile_function(std::shared_ptr<const Source> source,
                                           std::shared_ptr<Resolver> resolver,
                                           const CompileOptions& options = {});

// Compiles a module's `forward` (and every method it calls). The result's graph takes `self` (the
// ModuleObject) as its first input.
std::shared_ptr<Function> compile_module(std::shared_ptr<ModuleInfo> module,
                                         const CompileOptions& options = {});

// Compiles method `name` of a module (and every method it calls), as compile_module does forward.
std::shared_ptr<Function> compile_module_method(std::shared_ptr<ModuleInfo> module,
                                                const std::string& name,
                                                const CompileOptions& options = {});

// The type an annotation denotes (`Optional[List[int]]`, `__torch__.m.Out`), its names resolved
// with `resolver` as a function's annotations are; a CompileError at the annotation otherwise.
TypePtr parse_annotation(const Expr& annotation, std::shared_ptr<Resolver> resolver);

// Compiles a script class's methods, `__init__` first (Note [Script classes]): the functions in
// that order, each taking the object as `self`.
std::vector<std::shared_ptr<Function>> compile_class(std::shared_ptr<ModuleInfo> cls,
                                                     const CompileOptions& options = {});

// Compiles every top-level `def` of a file, in order, resolving names with `resolver` (the static
// resolver for standalone files). Later defs may call earlier and later ones.
std::vector<std::shared_ptr<Function>> compile_source(std::shared_ptr<const Source> source,
                                                      std::shared_ptr<Resolver> resolver,
                                                      const CompileOptions& options = {});

// Compiles the def of every decomposed op (Note [Decomposed ops] in runtime/op_table.h) and
// checks it against the op's schema: what is wrong, one message each (empty when all compile).
std::vector<std::string> check_decompositions();

// torch.nn.functional as the compiler resolves it: frontend/ampjit/nn/functional.py, embedded at
// build time (Note [Functionals from their own source] there).
std::string_view functional_source();
// The file name errors give that source, "ampjit/nn/functional.py" unless set: the Python frontend
// sets its package's copy when that copy holds the same text. Takes effect for the first compile
// that reads the module (it is parsed once per process).
void set_functional_source_path(std::string path);

// The class name torch gives a scripted function's module-level qualified name, e.g.
// "__torch__.fn"; used for printing.
std::string qualified_function_name(const std::string& name);

}  // namespace ampjit::script
