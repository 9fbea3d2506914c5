#!/usr/bin/env bash
# One command: install what is missing, build, run the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
build/tools/ampjit-demo
PYTHONPATH=build/python /usr/bin/python3 tools/demo.py
