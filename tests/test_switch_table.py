"""performance.md's tables of switches and trades, from the paired benchmarks in bench/."""

import json

from conftest import REPO

from waku_shadow.report import switch_table


def _bench(folder, stamp, name, with_overlay, without):
    rows = [{"label": label, "nodes": 200, "size_bytes": 500_000, "wall_s": wall, "peak_memory_gib": gib}
            for label, (wall, gib) in (("paper+x25519", with_overlay), ("paper", without))]
    (folder / f"{stamp}-{name}.json").write_text(json.dumps({"rows": rows}))


def test_the_newest_pair_of_each_overlay_is_quoted_off_then_on(tmp_path):
    _bench(tmp_path, "20261101T000000Z", "paper+x25519-vs-paper", (120.0, 2.0), (110.0, 2.1))
    _bench(tmp_path, "20261102T000000Z", "paper-vs-paper+x25519", (100.0, 2.5), (90.0, 2.4))
    _bench(tmp_path, "20261103T000000Z", "paper+x25519+uncut-vs-paper", (1.0, 1.0), (1.0, 1.0))  # another pair
    table = switch_table.time_savers(tmp_path)
    x25519 = next(line for line in table.splitlines() if "`x25519.yaml`" in line)
    assert x25519.endswith("| N = 200, 500 KB: 100.0 → 90.0 s, 2.50 → 2.40 GiB (2026-11-02) |")
    assert table.count("no paired benchmark in bench/") == len(switch_table.TIME_SAVERS) - 1


def test_every_overlay_the_tables_name_exists():
    overlays = {overlay for *_, overlay in switch_table.TIME_SAVERS} | {overlay for overlay, _ in switch_table.TRADES}
    assert all((REPO / "configs" / "overlays" / f"{overlay}.yaml").exists() for overlay in overlays)
