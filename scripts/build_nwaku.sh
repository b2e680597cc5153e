#!/usr/bin/env bash
# Builds a release wakunode2 at a pinned nwaku tag with the given patches applied.
# Used by the build_nwaku rule and the Dockerfile.
#
# usage: scripts/build_nwaku.sh [--source DIR] REPOSITORY TAG OUT_DIR PATCH...
#   TAG           a release tag, or master-<commit>: that commit of the default branch.
#   --source DIR  an nwaku checkout at TAG with its submodules; the patches are applied for the
#                 build and reverted afterwards, so the tree is left as it was found.
#                 Without it, REPOSITORY is cloned at TAG, with submodules, into OUT_DIR/src.
#   OUT_DIR receives wakunode2.
#   PATCH...      applied one at a time in the order given: the build_nwaku rule passes those of the
#                 tiers stack.nwaku.patches chooses, in the order of their folder's series file.
#   Since nwaku moved its Nim dependencies from submodules to nimble.lock (after v0.38.1), they
#   live in nimbledeps/pkgs2/<name>-<version>-<checksum>/ once make has set them up; a patch's
#   paths under vendor/nim-<name>/ then go to that package's folder, so one patch set layout
#   serves both kinds of tree.
#   A PATCH in a folder named nim/ (nwaku-patches/nim/) patches Nim's standard library, not nwaku:
#   it is applied to a copy of the lib folder of the Nim that builds nwaku, in OUT_DIR/nim-lib,
#   and the build compiles against that copy (--lib); the Nim installation is left as it is.
# environment:
#   NWAKU_MAKE_FLAGS    extra make arguments, one per line, e.g. "USE_SYSTEM_NIM=1"
#   NWAKU_PATH_PREPEND  directories (colon-separated) put in front of PATH, e.g. a Nim >= 2.2.4 bin/
#   NWAKU_MEMORY_MANAGER  Nim's memory manager, orc or refc (nwaku's own); default refc
#   NWAKU_ALLOCATOR     malloc (-d:useMalloc, with orc) or nim (Nim's own); default nim
set -euo pipefail
usage() { echo "usage: $0 [--source DIR] REPOSITORY TAG OUT_DIR PATCH..." >&2; exit 2; }
source=
if [ "${1:-}" = --source ]; then
  [ -n "${2:-}" ] || usage
  source=$2
  shift 2
fi
[ $# -ge 3 ] || usage
repo=$1 tag=$2 out=$(realpath -m "$3")
shift 3
die() { echo "build_nwaku: $*" >&2; exit 1; }
patches=() nim_patches=()
for patch in "$@"; do
  patch=$(realpath "$patch")
  if [ "$(basename "$(dirname "$patch")")" = nim ]; then nim_patches+=("$patch"); else patches+=("$patch"); fi
done

mkdir -p "$out"
if [ -z "$source" ]; then
  source="$out/src"
  if [ ! -e "$source/.git" ]; then
    case $tag in
      master-*) git clone "$repo" "$source" && git -C "$source" checkout "${tag#master-}" ;;
      *) git clone --branch "$tag" "$repo" "$source" ;;
    esac || die "cannot clone $repo at $tag"
  fi
  # again after an interrupted or failed update: it only fetches what is still missing
  git -C "$source" submodule update --init --recursive ||
    die "the submodules of $repo at $tag could not all be fetched into $source (see above)"
fi
[ -e "$source/.git" ] || die "$source is not a git checkout of nwaku"
at=$(git -C "$source" describe --tags --exact-match HEAD 2>/dev/null || git -C "$source" rev-parse HEAD)
case $tag in
  master-*) [[ $(git -C "$source" rev-parse HEAD) == "${tag#master-}"* ]] ;;
  *) [ "$at" = "$tag" ] ;;
esac || die "the nwaku source $source is at $at, not at the pinned tag $tag"
git -C "$source" diff --quiet --ignore-submodules HEAD -- ||
  die "the nwaku source $source has local changes to tracked files; commit or stash them first"

# nwaku's build passes NIMFLAGS after its own --mm:refc, so the last --mm given here wins
nimflags="--mm:${NWAKU_MEMORY_MANAGER:-refc}"
[ "${NWAKU_ALLOCATOR:-nim}" != malloc ] || nimflags="$nimflags -d:useMalloc"
make_flags=()
if [ -n "${NWAKU_MAKE_FLAGS:-}" ]; then
  while IFS= read -r flag; do
    case $flag in
      NIMFLAGS=*) nimflags="${flag#NIMFLAGS=} $nimflags" ;;
      *) make_flags+=("$flag") ;;
    esac
  done <<<"$NWAKU_MAKE_FLAGS"
fi
export PATH="${NWAKU_PATH_PREPEND:+$NWAKU_PATH_PREPEND:}$PATH"

nimble_locked=false
[ -f "$source/nimble.lock" ] && [ ! -e "$source/vendor/nim-libp2p" ] && nimble_locked=true
if $nimble_locked && [ ${#patches[@]} -gt 0 ]; then
  make -C "$source" build-deps "${make_flags[@]}" || die "make build-deps (nimble setup) failed in $source"
  rewritten="$out/patches"
  rm -rf "$rewritten"
  mkdir -p "$rewritten"
  for i in "${!patches[@]}"; do
    patch=${patches[$i]}
    script=
    for dir in $(grep -o '^+++ b/vendor/nim-[^/]*' "$patch" | sed 's|^+++ b/||' | sort -u); do
      package=${dir#vendor/nim-}
      found=("$source"/nimbledeps/pkgs2/"$package"-[0-9]*)
      [ ${#found[@]} -eq 1 ] && [ -d "${found[0]}" ] ||
        die "$(basename "$patch") patches $dir, but $source/nimbledeps/pkgs2/ has no single $package package"
      script+="s#^\\(diff --git a/\\|--- a/\\|+++ b/\\)$dir/#\\1nimbledeps/pkgs2/$(basename "${found[0]}")/#;"
      script+="s# b/$dir/# b/nimbledeps/pkgs2/$(basename "${found[0]}")/#;"
    done
    sed -e "$script" "$patch" >"$rewritten/$(basename "$patch")"
    patches[$i]="$rewritten/$(basename "$patch")"
  done
fi

# one at a time, in order, and reverted last first: a patch may change lines an earlier one wrote or
# changed, which one `git apply` of them all does not see
applied=()
revert_applied() {
  local i
  for ((i = ${#applied[@]} - 1; i >= 0; i--)); do git -C "$source" apply -R "${applied[$i]}"; done
}
trap revert_applied EXIT
for patch in "${patches[@]}"; do
  git -C "$source" apply --check "$patch" ||
    die "$(basename "$patch") does not apply to $source at $tag after the patches before it"
  git -C "$source" apply "$patch"
  applied+=("$patch")
done
if [ ${#nim_patches[@]} -gt 0 ]; then
  if $nimble_locked; then
    # the nim this Makefile builds with: the one install-nim puts in ~/.nimble/bin, else PATH's
    make -C "$source" install-nim "${make_flags[@]}"
    nim=$(PATH="$HOME/.nimble/bin:$PATH" command -v nim) || die "no nim in $HOME/.nimble/bin or on PATH after make install-nim"
  elif printf '%s\n' "${make_flags[@]}" | grep -qx 'USE_SYSTEM_NIM=1'; then
    nim=$(command -v nim) || die "USE_SYSTEM_NIM=1 but no nim on PATH (stack.nwaku.path_prepend)"
  else
    make -C "$source" build-nim "${make_flags[@]}"
    nim="$source/vendor/nimbus-build-system/vendor/Nim/bin/nim"
  fi
  # realpath: a Nim installation may link its lib folder, and cp -r would copy the link, not the files
  nim_lib=$(realpath -m "$(dirname "$(dirname "$(realpath "$nim")")")/lib")
  [ -f "$nim_lib/system.nim" ] || die "cannot find the lib folder of $nim (looked for $nim_lib/system.nim)"
  rm -rf "$out/nim-lib"
  cp -r "$nim_lib" "$out/nim-lib"
  # the copy may sit inside another git work tree: keep git from finding it
  GIT_CEILING_DIRECTORIES="$out" git -C "$out/nim-lib" apply --check "${nim_patches[@]}" ||
    die "the Nim patches do not apply to $nim_lib"
  GIT_CEILING_DIRECTORIES="$out" git -C "$out/nim-lib" apply "${nim_patches[@]}"
  nimflags="$nimflags --lib:$out/nim-lib"
fi
if $nimble_locked; then
  # this Makefile appends its own flags (-d:release among them) to NIM_PARAMS from the environment;
  # given as a make argument, NIM_PARAMS would replace them
  NIM_PARAMS="$nimflags" make -C "$source" -j"$(nproc)" wakunode2 DEBUG=0 "${make_flags[@]}"
else
  make -C "$source" -j"$(nproc)" wakunode2 DEBUG=0 "NIMFLAGS=$nimflags" "${make_flags[@]}"
fi
rm -rf "$out/nim-lib"
cp "$source/build/wakunode2" "$out/wakunode2"
"$out/wakunode2" --version
