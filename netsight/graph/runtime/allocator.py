"""Giving the heap pages glibc keeps free back to the OS, after the sync and then now and
then (``collector.keep_collections_young``).

glibc returns freed memory to the OS only from the top of its heap; a block freed below a
live one stays in RSS as a free hole until later allocations happen to reuse it. After the
sync that is most of the list pages and their parsed JSON. Under churn it is mostly the
graph's large hash tables: networkx's node, adjacency and predecessor dicts are rebuilt now
and then at the same size (a deleted key's slot stays used, so once restarted pods' new
names have used up the free slots the table is copied into a new one and the old one
freed), which glibc's free bytes (``heap_usage``) show as a hole and ``malloc_trim`` gives
back. Setting glibc's ``M_MMAP_THRESHOLD`` so that such tables get their own mappings does
not prevent it: glibc serves a large request from a free heap chunk that fits before it
maps anything, so the threshold only decides how the heap grows.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from dataclasses import dataclass


@functools.cache  # find_library runs ldconfig
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def release_free_memory() -> None:
    """Give the heap's free pages back to the OS (glibc ``malloc_trim``); live blocks stay
    where they are. Elsewhere this does nothing."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


def resident_bytes() -> int | None:
    """This process's RSS (None: no /proc), cheap enough to read every second."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


@dataclass(frozen=True)
class HeapUsage:
    """glibc's account of the memory it manages (``mallinfo2``), in bytes."""

    mapped: int  # blocks in their own mappings
    in_use: int  # allocated from the heap
    free: int  # free in the heap: in RSS as far as touched and not given back since


def heap_usage() -> HeapUsage | None:
    """What glibc holds (None: not glibc 2.33 or later). Python's small objects are in
    pymalloc's arenas, mapped on their own and counted in neither. glibc walks its free
    lists for it: not for a hot path."""
    mallinfo2 = getattr(_libc(), "mallinfo2", None)
    if mallinfo2 is None:
        return None
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return HeapUsage(mapped=info.hblkhd, in_use=info.uordblks, free=info.fordblks)
