"""The paper's published numbers (data/paper/) and our results beside them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import hops, model, stats, study_tables
from waku_shadow.configuration import loader, rln_platforms
from waku_shadow.configuration.study import Study
from waku_shadow.configuration.units import human_size
from waku_shadow.paper import published
from waku_shadow.paper.published import (
    LINK_BANDWIDTH_BPS,
    STATISTICS,
    shadow_receipts,
    table5,
)

HOP_SOURCES = ["paper, from latency steps", "ours, from delivery trees", "ours, from latency steps"]


def traffic_reading(study) -> str:
    """Which of the paper's two accounts of its traffic the study follows, from its publishers."""
    if study.publishers == 1:
        return ("Traffic: one publisher, as in the paper's raw data (msg_sender=1 on every line of its Shadow "
                "latencies, NUMPUBLISHERS=1 in its shadow.yaml): every message spreads from the same node over the "
                "same mesh, one delivery tree.")
    return (f"Traffic: {study.publishers} publishers, the reading of the paper's text (\"ten nodes are designated "
            f"as publishers\") rather than of its raw data (one publisher): the latencies mix {study.publishers} "
            "delivery trees.")


@dataclass(frozen=True)
class PaperNetwork:
    """The network of the paper's single-host study: a study is set beside the paper's data only
    when it runs this network (its gossipsub, RLN timings and nwaku may differ: those are what a
    comparison asks about)."""

    nodes: int = 1000
    peers_per_node: int = 25
    topology: str = "random"
    # one-way: the stated 150 ms, and the 75 ms of the slides' "150 ms RTT" that the 2 KB run took (link_evidence)
    latencies_ms: tuple[float, ...] = (150, 75)
    bandwidth_up_bps: int = 100_000_000
    bandwidth_down_bps: int = 100_000_000
    publishers: tuple[int, ...] = (1, 10)  # its raw data's one, its text's ten


PAPER_NETWORK = PaperNetwork()


def size_studies(study: Study) -> list[Study]:
    """The study as each size with settings of its own (by_size) runs it."""
    first_run = {run.size_bytes: run.run_id for run in reversed(study.runs())}
    return [loader.resolve(study.run_config(first_run[size]), f"by_size.{human_size(size)}") for size in study.by_size]


def network_differences(study: Study, paper: PaperNetwork | None = None) -> list[str]:
    """How the study's network, at any of its sizes, differs from the paper's (PAPER_NETWORK), one
    phrase each; empty when it runs the paper's network."""
    paper = paper or PAPER_NETWORK
    differences: list[str] = []
    for network in [study, *size_studies(study)]:
        for difference in _differences(network, paper):
            if difference not in differences:
                differences.append(difference)
    return differences


def _differences(study: Study, paper: PaperNetwork) -> list[str]:
    found = []
    if study.nodes != paper.nodes:
        found.append(f"{study.nodes} nodes, not {paper.nodes}")
    if study.topology != paper.topology:
        found.append(f"a {study.topology} topology, not {paper.topology} dials")
    elif study.peers_per_node != paper.peers_per_node:
        found.append(f"{study.peers_per_node} dials per node, not {paper.peers_per_node}")
    if study.locations is not None:
        found.append("links between locations, not one link")
    elif study.latency_ns / 1e6 not in paper.latencies_ms:
        found.append(f"a {study.latency_ns / 1e6:g} ms link, not {' or '.join(f'{ms:g}' for ms in paper.latencies_ms)} ms")
    if study.bandwidth_classes:
        found.append(f"{len(study.bandwidth_classes)} bandwidth classes, not one link of "
                     f"{paper.bandwidth_up_bps / 1e6:g}/{paper.bandwidth_down_bps / 1e6:g} Mbit up/down")
    elif (study.bandwidth_up_bps, study.bandwidth_down_bps) != (paper.bandwidth_up_bps, paper.bandwidth_down_bps):
        found.append(f"{study.bandwidth_up_bps / 1e6:g}/{study.bandwidth_down_bps / 1e6:g} Mbit up/down, "
                     f"not {paper.bandwidth_up_bps / 1e6:g}/{paper.bandwidth_down_bps / 1e6:g}")
    if study.packet_loss:
        found.append(f"packet loss {study.packet_loss:g}, not none")
    if study.publishers not in paper.publishers:
        found.append(f"{study.publishers} publishers, not {' or '.join(map(str, paper.publishers))}")
    return found


def distances(receipts: pd.DataFrame, keys: list[str], round_name: str = "final") -> pd.DataFrame:
    """KS and Wasserstein distances of our latencies from the paper's raw ones (of one round of its
    runs, published.ROUNDS), per group of ``keys`` (a point, or a point and seed) whose size the
    paper simulated; warm-up left out."""
    table = stats.distribution_distances(receipts, shadow_receipts(round_name), keys)
    return table.rename(columns={"reference_n": "paper_n"})


# The two links the paper's setup is read with: its stated 150 ms one-way, and the 75 ms of the
# slides' "150 ms RTT"; and the proof timings of its own platform (Table 1)
CANDIDATE_LINKS_MS = (75, 150)
PAPER_PLATFORM = "Digital Ocean 8GB/4CPU"


def predicted_first_receipt_ms(size_bytes: int, link_ms: float, generation_ms: float, verification_ms: float,
                               bandwidth_bps: float = LINK_BANDWIDTH_BPS) -> float:
    """The publisher's nearest peer: proof generation, one link, verification and one copy's transmission."""
    return generation_ms + predicted_hop_ms(size_bytes, link_ms, verification_ms, bandwidth_bps)


def predicted_hop_ms(size_bytes: int, link_ms: float, verification_ms: float, bandwidth_bps: float = LINK_BANDWIDTH_BPS) -> float:
    """What one hop adds when no copy waits for another: the link, verification and one copy's transmission."""
    return link_ms + verification_ms + model.wire_bytes(size_bytes) * 8 / bandwidth_bps * 1e3


def first_receipt_and_spacing(receipts: pd.DataFrame) -> pd.DataFrame:
    """Per size (warm-up excluded): the first receipt and the spacing of the hops (ms). The spacing
    is the median step between the fastest receipts of successive hops, read off the delivery
    trees where receipts name their hop, else off the latency steps (hops.latency_steps; NaN
    where a size's latencies show none)."""
    rows = []
    for size, group in stats.measured(receipts).groupby("size_bytes"):
        if "hop" in group:
            starts = group.groupby("hop")["latency_ms"].min().sort_index().to_numpy()
        else:
            starts = hops.latency_steps(group["latency_ms"])
        spacing = float(np.median(np.diff(starts))) if starts is not None and len(starts) > 1 else float("nan")
        rows.append({"size_bytes": int(size), "first_receipt_ms": group["latency_ms"].min(), "hop_spacing_ms": spacing})
    return pd.DataFrame(rows, columns=["size_bytes", "first_receipt_ms", "hop_spacing_ms"])


def link_evidence(links_ms=CANDIDATE_LINKS_MS, bandwidth_bps: float = LINK_BANDWIDTH_BPS) -> pd.DataFrame:
    """Per size of the paper's raw data: its first receipt and hop spacing beside what each candidate
    link predicts with Table 1's timings of the paper's platform, and the link that predicts the
    first receipt best (``link_ms``)."""
    generation, verification = rln_platforms.platforms()[PAPER_PLATFORM]
    table = first_receipt_and_spacing(shadow_receipts())
    for link in links_ms:
        table[f"first_on_{link}ms"] = [predicted_first_receipt_ms(s, link, generation, verification, bandwidth_bps)
                                       for s in table["size_bytes"]]
        table[f"hop_on_{link}ms"] = [predicted_hop_ms(s, link, verification, bandwidth_bps) for s in table["size_bytes"]]
    misses = pd.DataFrame({link: (table[f"first_on_{link}ms"] - table["first_receipt_ms"]).abs() for link in links_ms})
    table["link_ms"] = misses.idxmin(axis=1)
    return table


# The setups a round of the paper's runs could have used: its text's stand-ins (L_g 150 ms, L_v 12 ms)
# on its stated 150 ms link, and Table 1's timings of its platform on either candidate link
TEXT_STAND_INS_MS = (150.0, 12.0)


def candidate_setups() -> dict[str, tuple[float, float, float]]:
    """name -> (proof generation ms, verification ms, one-way link ms)."""
    generation, verification = rln_platforms.platforms()[PAPER_PLATFORM]
    return {"the text's 150 + 12 ms, 150 ms link": (*TEXT_STAND_INS_MS, 150),
            **{f"Table 1's {generation:g} + {verification:g} ms, {link} ms link": (generation, verification, link)
               for link in CANDIDATE_LINKS_MS}}


def round_evidence(bandwidth_bps: float = LINK_BANDWIDTH_BPS) -> pd.DataFrame:
    """Per round of the paper's runs (published.ROUNDS) and size: the first receipt, p50, p95 and max
    (warm-up left out), what each candidate setup predicts for the first receipt, and the setup
    that predicts it best (``setup``)."""
    setups = candidate_setups()
    rows = []
    for round_name in published.ROUNDS:
        for summary in stats.latency_summary(shadow_receipts(round_name)).itertuples():
            size = summary.size_bytes
            row = {"round": round_name, "size_bytes": int(size), "first_receipt_ms": summary.min,
                   "p50_ms": summary.p50, "p95_ms": summary.p95, "max_ms": summary.max}
            predicted = {name: predicted_first_receipt_ms(int(size), link, generation, verification, bandwidth_bps)
                         for name, (generation, verification, link) in setups.items()}
            rows.append({**row, **{f"predicted: {name}": value for name, value in predicted.items()},
                         "setup": min(predicted, key=lambda name: abs(predicted[name] - row["first_receipt_ms"]))})
    return pd.DataFrame(rows)


def hop_shares(receipts: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Receipts per hop count beside the paper's, per point whose size the paper simulated: the
    paper's hops read off its latency steps (hops.hops_from_latency_steps), ours from the delivery
    trees, and ours read off our latency steps the same way, which checks the reading. Tidy:
    keys, source, hop, receipts, share; a source whose latencies show no steps has no rows.
    """
    measured = stats.measured(receipts)
    theirs = shadow_receipts()
    theirs = stats.measured(theirs)
    parts = []
    for point, group in measured.groupby(keys):
        at = stats.point_at(keys, point)
        paper_latency = theirs.loc[theirs["size_bytes"] == at["size_bytes"], "latency_ms"]
        if paper_latency.empty:
            continue
        for source, hop in zip(HOP_SOURCES, (hops.hops_from_latency_steps(paper_latency), group["hop"],
                                             hops.hops_from_latency_steps(group["latency_ms"]))):
            if hop is None:
                continue
            counts = hop.astype(int).value_counts().sort_index()
            parts.append(pd.DataFrame({**at, "source": source, "hop": counts.index, "receipts": counts.to_numpy(),
                                       "share": counts.to_numpy() / counts.sum()}))
    columns = [*keys, "source", "hop", "receipts", "share"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def table5_comparison(summary: pd.DataFrame) -> pd.DataFrame:
    """Our min/mean/p95/max beside the paper's single-host ones, with ours / paper per cell.

    Only sizes the paper measured are compared; an empty frame when there are none.
    """
    paper = table5()
    paper = paper[paper["setup"] == "s-h"].pivot(index="size_bytes", columns="statistic", values="latency_ms")
    ours = summary.set_index("size_bytes")[STATISTICS]
    sizes = [size for size in ours.index if size in paper.index]
    rows = []
    for size in sizes:
        for statistic in STATISTICS:
            rows.append(
                {
                    "size_bytes": size,
                    "statistic": statistic,
                    "paper_ms": float(paper.loc[size, statistic]),
                    "ours_ms": float(ours.loc[size, statistic]),
                }
            )
    table = pd.DataFrame(rows, columns=["size_bytes", "statistic", "paper_ms", "ours_ms"])
    table["ratio"] = table["ours_ms"] / table["paper_ms"]
    return table


def table3_comparison(receipts: pd.DataFrame, publishes: pd.DataFrame, path: list[str], study) -> pd.DataFrame:
    """Our cascade in the shape of Table 3, the paper's values beside ours and ours / paper per cell.

    ``path`` names the location of every node of the line, publisher first. Hop h runs from
    path[h-1] to path[h]; its L_t is the child's receipt minus the parent's (the publish for
    h = 1) minus the configured L_v; ``expected_ms`` is what the link alone explains,
    RTT/2 + wire bytes / bandwidth, and ``slow_start_restart_ms`` adds the round trips a TCP
    connection needs when it restarts slow start after idling (model.slow_start_rounds), and
    ``paper_over_restart`` the paper's L_t over the latter. The total is the mean
    latency at the end of the line.
    """
    measured = stats.measured(receipts)
    measured = measured.assign(hop_ms=hops.hop_times_ms(measured))
    sent = stats.measured(publishes).set_index("msg_hash")
    paper = published.table3().set_index(["size_bytes", "component", "from", "to"])["latency_ms"]
    link_bps = min(study.bandwidth_up_bps, study.bandwidth_down_bps)
    rows = []
    for size, group in measured.groupby("size_bytes"):
        hashes = group["msg_hash"].unique()
        generation = (sent.loc[hashes, "publish_ns"] - sent.loc[hashes, "intent_ns"]).mean() / 1e6
        rows.append({"size_bytes": size, "component": "L_g", "from": path[0], "to": "", "ours_ms": generation})
        validation = study.rln.verification_delay_ns(size) / 1e6
        wire = model.wire_bytes(size)
        hop_ms = group.groupby("hop")["hop_ms"].mean()
        for hop in range(1, len(path)):
            link = path[hop - 1], path[hop]
            one_way = study.locations.one_way_ns(*link)
            expected = model.transmission_ns(one_way, wire, link_bps) / 1e6
            restart = expected + model.slow_start_rounds(wire) * 2 * one_way / 1e6
            rows.append({"size_bytes": size, "component": "L_t", "from": link[0], "to": link[1],
                         "ours_ms": hop_ms.get(hop, float("nan")) - validation, "expected_ms": expected, "slow_start_restart_ms": restart})
            rows.append({"size_bytes": size, "component": "L_v", "from": "", "to": link[1], "ours_ms": validation})
        last = group[group["hop"] == len(path) - 1]["latency_ms"].mean()
        rows.append({"size_bytes": size, "component": "total", "from": path[0], "to": path[-1], "ours_ms": last})
    table = pd.DataFrame(rows)
    keys = zip(table["size_bytes"], table["component"], table["from"], table["to"])
    table["paper_ms"] = [float(paper.get(key, float("nan"))) for key in keys]
    table["ratio"] = table["ours_ms"] / table["paper_ms"]
    table["paper_over_restart"] = table["paper_ms"] / table["slow_start_restart_ms"]
    return table[["size_bytes", "component", "from", "to", "paper_ms", "ours_ms", "ratio", "expected_ms",
                  "slow_start_restart_ms", "paper_over_restart"]]


def equation2_table(study: Study, receipts: pd.DataFrame, first: pd.DataFrame) -> pd.DataFrame:
    """Per D and size: Equation 2's bound on the hops (as the paper writes it, as the write-up does, and
    aware of the publisher's flood F, the median of ``first``'s publisher_sent_to) beside the deepest hop
    observed. Measured messages only, as every table."""
    swept_d = study.sweep is not None and study.sweep.parameter == "gossipsub.d"
    measured = stats.measured(receipts)
    first = stats.measured(first)
    if not swept_d:
        degree = study.gossipsub.effective()["d"]
        measured, first = measured.assign(d=degree), first.assign(d=degree)
    flood = first.groupby(["d", "size_bytes"])["publisher_sent_to"].median()
    deepest = measured.groupby(["d", "size_bytes"])["hop"].max()
    return pd.DataFrame([
        {"N": study.nodes, "D": d, "size": human_size(int(size)),
         "Eq. 2 (paper)": model.hmax_paper(study.nodes, d), "⌈log N / log D⌉": model.hmax_writeup(study.nodes, d),
         "publisher's flood F": int(flood[(d, size)]), "flood-aware": model.hmax_flood(study.nodes, d, int(flood[(d, size)])),
         "observed max": int(hops)}
        for (d, size), hops in deepest.items()
    ])


def is_located_cascade(study: Study) -> bool:
    """A line of nodes over locations at one bandwidth, the setup of the paper's Table 3."""
    return study.topology == "cascade" and study.locations is not None and not study.bandwidth_classes


def multihost_table3(run_dirs: list[Path]) -> pd.DataFrame:
    """The paper's Table 3 beside a cascade over locations; empty for any other study.

    A cascade's node i is the line's i-th node, so the locations of the nodes in
    index order are the path a message travels.
    """
    study = loader.load(run_dirs[0] / layout.RUN_CONFIG)
    if not is_located_cascade(study):
        return pd.DataFrame()
    path = list(pd.read_csv(run_dirs[0] / layout.IDENTITIES)["location"])
    receipts = pd.concat([study_tables.run_table(run, layout.RECEIPTS) for run in run_dirs], ignore_index=True)
    publishes = pd.concat([study_tables.run_table(run, layout.PUBLISHES) for run in run_dirs], ignore_index=True)
    return table3_comparison(receipts, publishes, path, study)
