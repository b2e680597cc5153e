"""The short markdown report of a study."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import load_study, spam, stats, study_tables
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import Study
from waku_shadow.configuration.units import human_size, shadow_bandwidth, shadow_time
from waku_shadow.paper import compare
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.parse import light_clients
from waku_shadow.render import churn_plan
from waku_shadow.report import study_sections, tables
from waku_shadow.report.tables import number

NWAKU_MUXER_ORDER = "nwaku's own order (yamux, then mplex)"


def network_description(study: Study) -> str:
    if study.topology == "cascade":
        layout = "in a line, each dialling the next"
    elif study.discovery is not None:
        layout = (f"finding their peers by discv5 from {study.discovery.bootstrap_nodes} bootstrap nodes, "
                  f"up to {study.discovery.max_connections} connections each")
    else:
        layout = f"each dialling {study.peers_per_node} random peers"
    if study.sharded:
        swept = study.sweep.parameter if study.sweep is not None else None
        per_node = ", ".join(map(str, study.sweep.values)) if swept == "network.shards_per_node" else study.shards.per_node
        served = ("every node on every shard, as nwaku subscribes" if study.shards.per_node is None
                  else f"each node on {per_node} drawn from the seed" + ("" if study.discovery else
                       f", dialling until {study.peers_per_node} of its dialled peers serve each of them"))
        layout += f"; a cluster of {'several' if swept == 'network.shards' else study.shards.count} shards, {served}"
    if study.locations is None:
        return f"{layout}; one-way latency {shadow_time(study.latency_ns)}"
    places = ", ".join(name for name, _ in study.locations.weights)
    return (
        f"{layout}; spread over {places} ({study.locations.assignment.replace('_', ' ')}), one-way latency "
        f"{study.locations.one_way_fraction:g} x the RTTs of {study.locations.matrix_path}"
    )


def bandwidth_description(study: Study) -> str:
    if not study.bandwidth_classes:
        return f"{shadow_bandwidth(study.bandwidth_up_bps)} up / {shadow_bandwidth(study.bandwidth_down_bps)} down"
    return "bandwidth classes " + ", ".join(
        f"{c.name} ({c.share:g} of the nodes, {shadow_bandwidth(c.up_bps)} up / {shadow_bandwidth(c.down_bps)} down)"
        for c in study.bandwidth_classes)


def sweep_description(study: Study) -> str:
    seeds = f"seed {study.seed}" if study.repetitions == 1 else f"seeds {study.seeds[0]}–{study.seeds[-1]}"
    if study.sweep is None:
        return f"One run per message size, {seeds}."
    values = ", ".join(map(str, study.sweep.values))
    follows = " (d_low and d_high follow it unless set)" if study.sweep.parameter == "gossipsub.d" else ""
    return (f"Sweep of {study.sweep.parameter}{follows} over {values}: one run per value and message size, {seeds}; "
            "the values below are those of the first point.")


def publishing_lines(study: Study) -> list[str]:
    """The gossipsub features a study switches away from nwaku's own (nwaku patch 0016)."""
    switched = []
    if study.flood_publish is False:
        switched.append("a node publishes to its mesh only")
    if study.flood_publish_bandwidth_bps is not None:
        switched.append(f"a flood publish is capped at {shadow_bandwidth(study.flood_publish_bandwidth_bps)}")
    if study.idontwant_on_publish:
        switched.append("a publisher sends IDONTWANT with its own message")
    if study.preamble:
        switched.append("gossipsub v1.4 preamble and IMRECEIVING (-d:libp2p_gossipsub_1_4)")
    return [f"Gossipsub features: {'; '.join(switched)} (nwaku patch 0016)."] if switched else []


def by_size_description(study: Study) -> str:
    """The settings some sizes take instead of the study's (by_size), as dotted keys."""
    def flat(settings: dict, prefix: str = "") -> list[str]:
        return [part for key, value in settings.items()
                for part in (flat(value, f"{prefix}{key}.") if isinstance(value, dict) else [f"{prefix}{key} {value}"])]
    return "By size: " + "; ".join(f"{human_size(size)} runs with {', '.join(flat(settings))}"
                                   for size, settings in sorted(study.by_size.items())) + "."


def study_report(results: StudyResults, knees: pd.DataFrame | None = None) -> str:
    """report.md; ``knees`` (load.knees) adds a load study's section."""
    study, run_dirs, keys = results.study, results.run_dirs, results.keys
    gs = study.gossipsub.effective()
    lines = [
        f"# {study.name}",
        "",
        f"{study.nodes} nwaku nodes in Shadow, {network_description(study)}, {bandwidth_description(study)}, "
        f"packet loss {study.packet_loss}; "
        f"gossipsub D={gs['d']} (D_low={gs['d_low']}, D_high={gs['d_high']}, D_lazy={gs['d_lazy']}).",
        f"{study.publishers} publishers x {study.messages_per_publisher} messages per size, after "
        f"{study.warmup_messages} warm-up messages (excluded), one every {shadow_time(study.interval_ns)}; "
        f"L_g = {study.rln.proof_generation_ns / 1e6:g} ms, L_v = {study.rln.verification_ns / 1e6:g} ms "
        f"+ {study.rln.verification_ns_per_byte:g} ns/byte.",
        sweep_description(study),
        *([by_size_description(study)] if study.by_size else []),
        f"Stream muxer: {study.stream_muxer or NWAKU_MUXER_ORDER} first.",
        *(["Static peers dialled one after the other (nwaku patch 0015)."] if study.sequential_dials else []),
        *publishing_lines(study),
        compare.traffic_reading(study),
        "",
        "## Latency (ms, from the publisher's intent to the receiver's acceptance)",
        "",
        tables.latency_summary(results.summary).markdown(),
        f"![latency distributions]({layout.LATENCY_FIGURE})",
        "",
    ]
    if study.sweep or study.repetitions > 1:
        losses_measured = study.min_delivery < 1 or any(loader.load(d / layout.RUN_CONFIG).churn_leaves_per_minute for d in run_dirs)
        metrics = [m for m in ("latency_mean_ms", "latency_p95_ms", "hops_mean", "amplification", "net_bytes_per_message",
                               *(("delivery", "delivery_when_up") if losses_measured else ()))
                   if m in results.sweep_points]
        lines += [
            "## Points (mean over repetitions ± half the 95 % confidence interval)",
            "",
            tables.points(results.sweep_points, keys, metrics).markdown(),
            "",
        ]
        if study.sweep:
            lines += [f"![sweep]({layout.SWEEP_FIGURE})", ""]
    if knees is not None:
        lines += [
            "## Load: where latency or delivery breaks",
            "",
            f"The knee is the lowest rate at which p95 latency passes {load_study.KNEE_LATENCY_FACTOR:g} times its value at "
            f"the lightest load, or delivery falls below {load_study.KNEE_DELIVERY:.0%}. Uplink demand: the bytes the "
            "nodes send per second of publishing over their uplink capacity (a traffic capture measures it); "
            "above 1 the uplinks cannot keep up. load.csv and knees.csv hold the numbers.",
            "",
            *load_study.knee_sentences(knees, human_size),
            "",
            f"![load]({layout.LOAD_FIGURE})",
            "",
        ]
    differences = compare.network_differences(study)
    if differences:
        lines += [
            "## Beside the paper",
            "",
            f"Not set beside the paper's data: this study does not run the paper's network ({'; '.join(differences)}).",
            "",
        ]
    if not results.table5.empty:
        lines += [
            "## Beside the paper's single-host study (Table 5, ms: paper / ours, and ours ÷ paper)",
            "",
            tables.table5(results.table5).markdown(),
        ]
    if not results.distances.empty:
        lines += [
            "## Beside the paper's raw Shadow latencies (whole distributions)",
            "",
            "The paper's receipts are its Shadow run's, seq 0 left out as its analysis did (data/paper/). KS: the "
            "largest gap between the two ECDFs (0 to 1), and the same with ours moved 1 ms earlier or later (far "
            "below KS: the gap is a millisecond's offset of steps both share, not their shape); Wasserstein: the area "
            "between them, in ms.",
            "",
            tables.distances(results.distances, results.distances_by_seed, keys,
                             results.distances_between_seeds).markdown(),
        ]
    lines += churn_section(run_dirs)
    lines += spam_section(study, run_dirs)
    lines += study_sections.shards_section(results)
    lines += study_sections.discovery_section(results)
    lines += study_sections.classes_section(results)
    lines += study_sections.locations_section(results)
    runs = [[r["run"], human_size(int(r["size_bytes"])), f"{r['wall_s']:.0f} s",
             f"{r['peak_memory_gib']:.1f} GiB ({r['memory_measure']})",
             f"{int(r['receipts'])} / {int(r['receipts_expected'])}", f"{int(r['publish_retries'])}",
             "passed" if r["passed"] else "FAILED"] for r in results.run_checks.to_dict("records")]
    lines += [
        "## Runs",
        "",
        tables.table(runs, ["run", "size", "wall time", "peak memory", "receipts", "retried publishes", "validation"],
                     "llrrrrl").markdown().rstrip("\n"),
    ]
    provenance = json.loads((run_dirs[0] / layout.PROVENANCE).read_text())
    nwaku = provenance["nwaku"]
    lines += [
        "",
        "## Provenance",
        "",
        f"- waku-shadow {provenance['waku_shadow']}",
        f"- {provenance['shadow']}",
        f"- nwaku {nwaku['nwaku_tag']}, patch set {nwaku.get('patch_set', 'n/a')}, "
        f"wakunode2 sha256 {nwaku['binary_sha256'][:16]}…",
        f"- config sha256 {provenance['config_sha256_12']}; each run folder holds its config.yaml, "
        "shadow.yaml, network.gml, identities, links, schedule and provenance.json",
        "",
    ]
    return "\n".join(lines)


def churn_section(run_dirs: list[Path]) -> list[str]:
    """Per run with churn: how many nodes left, and the receipts missed while away, while rejoining, and lost."""
    rows = []
    for run_dir in run_dirs:
        outages = churn_plan.read(run_dir)
        # light clients that left are the store's (docs/light-clients.md), not relay churn
        clients = light_clients.clients(pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False))
        outages = outages[~outages["host"].isin(clients["host"])]
        if outages.empty:
            continue
        counts = json.loads((run_dir / layout.VALIDATION).read_text())["counts"]
        when_up = study_tables.delivery(run_dir)["delivery_when_up"]
        rows.append([run_dir.name, len(outages), outages["host"].nunique(), counts["receipts_missed_away"],
                     counts["receipts_missed_rejoining"], counts["receipts_lost"], f"{when_up:.2%}",
                     counts.get("receipts_again_after_rejoin", 0)])
    if not rows:
        return []
    return [
        "## Churn",
        "",
        "A receipt is missed *away* when its node was down at some time between the message's publish and its "
        "last receipt anywhere, *rejoining* when the node had come back but had received nothing since; any "
        "other missing receipt is *lost*. Delivery when up: the share delivered of the receipts not missed away "
        "or rejoining. Received again: a message a node got once more after it came back (its seen-cache left "
        "with its old process); receipts_again.parquet holds them, receipts.parquet the first receipt.",
        "",
        tables.table(rows, ["run", "leaves", "nodes that left", "missed away", "missed rejoining", "lost",
                            "delivery when up", "received again"], "lrrrrrrr").markdown(),
    ]


def spam_section(study: Study, run_dirs: list[Path]) -> list[str]:
    """Per run with spammers: what their messages reached and cost, and when their peers pruned and
    disconnected them, beside the honest messages' latency."""
    if study.spam.spammers == 0:  # spammers need rln.epoch
        return []
    rows = []
    for run_dir in run_dirs:
        found = spam.run_metrics(run_dir)
        if not found:
            rows.append([run_dir.name, 0, 0, *[""] * 8])
            continue
        latency = stats.measured(pd.read_parquet(run_dir / layout.RECEIPTS))["latency_ms"]
        rows.append([
            run_dir.name, found["spam_published"], found["spam_over_limit"], number(found["spam_reach_mean"], "{:.2f}"),
            found["spam_rejected"], f"{found['spam_payload_bytes_sent'] / 1e6:.2f}", found["spammer_peers"],
            f"{found['pruned_share']:.0%} / {found['disconnected_share']:.0%}", _seconds(found["prune_s_median"]),
            f"{_seconds(found['disconnect_s_median'])} / {_seconds(found['disconnect_s_max'])}",
            f"{latency.quantile(0.5):.0f} / {latency.quantile(0.95):.0f}",
        ])
    return [
        "## Spam against RLN",
        "",
        f"RLN's rate limit: {study.rln.messages_per_epoch} message(s) per {study.rln.epoch_ns / 1e9:g} s epoch, judged by "
        f"every node (nwaku patch 0011: RLN's rules without its cryptography). {study.spam.spammers} spammer(s) publish "
        f"for {study.spam.duration_ns / 1e9:g} s; beyond the limit their messages "
        + ("repeat a nullifier of the epoch" if study.spam.valid_proofs else "carry invalid proofs")
        + ". Reach: the nodes that accepted an over-limit message (its publisher's peers reject it). Bytes: the "
        "spammers' payloads times every link they were sent over. Pruned / disconnected: the share of the spammers' "
        "peers whose gossipsub scoring pruned them from the mesh / disconnected them, and how long after the "
        "first over-limit message (median / max). Honest latency: the measured honest messages, p50 / p95.",
        "",
        tables.table(rows, ["run", "spam published", "over the limit", "reach (mean nodes)", "rejections", "payload MB sent",
                            "spammer's peers", "pruned / disconnected", "prune after (median)",
                            "disconnect after (median / max)", "honest p50 / p95 (ms)"], "l" + "r" * 10).markdown(),
    ]


def _seconds(value: float) -> str:
    return number(value, "{:.1f} s") or "never"
