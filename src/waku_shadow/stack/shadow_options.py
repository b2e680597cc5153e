"""The Shadow options our patches (shadow/patches/) add, and the study keys that set them."""

from __future__ import annotations

TCP_SLOW_START_AFTER_IDLE = "tcp_slow_start_after_idle"
SHIM_MEMORY_SYSCALLS = "shim_memory_syscalls"
FEW_DESCRIPTORS_PER_PROCESS = "few_descriptors_per_process"


# Shadow's options that only a Shadow built with one of shadow/patches/ has: option -> (study key, patch)
PATCHED_SHADOW_OPTIONS = {
    TCP_SLOW_START_AFTER_IDLE: ("network.tcp_slow_start_after_idle", "shadow/patches/0001-tcp-slow-start-after-idle.patch"),
    SHIM_MEMORY_SYSCALLS: ("shadow.shim_memory_syscalls", "shadow/patches/0002-shim-memory-syscalls.patch"),
    FEW_DESCRIPTORS_PER_PROCESS: ("shadow.few_descriptors_per_process", "shadow/patches/0003-few-descriptors-per-process.patch"),
}
