#!/usr/bin/env python3
"""Write data/paper/shadow_latency_receipts.csv.gz from the paper's raw Shadow latencies.

    python scripts/import_paper_latencies.py --git-dir <clone of github.com/waku-org/research>/.git

The raw files (rln-delay-simulations/raw/paper_latency_<size>kb_v2.txt) are grep output over the
paper's Shadow run, one line per receipt:

    shadow.data/hosts/peer870/wakunode2.1000.stdout:83:rx_msg msg_sender=1 seq=0 arrival_diff=443 milliseconds

This keeps one row per receipt (size_kb, receiver, seq, latency_ms), after checking that every
line has that shape, that one node sent every message and that every receiver got each message
once. The gzip stream carries no timestamp, so the same commit gives the same bytes.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "data" / "paper" / "shadow_latency_receipts.csv.gz"
COMMIT = "b3c3900ad4f56a5e45711ddf9d86a3f735e2cfe4"
SIZES_KB = (2, 25, 100, 500)
LINE = re.compile(
    r"shadow\.data/hosts/(?P<receiver>peer\d+)/wakunode2\.\d+\.stdout:\d+:"
    r"rx_msg msg_sender=(?P<sender>\d+) seq=(?P<seq>\d+) arrival_diff=(?P<latency>\d+) milliseconds"
)


def raw_path(size_kb: int) -> str:
    return f"rln-delay-simulations/raw/paper_latency_{size_kb}kb_v2.txt"


def receipts(git_dir: str, commit: str, size_kb: int) -> list[tuple[int, str, int, int]]:
    text = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{raw_path(size_kb)}"],
                          check=True, capture_output=True, text=True).stdout
    rows, seen = [], set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = LINE.fullmatch(line)
        if match is None:
            sys.exit(f"{raw_path(size_kb)}:{number}: not a receipt line: {line!r}")
        if match["sender"] != "1":
            sys.exit(f"{raw_path(size_kb)}:{number}: msg_sender={match['sender']}, expected 1")
        key = (match["receiver"], int(match["seq"]))
        if key in seen:
            sys.exit(f"{raw_path(size_kb)}:{number}: {key[0]} received seq {key[1]} twice")
        seen.add(key)
        rows.append((size_kb, match["receiver"], int(match["seq"]), int(match["latency"])))
    receivers = {receiver for _, receiver, _, _ in rows}
    seqs = {seq for _, _, seq, _ in rows}
    if len(rows) != len(receivers) * len(seqs):
        sys.exit(f"{raw_path(size_kb)}: not every receiver got every message")
    print(f"{size_kb} KB: {len(rows)} receipts, {len(receivers)} receivers, seq {min(seqs)}..{max(seqs)}")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", required=True, help="the .git folder of a clone of waku-org/research")
    parser.add_argument("--commit", default=COMMIT)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = [row for size in SIZES_KB for row in receipts(args.git_dir, args.commit, size)]
    rows.sort(key=lambda r: (r[0], int(r[1].removeprefix("peer")), r[2]))
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["size_kb", "receiver", "seq", "latency_ms"])
    writer.writerows(rows)
    with open(args.out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as handle:
        handle.write(text.getvalue().encode())
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
