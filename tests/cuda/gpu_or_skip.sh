#!/bin/sh
# Runs a GPU test, or reports it skipped at once when the probe found no GPU.
# Usage: gpu_or_skip.sh PROBE_FILE TEST_BINARY ARGS...   (Note [Probe once, skip in bulk] in
# tests/CMakeLists.txt). Listing the tests, and any run without a probe file, goes to the binary.
probe=$1
shift
case " $* " in
  *" --gtest_list_tests "*) exec "$@" ;;
esac
if [ -f "$probe" ] && ! grep -q '^gpu ' "$probe"; then
  echo "[  SKIPPED ] $(head -n 1 "$probe") (probed once by the cuda_probe_once test)"
  exit 0
fi
exec "$@"
