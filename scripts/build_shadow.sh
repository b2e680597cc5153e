#!/usr/bin/env bash
# Builds Shadow at a pinned tag from its upstream repository and installs it under PREFIX.
# Used by the build_shadow rule and the Dockerfile. Needs Shadow's build dependencies
# (see the README: cmake, gcc/g++, glib2 dev, libclang, pkg-config, python3, a Rust toolchain).
#
# usage: scripts/build_shadow.sh REPOSITORY TAG PREFIX
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 REPOSITORY TAG PREFIX" >&2; exit 2; }
repo=$1 tag=$2 prefix=$(realpath -m "$3")
src="$prefix.src"

rm -rf "$src"
git clone --depth 1 --branch "$tag" "$repo" "$src"
cd "$src"
./setup build --clean --jobs "$(nproc)" --prefix "$prefix"
./setup install
"$prefix/bin/shadow" --version
