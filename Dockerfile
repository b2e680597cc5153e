# waku-shadow with Shadow and a patched nwaku built from their pinned upstream tags,
# by the same scripts the workflow's build rules run. docs/running.md ("In a container") has
# the commands that were proven, and what a sandboxed host needs besides.
#
#   docker build -t waku-shadow .
#   docker run --rm --shm-size=200g -v "$PWD/results:/waku-shadow/results" \
#     waku-shadow --cores 64 --configfile configs/paper.yaml
#   docker run --rm --entrypoint python waku-shadow -m pytest
#
# Without GitHub (behind a firewall), each upstream source can come from this machine instead,
# as a build context; a context left out is fetched from upstream:
#   --build-context nwaku-source=DIR  an nwaku checkout at NWAKU_TAG with its submodules
#   --build-context nim=DIR           a Nim >= 2.2.4 installation (DIR/bin/nim)
#   --build-context rust=DIR          a Rust toolchain (the folder `rustc --print sysroot` names)
#   --build-context ca-certificates=DIR  extra CA certificates (*.crt), e.g. a TLS-inspecting
#                                     proxy's, for PyPI and crates.io
#   --build-context git-mirrors=DIR   bare repositories laid out as OWNER/NAME.git, used for
#                                     every github.com URL (Shadow, its cargo git dependencies,
#                                     nwaku, Nim) with --build-arg GITHUB_MIRROR=file:///src/git-mirrors/
# GITHUB_MIRROR can also be an internal git server that mirrors github.com (https://git.example/gh/).
# Debian's packages, PyPI and crates.io must still be reachable.

ARG DEBIAN=bookworm

# Empty unless replaced by the build context of the same name.
FROM scratch AS nwaku-source
FROM scratch AS nim
FROM scratch AS rust
FROM scratch AS git-mirrors
FROM scratch AS ca-certificates

FROM debian:${DEBIAN} AS build
ARG SHADOW_TAG=v3.3.0
# any folder of nwaku-patches/; master-<commit> installs its own Nim and nimble packages at build time
ARG NWAKU_TAG=v0.38.1
# all, or essential: the patches of the meaning and switch tiers only (each folder's series file),
# what an nwaku tree other than the tag needs (a pull request's, docs/examples/waku-pr-signoff.yml)
ARG NWAKU_PATCHES=all
ARG NIM_TAG=v2.2.6
ARG RUST_TOOLCHAIN=1.90
ARG GITHUB_MIRROR=
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates curl git build-essential clang cmake make pkg-config python3 jq \
      libclang-dev libglib2.0-dev libc-dbg xz-utils util-linux findutils netbase \
    && rm -rf /var/lib/apt/lists/*
COPY --from=ca-certificates / /usr/local/share/ca-certificates/
RUN update-ca-certificates
COPY --from=git-mirrors / /src/git-mirrors/
RUN if [ -n "$GITHUB_MIRROR" ]; then \
      git config --global url."$GITHUB_MIRROR".insteadOf https://github.com/ \
      && git config --global protocol.file.allow always; fi
# cargo fetches its git dependencies with git itself, so they follow GITHUB_MIRROR too
ENV CARGO_NET_GIT_FETCH_WITH_CLI=true

COPY --from=rust / /opt/rust/
ENV PATH=/opt/rust/bin:/root/.cargo/bin:$PATH
RUN [ -x /opt/rust/bin/cargo ] || curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
      | sh -s -- -y --profile minimal --default-toolchain ${RUST_TOOLCHAIN}; \
    cargo --version

# Nim >= 2.2.4 for nwaku (built with USE_SYSTEM_NIM=1)
COPY --from=nim / /opt/nim/
RUN if [ ! -x /opt/nim/bin/nim ]; then \
      git clone --depth 1 --branch ${NIM_TAG} https://github.com/nim-lang/Nim.git /opt/nim \
      && cd /opt/nim && sh build_all.sh; fi \
    && /opt/nim/bin/nim --version

COPY scripts/build_shadow.sh scripts/build_nwaku.sh /src/scripts/
COPY shadow /src/shadow
RUN /src/scripts/build_shadow.sh https://github.com/shadow/shadow.git ${SHADOW_TAG} /opt/shadow \
      /src/shadow/patches/*.patch \
    && rm -rf /opt/shadow.src

COPY --from=nwaku-source / /src/nwaku/
COPY nwaku-patches /src/nwaku-patches
# -d:disableMarchNative: a binary for any x86-64 host, not only the build machine's CPU.
# A source tree built elsewhere carries generated files that name that machine's paths: dropped.
RUN source=; if [ -e /src/nwaku/.git ]; then source=/src/nwaku; \
      rm -rf /src/nwaku/vendor/.nimble /src/nwaku/nimbus-build-system.paths /src/nwaku/nimcache /src/nwaku/build; fi; \
    case "$NWAKU_PATCHES" in all) tiers='meaning|switch|speed' ;; essential) tiers='meaning|switch' ;; \
      *) echo "NWAKU_PATCHES: all or essential, not $NWAKU_PATCHES" >&2; exit 1 ;; esac; \
    patches=$(for folder in /src/nwaku-patches/${NWAKU_TAG} /src/nwaku-patches/nim; do \
      grep -E "^[^#].* ($tiers)\$" $folder/series | cut -d' ' -f1 | sed "s|^|$folder/|"; done); \
    NWAKU_MAKE_FLAGS="$(printf 'USE_SYSTEM_NIM=1\nNIMFLAGS=-d:disableMarchNative')" NWAKU_PATH_PREPEND=/opt/nim/bin \
    NWAKU_MEMORY_MANAGER=orc NWAKU_ALLOCATOR=malloc \
    /src/scripts/build_nwaku.sh ${source:+--source "$source"} https://github.com/waku-org/nwaku.git ${NWAKU_TAG} /opt/nwaku \
      $patches \
    && rm -rf /opt/nwaku/src /src/nwaku


FROM debian:${DEBIAN}
ARG NWAKU_TAG=v0.38.1
ARG NWAKU_PATCHES=all
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates curl git python3 python3-venv libglib2.0-0 libjemalloc2 procps \
    && rm -rf /var/lib/apt/lists/*
COPY --from=ca-certificates / /usr/local/share/ca-certificates/
RUN update-ca-certificates
COPY --from=build /opt/shadow /opt/shadow
COPY --from=build /opt/nwaku/wakunode2 /opt/nwaku/wakunode2

WORKDIR /waku-shadow
COPY . .
# the dependencies as requirements.lock pins them (pip-compile, Python 3.11: bookworm's), then the project
RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install --no-cache-dir -r requirements.lock \
    && /opt/venv/bin/pip install --no-cache-dir --no-deps -e .
ENV PATH=/opt/venv/bin:/opt/shadow/bin:$PATH

# The image's machine config, and its wakunode2 where the workflow's build rule would have
# put it, with its identity (tag, patch hashes, make flags), so nothing is rebuilt. The tag is the
# image's, so a study that names no release runs the one built here.
RUN printf '%s\n' 'stack:' '  shadow:' '    binary: /opt/shadow/bin/shadow' '  nwaku:' \
      "    tag: ${NWAKU_TAG}" "    patches: ${NWAKU_PATCHES}" \
      '    make_flags: [USE_SYSTEM_NIM=1, NIMFLAGS=-d:disableMarchNative]' > local.yaml \
    && waku-shadow adopt-nwaku --binary /opt/nwaku/wakunode2 \
         --built-from "https://github.com/waku-org/nwaku.git ${NWAKU_TAG}, built in the image's build stage"

ENTRYPOINT ["snakemake"]
CMD ["--cores", "all"]
