#!/usr/bin/env bash
# libFuzzer runs of the input parsers, with ASan and UBSan. Usage:
#   scripts/fuzz.sh [SECONDS_PER_HARNESS=60] [BUILD_DIR=build-asan] [HARNESS...]
# The harnesses (tests/fuzz/) are targets of the clang sanitizer build (scripts/build-asan.sh, Note
# [One sanitizer build]), which this builds first (nothing to do when CI's sanitizer step just did):
#   fuzz_script_parser    the script lexer and parser;
#   fuzz_script_compiler  lexer, parser and compiler as ampjit-dump compiles a file, each graph
#                         verified, printed, re-parsed and printed the same, the JIT passes run on it;
#   fuzz_graph_parser     the graph text parser: verify, print, re-parse, print the same;
#   fuzz_zip_archive      the zip reader of saved archives (serialization/zip_archive.h): every
#                         record of an archive it opens read with a bound, and its size checked;
#   fuzz_unpickler        the restricted unpickler (serialization/unpickler.h) with a storage hook;
#   fuzz_jit_load         compiling saved code: the text as code/__torch__.py of a TorchScript
#                         archive, loaded (class declarations) and every method compiled.
# Seeds (scripts/fuzz_seeds.py): every .py file and C++ test program for the script harnesses; the
# golden .graph files, the C++ tests' graph texts and ampjit-dump's graphs of the golden inputs for
# the graph harness. Each harness runs for SECONDS and keeps its corpus in BUILD_DIR/fuzz/; the run
# prints executions, executions per second and the corpus size. A crash, a sanitizer report, a leak
# or a timeout fails the run; the input that caused it is kept in BUILD_DIR/fuzz/ (make it a
# regression test in tests/cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build-asan}
shift $(($# < 2 ? $# : 2))
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(fuzz_script_parser fuzz_script_compiler fuzz_graph_parser fuzz_zip_archive
                                   fuzz_unpickler fuzz_jit_load)
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }
command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (scripts/setup.sh installs it)" >&2; exit 1; }
scripts/build-asan.sh "$build"
out="$build/fuzz"
mkdir -p "$out"
/usr/bin/python3 scripts/fuzz_seeds.py "$out" "$build/tools/ampjit-dump"

status=0
for name in "${harnesses[@]}"; do
  case $name in
    fuzz_graph_parser) kind=graph ;;
    fuzz_script_parser | fuzz_script_compiler) kind=script ;;
    fuzz_zip_archive) kind=zip ;;
    fuzz_unpickler) kind=pickle ;;
    fuzz_jit_load) kind=torchcode ;;
    *) echo "fuzz: no harness '$name'" >&2; exit 2 ;;
  esac
  corpus="corpus-${name#fuzz_}" log="$out/$name.log"
  mkdir -p "$out/$corpus"
  echo "fuzz: $name for ${seconds}s"
  if ! (cd "$out" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        OMP_NUM_THREADS=1 "../tests/fuzz/$name" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$name-" \
        "$corpus" "seeds-$kind") >"$log" 2>&1; then
    status=1
    echo "fuzz: $name FOUND A PROBLEM; the input is $out/$name-*; the report:" >&2
    grep -m 20 -E "ERROR|runtime error|SUMMARY|Test unit written|^fuzz_[a-z_]+: " "$log" >&2 || tail -20 "$log" >&2
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  # The corpus as libFuzzer holds it at the end (the folder also keeps inputs it later reduced).
  size=$(grep -o 'DONE .* corp: [0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz: $name: $runs executions, $rate per second, corpus $size inputs"
done
exit $status
