#!/usr/bin/env bash
# The GPU check in one command: bash gpu-bundle/run.sh OUTDIR [--rehearse]
# Unpacks payload.tar.gz beside this script (once per payload, under $TMPDIR or /tmp) and runs
# gpu_run.py with the bundle's own Python: the logs, summary.json and report.md land in OUTDIR.
# scripts/gpu-bundle.sh builds this folder; docs/gpu.md says how to run it on the GPU machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [--rehearse]}
mkdir -p "$out"
out=$(cd "$out" && pwd)
dest="${TMPDIR:-/tmp}/ampjit-gpu-$(cat "$here/payload.id")"
if [[ ! -f "$dest/.unpacked" ]]; then
  rm -rf "$dest"
  mkdir -p "$dest"
  tar -xzf "$here/payload.tar.gz" -C "$dest"
  touch "$dest/.unpacked"
fi
py="$dest/python/bin/python3.11"
# The caller's settings, for the peer step (the machine's own python3) and, for the library path,
# after the bundle's (a driver folder such as /usr/local/nvidia/lib64 may only be reachable by it).
export AMPJIT_CALLER_LD_LIBRARY_PATH="${LD_LIBRARY_PATH-}" AMPJIT_CALLER_PYTHONPATH="${PYTHONPATH-}" \
       AMPJIT_CALLER_PYTHONHOME="${PYTHONHOME-}"
export PYTHONHOME="$dest/python" PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="$dest/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! "$py" -c pass; then
  # The bundle's interpreter does not start here: the machine's python3 runs the driver instead,
  # so the summary still says which step failed.
  echo "run.sh: the bundle's Python does not start; running the driver with $(command -v python3)" >&2
  unset PYTHONHOME
  py=$(command -v python3)
fi
exec "$py" "$dest/gpu_run.py" "$out" "${@:2}"
