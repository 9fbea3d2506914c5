#!/usr/bin/env bash
# House rules checked on every CI run (scripts/test.sh), in seconds, before anything is built:
#  - every C++ and CUDA file is formatted with the checked-in .clang-format (the .def op tables are
#    data, one entry a line, and are left as written);
#  - includes only go down the pipeline (scripts/check_layers.py).
# Fix formatting with: git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
bad=()
while IFS= read -r f; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
if ((${#bad[@]})); then
  echo "lint: ${#bad[@]} file(s) not formatted with .clang-format: ${bad[*]}" >&2
  echo "lint: run: clang-format -i ${bad[*]}" >&2
  exit 1
fi
/usr/bin/python3 scripts/check_layers.py
echo "lint: every C++ file formatted; includes go down the pipeline"
