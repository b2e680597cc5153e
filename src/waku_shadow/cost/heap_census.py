"""What fills a running node's heap: its glibc main-arena chunks counted by size.

A node's private memory is mostly its heap, and the heap is mostly blocks in use. Counting them by
size names the largest kinds: a chunk size that appears once per connection, or once per peer, is
a buffer or a table the code allocates per connection or peer. The heap is read from
``/proc/PID/mem`` (root, or the process's owner with ptrace allowed) while the node runs; chunks
above glibc's mmap threshold are mappings of their own and not in it.
"""

from __future__ import annotations

import platform
import re
import struct
from pathlib import Path

import numpy as np
import pandas as pd

from waku_shadow.cost.profile import NODE_PROCESS
from waku_shadow.errors import WakuShadowError

CHUNK_HEADER = 16  # glibc's prev_size and size words on 64-bit
HEAP_READS = 5
TCACHE_BINS = 64
TCACHE_CHUNK = CHUNK_HEADER + TCACHE_BINS * (2 + 8)  # 0x290: uint16 counts and the list heads
GLIBC = platform.libc_ver()[1]  # the nodes run on this machine's glibc
SAFE_LINKING = bool(GLIBC) and tuple(int(part) for part in GLIBC.split(".")[:2]) >= (2, 32)
PREV_INUSE = 1
SIZE_FLAGS = 7
HEAP_MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) rw-p \S+ \S+ \S+\s+\[heap\]$", re.M)


class HeapCensusError(WakuShadowError):
    """A process whose heap cannot be read or walked."""


def cached_chunks(heap: bytes, start: int) -> set[int]:
    """The offsets of the chunks in the heap's tcache, the main thread's cache of freed small chunks.

    glibc (2.30 and later) keeps it in the heap's first chunk: 64 counts, then 64 list heads, each
    the address of a freed chunk's data, whose first word links to the next one; since glibc 2.32
    that link is stored XORed with its own address shifted right by 12 (safe-linking).
    """
    if len(heap) < TCACHE_CHUNK or struct.unpack_from("<Q", heap, 8)[0] & ~SIZE_FLAGS != TCACHE_CHUNK:
        return set()
    counts = struct.unpack_from(f"<{TCACHE_BINS}H", heap, CHUNK_HEADER)
    heads = struct.unpack_from(f"<{TCACHE_BINS}Q", heap, CHUNK_HEADER + 2 * TCACHE_BINS)
    cached = set()
    for count, data in zip(counts, heads):
        for _ in range(count):
            offset = data - CHUNK_HEADER - start
            if data % 16 or not 0 <= offset < len(heap) - CHUNK_HEADER - 8:
                break  # a list changed while the heap was read
            cached.add(offset)
            link = struct.unpack_from("<Q", heap, offset + CHUNK_HEADER)[0]
            data = link ^ (data >> 12) if SAFE_LINKING else link
    return cached


def walk_chunks(heap: bytes, where: str = "the heap", cached: set[int] = frozenset()) -> list[tuple[int, bool]]:
    """Each chunk's size and whether it is in use, from the first chunk to the top chunk.

    A chunk is free when the next chunk's PREV_INUSE bit is clear, or when it is in ``cached`` (the
    tcache, whose chunks keep that bit set); glibc's fastbins keep it set too, and their chunks (of
    at most 128 bytes, the ones the tcache had no room for) count as in use.
    """
    chunks: list[tuple[int, bool]] = []
    offset = 0
    while offset + CHUNK_HEADER <= len(heap):
        size = struct.unpack_from("<Q", heap, offset + 8)[0] & ~SIZE_FLAGS
        if size < CHUNK_HEADER or offset + size > len(heap):
            raise HeapCensusError(
                f"{where}: chunk at offset {offset} has size {size}, outside the heap's {len(heap)} bytes "
                "(not a glibc main arena, or changed while it was read: read it again)"
            )
        following = offset + size
        in_use = following + CHUNK_HEADER > len(heap) or bool(
            struct.unpack_from("<Q", heap, following + 8)[0] & PREV_INUSE
        )
        chunks.append((size, in_use and offset not in cached))
        offset = following
    return chunks


def heap_extent(pid: int) -> tuple[int, int]:
    """Where a process's [heap] mapping starts and ends."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError as error:
        raise HeapCensusError(f"process {pid}: cannot read its memory map ({error.strerror})") from None
    mapping = HEAP_MAPPING.search(maps)
    if mapping is None:
        raise HeapCensusError(f"process {pid} has no [heap] mapping")
    start, end = (int(address, 16) for address in mapping.groups())
    return start, end


def heap_mapping(pid: int) -> tuple[int, bytes]:
    """Where a process's [heap] mapping starts, and its bytes, read again until the heap kept its
    extent while it was read (a heap that grows meanwhile has a top chunk past the bytes read)."""
    for _ in range(HEAP_READS):
        start, end = heap_extent(pid)
        try:
            with open(f"/proc/{pid}/mem", "rb") as memory:
                memory.seek(start)
                heap = memory.read(end - start)
        except OSError as error:
            raise HeapCensusError(f"process {pid}: cannot read its heap ({error.strerror})") from None
        if heap_extent(pid) == (start, end):
            return start, heap
    raise HeapCensusError(f"process {pid}: its heap changed its extent during each of {HEAP_READS} reads")


def read_heap(pid: int) -> tuple[int, bytes, list[tuple[int, bool]]]:
    """A running process's heap: where it starts, its bytes and its chunks (the tcache's free), read
    again while a walk finds a chunk that another thread was changing as the bytes were copied."""

    def read_once() -> tuple[int, bytes, list[tuple[int, bool]]]:
        start, heap = heap_mapping(pid)
        return start, heap, walk_chunks(heap, f"process {pid}'s heap", cached_chunks(heap, start))

    for _ in range(HEAP_READS - 1):
        try:
            return read_once()
        except HeapCensusError:
            continue
    return read_once()


def census(chunks: list[tuple[int, bool]]) -> pd.DataFrame:
    """Chunks in use by size, largest total first: size, count, KiB."""
    sizes = pd.Series([size for size, in_use in chunks if in_use], dtype="int64")
    table = sizes.value_counts().rename_axis("size").reset_index(name="count")
    table["kib"] = table["size"] * table["count"] / 1024
    return table.sort_values(["kib", "size"], ascending=False, ignore_index=True)


def holders(heap: bytes, start: int, chunks: list[tuple[int, bool]], size: int) -> tuple[int, int, pd.DataFrame]:
    """Who holds the chunks in use of one size: the chunks in use whose words point at one of them.

    Returns how many chunks of ``size`` are in use, how many of those hold only zero bytes, and the
    holders counted by their own size and the offset of the pointer in their data (Nim's objects
    keep a field at one offset, so one kind of holder is one row), with one holder's address each,
    most first. A pointer from outside the heap (a global, a mapped chunk) is not counted.
    """
    sizes = np.array([chunk_size for chunk_size, _ in chunks], dtype=np.int64)
    in_use = np.array([used for _, used in chunks], dtype=bool)
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    held = offsets[(sizes == size) & in_use]
    zero = sum(not any(heap[offset + CHUNK_HEADER:offset + size]) for offset in held)
    words = np.frombuffer(heap, dtype="<u8", count=len(heap) // 8)
    where = np.flatnonzero(np.isin(words, (start + held + CHUNK_HEADER).astype(np.uint64))) * 8
    holder = np.searchsorted(offsets, where, side="right") - 1
    pointers = pd.DataFrame({"holder_size": sizes[holder], "offset": where - offsets[holder] - CHUNK_HEADER,
                             "holder": start + offsets[holder], "in_use": in_use[holder]})
    pointers = pointers[pointers["in_use"] & (pointers["offset"] >= 0)]
    table = (pointers.groupby(["holder_size", "offset"])
             .agg(count=("holder", "size"), example=("holder", "first"))
             .reset_index().sort_values(["count", "holder_size"], ascending=False, ignore_index=True))
    return len(held), zero, table


def holders_text(size: int, count: int, zero: int, table: pd.DataFrame, top: int) -> str:
    lines = [f"chunks of {size} bytes in use: {count}, {zero} of them only zero bytes",
             "held by: chunk size  pointer at  count  example chunk"]
    lines += [f"{row.holder_size:18d}  {row.offset:10d}  {row.count:5d}  {row.example:#x}"
              for row in table.head(top).itertuples()]
    return "\n".join(lines)


def node_process(host: str) -> int:
    """The PID of the running node (wakunode2) whose working directory is Shadow's folder for ``host``."""
    matches = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if not (proc / "comm").read_text().startswith(NODE_PROCESS):
                continue
            if (proc / "cwd").readlink().parts[-2:] == ("hosts", host):
                matches.append(int(proc.name))
        except OSError:
            continue  # a process that ended meanwhile, or one we may not look into
    if len(matches) != 1:
        found = "none" if not matches else f"{len(matches)} (PIDs {', '.join(map(str, sorted(matches)))})"
        raise HeapCensusError(f"running {NODE_PROCESS} processes in a Shadow host folder named {host}: {found}; "
                              "give its PID instead")
    return matches[0]


def to_text(pid: int, heap_bytes: int, chunks: list[tuple[int, bool]], table: pd.DataFrame, top: int) -> str:
    in_use = int((table["size"] * table["count"]).sum())
    free = sum(size for size, used in chunks if not used)
    lines = [f"process {pid}: heap {heap_bytes / 1024:.0f} KiB in {len(chunks)} chunks, "
             f"{in_use / 1024:.0f} KiB in use, {free / 1024:.0f} KiB free",
             "chunk size (bytes)  count  KiB"]
    lines += [f"{row.size:18d}  {row.count:5d}  {row.kib:.0f}" for row in table.head(top).itertuples()]
    return "\n".join(lines)
