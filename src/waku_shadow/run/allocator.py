"""The malloc Shadow itself runs with (stack.shadow.allocator): a library preloaded into Shadow's
process only. Shadow starts its nodes with the environment its config gives them, so they keep
glibc's malloc and the memory settings made for it (shadow.nwaku_mmap_threshold)."""

from __future__ import annotations

import ctypes.util
from pathlib import Path

from waku_shadow.configuration.study import SHADOW_ALLOCATORS
from waku_shadow.errors import StackError

AUTO, GLIBC, JEMALLOC = SHADOW_ALLOCATORS


def preload(allocator: str) -> str | None:
    """What LD_PRELOAD gives Shadow for ``allocator``; None runs it with glibc's malloc."""
    if allocator == GLIBC:
        return None
    if allocator in (JEMALLOC, AUTO):
        # the library's name, which the dynamic loader finds where ldconfig does
        found = ctypes.util.find_library(JEMALLOC)
        if found is None and allocator == JEMALLOC:
            raise StackError("stack.shadow.allocator: jemalloc, but libjemalloc is not installed "
                             "(Debian: apt install libjemalloc2); install it, or set glibc")
        return found
    if not Path(allocator).is_file():
        raise StackError(f"stack.shadow.allocator: {allocator} is not a file; give a malloc library, jemalloc or glibc")
    return allocator


def name(preloaded: str | None) -> str:
    """How run_stats.json names the malloc a run had."""
    return GLIBC if preloaded is None else preloaded
