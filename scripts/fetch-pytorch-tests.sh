#!/usr/bin/env bash
# Fetches PyTorch 1.13.1's own autocast tests, the oracle build's exact source: Debian's source
# package of python3-torch (`apt-get source --download-only pytorch`, through a private source list
# and package lists, so the machine's apt configuration is left as it was), and extracts the four
# files tests/pytorch/ runs: test/test_autocast.py, test/test_jit_autocast.py, test/jit/test_models.py
# and torch/testing/_internal/autocast_test_lists.py. Usage:
#   scripts/fetch-pytorch-tests.sh [DIR]      # default: $AMPJIT_PYTORCH_TESTS or ~/.cache/ampjit/pytorch-1.13.1
# Prints the folder. A folder that already holds the files is used as is (no network).
set -euo pipefail
dest=${1:-${AMPJIT_PYTORCH_TESTS:-$HOME/.cache/ampjit/pytorch-1.13.1}}
files=(test/test_autocast.py test/test_jit_autocast.py test/jit/test_models.py
       torch/testing/_internal/autocast_test_lists.py)
have=1
for f in "${files[@]}"; do [[ -f "$dest/$f" ]] || have=0; done
if ((have)); then echo "$dest"; exit 0; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/sources.d" "$work/lists/partial"
cat > "$work/sources.d/src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
apt_opts=(-o Dir::Etc::sourcelist=/dev/null -o "Dir::Etc::sourceparts=$work/sources.d"
          -o "Dir::State::Lists=$work/lists" -o Debug::NoLocking=1)
apt-get "${apt_opts[@]}" update -qq >&2
# The .debian.tar.xz of the package is not needed (and may be missing from the mirror): only the
# upstream tarball is, so a failed fetch of the rest is not an error when the tarball arrived.
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only pytorch >&2) || true
tarball=$(ls "$work"/pytorch_1.13.1*.orig.tar.* 2>/dev/null | head -1)
if [[ -z "$tarball" ]]; then
  echo "fetch-pytorch-tests: could not download PyTorch 1.13.1's source package (pytorch_1.13.1*.orig.tar.*)" >&2
  exit 1
fi
mkdir -p "$dest"
tar -xf "$tarball" -C "$work" --wildcards "${files[@]/#/*/}"
for f in "${files[@]}"; do
  mkdir -p "$dest/$(dirname "$f")"
  cp "$work"/pytorch-*/"$f" "$dest/$f"
done
echo "$dest"
