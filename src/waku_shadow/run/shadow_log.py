"""Reading Shadow's own output: its progress, the simulated time it reached, and why it stopped."""

from __future__ import annotations

import re
from pathlib import Path

from waku_shadow.configuration.units import duration_ns
from waku_shadow.run import shadow_yaml
from waku_shadow.stack.shadow_options import PATCHED_SHADOW_OPTIONS

PROGRESS = re.compile(r"simulated: (?P<now>[\d:.]+)/(?P<end>[\d:.]+)")
HEARTBEAT = re.compile(rb"at simtime (\d+)")  # Shadow's per-second resource usage lines
LOG_SIMTIME = re.compile(rb"^\S+ \[[^\]]+\] (\d+:\d\d:\d\d\.\d+) ", re.M)  # a host's log line: wall, thread, sim time
FAILED_PROCESS = re.compile(
    r"process '(?P<process>[^']+)' exited with status (?P<status>[^;]+); "
    r"expected end state was (?P<expected>.+?) but was (?P<actual>.+)$"
)
UNKNOWN_OPTION = re.compile(r"unknown field `(?P<option>\w+)`")  # how Shadow refuses a config key it lacks


def clock(ns: int) -> str:
    seconds, rest = divmod(ns, 1_000_000_000)
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:{seconds:02d}.{rest // 1_000_000:03d}"


def parse_clock(text: str) -> int:
    hours, minutes, seconds = text.split(":")
    return round((int(hours) * 3600 + int(minutes) * 60 + float(seconds)) * 1e9)


def latest_simulated_time(shadow_log: Path, progress: str) -> str:
    """The latest simulated time in Shadow's last progress line or the end of its log."""
    latest = parse_clock(progress)
    try:
        with shadow_log.open("rb") as log:
            log.seek(max(0, log.seek(0, 2) - 65536))
            tail = log.read()
    except OSError:
        tail = b""
    for beat in HEARTBEAT.findall(tail):
        latest = max(latest, int(beat))
    for stamp in LOG_SIMTIME.findall(tail):
        latest = max(latest, parse_clock(stamp.decode()))
    return clock(latest)


def configured_stop_time(run_dir: Path) -> str:
    stop_time = shadow_yaml.read(run_dir)["general"]["stop_time"]
    return clock(duration_ns(stop_time, "general.stop_time"))


def shadow_error(shadow_stderr: Path) -> str:
    """Shadow's own account of why it stopped: its "Error:" lines up to the backtrace."""
    if not shadow_stderr.exists():
        return ""
    reasons = []
    for line in shadow_stderr.read_text(errors="replace").splitlines():
        if not line.startswith("Error:"):
            continue
        text = line.removeprefix("Error:").strip()
        if text.startswith("Stack backtrace"):
            break
        if text and text != "Caused by:" and not text.startswith("process '"):
            reasons.append(text)
    return " ".join(reasons)


def missing_patch(shadow_stderr: Path) -> str:
    """Why Shadow refused an option of a patched Shadow, naming the study key and the patch; "" otherwise."""
    if not shadow_stderr.exists():
        return ""
    for match in UNKNOWN_OPTION.finditer(shadow_stderr.read_text(errors="replace")):
        if match["option"] in PATCHED_SHADOW_OPTIONS:
            key, patch = PATCHED_SHADOW_OPTIONS[match["option"]]
            return (
                f"{key}: true needs a Shadow built with {patch}, and this Shadow does not know its option "
                f"experimental.{match['option']}; let the workflow build Shadow (stack.shadow.binary: null) "
                f"or point stack.shadow.binary at a Shadow built with the patch, or set {key}: false"
            )
    return ""


def failed_processes(shadow_log: Path) -> list[dict]:
    found = []
    if shadow_log.exists():
        with shadow_log.open(errors="replace") as log:
            for line in log:
                match = FAILED_PROCESS.search(line.rstrip())
                if match:
                    found.append(match.groupdict())
    return found
