#!/usr/bin/env bash
# Builds Shadow at a pinned tag from its upstream repository, with the given patches applied,
# and installs it under PREFIX. Used by the build_shadow rule and the Dockerfile. Needs Shadow's
# build dependencies (see shadow/README.md: cmake, gcc/g++, glib2 dev, libclang, pkg-config,
# python3, a Rust toolchain).
#
# usage: scripts/build_shadow.sh REPOSITORY TAG PREFIX PATCH...
#   The source is cloned into PREFIX.src, the patches are applied there with git apply.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 REPOSITORY TAG PREFIX PATCH..." >&2; exit 2; }
repo=$1 tag=$2 prefix=$(realpath -m "$3")
shift 3
patches=()
for patch in "$@"; do patches+=("$(realpath "$patch")"); done
src="$prefix.src"

rm -rf "$src"
git clone --depth 1 --branch "$tag" "$repo" "$src"
cd "$src"
# one by one, in order: a patch may touch what one before it touched
for patch in "${patches[@]}"; do
  git apply --check "$patch" || { echo "build_shadow: $(basename "$patch") does not apply to Shadow $tag after the patches before it" >&2; exit 1; }
  git apply "$patch"
done
./setup build --clean --jobs "$(nproc)" --prefix "$prefix"
./setup install
"$prefix/bin/shadow" --version
