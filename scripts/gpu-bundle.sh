#!/usr/bin/env bash
# The GPU check as one prepared folder. Usage:
#   scripts/gpu-bundle.sh [--build DIR] [--out DIR] [--rehearse]
# Packs, from a CUDA build (default build/), everything the GPU run needs into DIR (default
# gpu-bundle/, ignored by git; at most 64 MiB, what the device tool carries): run.sh, payload.tar.gz
# (scripts/gpu/make_bundle.py says what it holds) and payload.id. On the GPU machine:
#   bash gpu-bundle/run.sh "$OUT"        # with carry: ["gpu-bundle"]; docs/gpu.md has the call
# --rehearse then unpacks the bundle into a fresh temporary folder and runs it under `env -i` with a
# minimal PATH (Debian's Python packages and the build tree out of reach): without a GPU the GPU
# steps report "skipped: no GPU" and everything else must pass. The results stay in
# BUILD_DIR/gpu-rehearsal/. CI runs the rehearsal (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build out=gpu-bundle rehearse=0
while (($#)); do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --rehearse) rehearse=1; shift ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-bundle: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
limit=$((64 << 20))

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
/usr/bin/python3 scripts/gpu/make_bundle.py "$build" "$stage/payload"
rm -rf "$out"
mkdir -p "$out"
tar -C "$stage/payload" -cf - . | gzip -6 > "$out/payload.tar.gz"
sha256sum "$out/payload.tar.gz" | cut -c1-16 > "$out/payload.id"
cp scripts/gpu/run.sh "$out/run.sh"
size=$(du -sb "$out" | cut -f1)
echo "gpu-bundle: $out is $((size >> 20)) MiB ($(du -sb "$stage/payload" | cut -f1 | awk '{printf "%d", $1 / 1048576}') MiB unpacked)"
if ((size > limit)); then
  echo "gpu-bundle: $out is over the device tool's 64 MiB limit" >&2
  exit 1
fi

if ((rehearse)); then
  trial=$(mktemp -d)
  trap 'rm -rf "$stage" "$trial"' EXIT
  cp -r "$out" "$trial/bundle"
  results="$build/gpu-rehearsal"
  rm -rf "$results"
  echo "gpu-bundle: rehearsal in $trial (env -i, PATH=/usr/bin:/bin)"
  status=0
  env -i PATH=/usr/bin:/bin HOME="$trial" TMPDIR="$trial" OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" \
    bash "$trial/bundle/run.sh" "$trial/out" --rehearse || status=$?
  mkdir -p "$results"
  cp "$trial"/out/* "$results"/ 2>/dev/null || true
  cat "$results/report.md" 2>/dev/null || true
  if ((status != 0)); then
    echo "gpu-bundle: the rehearsal failed (exit $status); logs in $results" >&2
    exit 1
  fi
  echo "gpu-bundle: rehearsal passed; logs in $results"
fi
