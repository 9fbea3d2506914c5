#!/usr/bin/env bash
# libFuzzer runs of the input parsers, with ASan and UBSan. Usage:
#   scripts/fuzz.sh [SECONDS_PER_HARNESS=60] [BUILD_DIR=build]
# Builds with clang++ (tests/fuzz/) fuzz_script_parser: the script lexer and parser, their sources
# compiled into the harness with coverage. (The graph text parser's harness waits for libampjit's
# headers to build under clang: ivalue.h's ListObj and TupleObj need out-of-line destructors.)
# Seeds the corpus from every .py file of the repository, runs each harness for SECONDS, and prints
# executions, executions per second and the corpus size. A crash, a sanitizer report, a leak or a timeout fails the run; the input
# that caused it is kept in BUILD_DIR/fuzz/ (make it a regression test).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build}
out="$build/fuzz"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }
mkdir -p "$out"
command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (scripts/setup.sh installs it)" >&2; exit 1; }
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -I. -w)

clang++ "${flags[@]}" tests/fuzz/fuzz_script_parser.cpp script/lexer.cpp script/parser.cpp \
  script/ast_dump.cpp runtime/ir/source_range.cpp runtime/diagnostic.cpp -lfmt \
  -o "$out/fuzz_script_parser"

rm -rf "$out/seeds-script"
mkdir -p "$out/seeds-script" "$out/corpus-script"
git ls-files '*.py' | while read -r f; do cp "$f" "$out/seeds-script/$(echo "$f" | tr / _)"; done

status=0
run() {  # name corpus seeds
  local name=$1 log="$out/$1.log"
  echo "fuzz: $name for ${seconds}s"
  if ! (cd "$out" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "./$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$name-" "$2" "$3") >"$log" 2>&1; then
    status=1
    echo "fuzz: $name FOUND A PROBLEM; the input is $out/$name-*; the report:" >&2
    grep -m 20 -E "ERROR|runtime error|SUMMARY|Test unit written" "$log" >&2 || tail -20 "$log" >&2
  fi
  local runs rate size
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  size=$(find "$out/$2" -type f | wc -l)
  echo "fuzz: $name: $runs executions, $rate per second, corpus $size inputs"
}
run fuzz_script_parser corpus-script seeds-script
exit $status
