# waku-shadow with Shadow and a patched nwaku built from their pinned upstream tags,
# by the same scripts the workflow's build rules run.
#
#   docker build -t waku-shadow .
#   docker run --rm --shm-size=64g --security-opt seccomp=unconfined \
#     -v "$PWD/results:/waku-shadow/results" waku-shadow --cores 64 --configfile configs/paper.yaml
#
# Shadow keeps its managed processes' memory in /dev/shm: give the container most of the
# host's RAM as --shm-size. seccomp=unconfined lets Shadow install its own seccomp filter.

ARG DEBIAN=bookworm

FROM debian:${DEBIAN} AS build
ARG SHADOW_TAG=v3.3.0
ARG NWAKU_TAG=v0.37.1-beta
ARG NIM_TAG=v2.2.6
ARG RUST_TOOLCHAIN=1.90
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates curl git build-essential cmake make pkg-config python3 \
      libclang-dev libglib2.0-dev libc-dbg xz-utils util-linux findutils netbase \
    && rm -rf /var/lib/apt/lists/*
RUN curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
      | sh -s -- -y --profile minimal --default-toolchain ${RUST_TOOLCHAIN}
ENV PATH=/root/.cargo/bin:$PATH

# Nim >= 2.2.4 for nwaku (built with USE_SYSTEM_NIM=1)
RUN git clone --depth 1 --branch ${NIM_TAG} https://github.com/nim-lang/Nim.git /opt/nim \
    && cd /opt/nim && sh build_all.sh

COPY scripts/build_shadow.sh scripts/build_nwaku.sh /src/scripts/
COPY shadow /src/shadow
COPY nwaku-patches /src/nwaku-patches
RUN /src/scripts/build_shadow.sh https://github.com/shadow/shadow.git ${SHADOW_TAG} /opt/shadow \
      /src/shadow/patches/*.patch
# -d:disableMarchNative: a binary for any x86-64 host, not only the build machine's CPU
RUN NWAKU_MAKE_FLAGS="$(printf 'USE_SYSTEM_NIM=1\nNIMFLAGS=-d:disableMarchNative')" NWAKU_PATH_PREPEND=/opt/nim/bin \
    NWAKU_MEMORY_MANAGER=orc NWAKU_ALLOCATOR=malloc \
    /src/scripts/build_nwaku.sh "" https://github.com/waku-org/nwaku.git ${NWAKU_TAG} /opt/nwaku \
      /src/nwaku-patches/${NWAKU_TAG}/*.patch \
    && rm -rf /opt/nwaku/src


FROM debian:${DEBIAN}
ARG NWAKU_TAG=v0.37.1-beta
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates curl git python3 python3-venv libglib2.0-0 procps \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/shadow /opt/shadow
COPY --from=build /opt/nwaku/wakunode2 /opt/nwaku/wakunode2

WORKDIR /waku-shadow
COPY . .
RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install --no-cache-dir -e ".[test]"
ENV PATH=/opt/venv/bin:/opt/shadow/bin:$PATH

# The image's machine config, and its wakunode2 where the workflow's build rule would have
# put it, with its identity (tag, patch hashes, make flags), so nothing is rebuilt.
RUN printf '%s\n' 'stack:' '  shadow:' '    binary: /opt/shadow/bin/shadow' '  nwaku:' \
      '    make_flags: [USE_SYSTEM_NIM=1, NIMFLAGS=-d:disableMarchNative]' > local.yaml \
    && waku-shadow adopt-nwaku --binary /opt/nwaku/wakunode2 \
         --built-from "https://github.com/waku-org/nwaku.git ${NWAKU_TAG}, built in the image's build stage"

ENTRYPOINT ["snakemake"]
CMD ["--cores", "all"]
