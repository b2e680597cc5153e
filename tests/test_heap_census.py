"""The heap census: glibc chunks walked and counted by size, on a built heap and on this process's own."""

import ctypes
import os
import struct

import pytest

from waku_shadow.cost import heap_census
from waku_shadow.cost.heap_census import HeapCensusError


def chunk(size: int, prev_in_use: bool) -> bytes:
    return struct.pack("<QQ", 0, size | int(prev_in_use)) + bytes(size - 16)


def test_chunks_are_counted_by_size_and_a_free_one_is_told_by_the_next_chunks_bit():
    heap = (chunk(32, True) + chunk(16400, True) + chunk(16400, True) + chunk(16400, True)
            + chunk(48, True)  # free: the next chunk's PREV_INUSE is clear
            + chunk(64, False) + chunk(1024, True))  # the top chunk
    chunks = heap_census.walk_chunks(heap)
    assert chunks == [(32, True), (16400, True), (16400, True), (16400, True), (48, False), (64, True), (1024, True)]
    table = heap_census.census(chunks)
    assert table.iloc[0].to_dict() == {"size": 16400, "count": 3, "kib": pytest.approx(3 * 16400 / 1024)}
    assert 48 not in set(table["size"])
    text = heap_census.to_text(1, len(heap), chunks, table, top=2)
    assert text.splitlines()[0] == f"process 1: heap {len(heap) / 1024:.0f} KiB in 7 chunks, 49 KiB in use, 0 KiB free"
    assert len(text.splitlines()) == 4


def test_a_size_that_leaves_the_heap_is_refused_with_its_offset():
    heap = chunk(32, True) + struct.pack("<QQ", 0, 1 << 20 | 1) + bytes(32)
    with pytest.raises(HeapCensusError, match=r"^the heap: chunk at offset 32 has size 1048576, outside the heap's 80 bytes"):
        heap_census.walk_chunks(heap)


def test_this_processs_own_heap_shows_the_buffers_it_allocated():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]

    # a size nothing else here is likely to hold
    requested, chunk_size = 23456, 23472

    def buffers_held() -> tuple[int, int, int]:
        start, heap, chunks = heap_census.read_heap(os.getpid())
        table = heap_census.census(chunks)
        return int(table.loc[table["size"] == chunk_size, "count"].sum()), start, start + len(heap)

    before = buffers_held()[0]
    held = [libc.malloc(requested) for _ in range(40)]
    try:
        count, start, end = buffers_held()
        # only the buffers glibc gave from the main heap are in [heap]: a malloc made while another
        # thread held the main arena is served from another arena's mapping (fresh-clone CI runs
        # counted 39 of the 40 three times)
        in_heap = sum(start <= pointer < end for pointer in held)
        assert in_heap >= 30
        assert count >= before + in_heap
    finally:
        for pointer in held:
            libc.free(pointer)


def test_chunks_in_the_tcache_count_as_free():
    """A heap whose first chunk is glibc's tcache, listing two of three 48-byte chunks (safe-linked
    when this machine's glibc links so); the third stays in use, and a list running out of the heap
    stops."""
    start = 0x5555_0000_0000
    tcache, first, second, third = 0, heap_census.TCACHE_CHUNK, heap_census.TCACHE_CHUNK + 48, heap_census.TCACHE_CHUNK + 96
    data = [start + offset + 16 for offset in (first, second, third)]

    def link(at: int, to: int) -> int:
        return to ^ (at >> 12) if heap_census.SAFE_LINKING else to

    counts = [0] * 64
    heads = [0] * 64
    counts[1], heads[1] = 2, data[1]  # bin 1: 48-byte chunks, second then first
    counts[5], heads[5] = 3, start + (1 << 30)  # a list pointing outside the heap
    heap = bytearray(chunk(heap_census.TCACHE_CHUNK, True) + chunk(48, True) + chunk(48, True) + chunk(48, True)
                     + chunk(1024, True))
    struct.pack_into("<64H", heap, 16, *counts)
    struct.pack_into("<64Q", heap, 16 + 128, *heads)
    struct.pack_into("<Q", heap, second + 16, link(data[1], data[0]))
    struct.pack_into("<Q", heap, first + 16, link(data[0], 0))
    cached = heap_census.cached_chunks(bytes(heap), start)
    assert cached == {first, second}
    chunks = heap_census.walk_chunks(bytes(heap), cached=cached)
    assert chunks == [(heap_census.TCACHE_CHUNK, True), (48, False), (48, False), (48, True), (1024, True)]
    assert heap_census.cached_chunks(bytes(heap[heap_census.TCACHE_CHUNK:]), start) == set()  # no tcache first


def test_chunks_this_process_freed_into_its_tcache_are_not_counted_in_use():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    size = 1000  # 1008-byte chunks: glibc's, as Python's own allocator takes 512 bytes and less

    def in_use() -> tuple[int, int]:
        _, heap, with_cached = heap_census.read_heap(os.getpid())
        counted = [heap_census.walk_chunks(heap), with_cached]
        return tuple(sum(1 for chunk_size, used in chunks if used and chunk_size == 1008) for chunks in counted)

    held = [libc.malloc(size) for _ in range(5)]
    with_held = in_use()
    for pointer in held:
        libc.free(pointer)
    without_tcache, with_tcache = in_use()
    assert with_tcache == with_held[1] - 5
    assert without_tcache > with_tcache  # the freed chunks sit in the tcache, their next chunks' bits still set


def test_a_host_with_no_running_node_is_named():
    with pytest.raises(HeapCensusError, match=r"^running wakunode2 processes in a Shadow host folder named "
                                              r"no-such-host: none; give its PID instead$"):
        heap_census.node_process("no-such-host")


def test_a_process_that_does_not_exist_is_named():
    with pytest.raises(HeapCensusError, match=r"^process 999999999: cannot read its memory map"):
        heap_census.heap_mapping(999999999)


def test_the_holders_of_a_size_are_counted_by_their_size_and_the_pointers_offset():
    start = 0x1000000

    def holder(size: int, pointer_at: int, target: int) -> bytes:
        body = bytearray(chunk(size, True))
        struct.pack_into("<Q", body, 16 + pointer_at, start + target + 16)
        return bytes(body)

    # offsets: holders at 0, 64 and 3232; targets at 128 (all zero) and 2192 (not); a free holder at 4256
    target_with_data = bytearray(chunk(1040, True))
    target_with_data[100] = 7
    heap = (holder(64, 8, 128) + holder(64, 8, 2192) + chunk(2064, True) + bytes(target_with_data)
            + holder(1024, 136, 128) + holder(48, 0, 128) + chunk(64, False) + chunk(1024, True))
    chunks = heap_census.walk_chunks(heap)
    count, zero, table = heap_census.holders(heap, start, chunks, 2064)
    assert (count, zero) == (1, 1)
    assert table[["holder_size", "offset", "count"]].values.tolist() == [[1024, 136, 1], [64, 8, 1]]
    assert table["example"].tolist() == [start + 3232, start]
    assert heap_census.holders(heap, start, chunks, 1040)[:2] == (1, 0)
    text = heap_census.holders_text(2064, count, zero, table, top=1)
    assert text.splitlines()[0] == "chunks of 2064 bytes in use: 1, 1 of them only zero bytes"
    assert len(text.splitlines()) == 3
