// The script parser: the TorchScript subset of Python, from source text to the AST of ast.h.
// Every syntax error, and every Python construct script does not support, is a CompileError at
// the offending text; no input makes the parser crash, loop or overflow its stack.
#pragma once
#include <memory>
#include <string>

#include "script/ast.h"

namespace ampjit::script {

// Parses a whole file, or the source of one function or class.
std::unique_ptr<Module> parse_module(std::shared_ptr<const Source> source);

// The AST as compact S-expressions (Note [AST dump format] in ast_dump.cpp), for tests and
// debugging. A module prints one top-level statement per line.
std::string dump(const Module& module);
std::string dump(const Stmt& stmt);
std::string dump(const Expr& expr);

}  // namespace ampjit::script
