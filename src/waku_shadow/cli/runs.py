"""The commands of one run: check its config, render its folder, simulate it, parse, measure and validate it."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
from pathlib import Path

from waku_shadow import layout
from waku_shadow.configuration import loader, sources
from waku_shadow.configuration.study import Study
from waku_shadow.errors import StackError, ValidationError
from waku_shadow.run import allocator, collect, guard


def rendered_run(value: str) -> str:
    """A --run-dir that render wrote: the stages after it need its run config."""
    if not (Path(value) / layout.RUN_CONFIG).is_file():
        raise argparse.ArgumentTypeError(f"{value} is not a rendered run folder (it has no {layout.RUN_CONFIG})")
    return value


def load_run(run_dir: Path) -> Study:
    path = run_dir / layout.RUN_CONFIG
    return sources.study_on_this_machine(loader.read_yaml(path), source=str(path))


def cmd_check_config(args) -> None:
    from waku_shadow.run import open_files

    study = loader.load(*args.configs)
    open_files.check(study)
    print(f"{study.name}: {study.nodes} nodes, runs: {', '.join(study.run_ids())}")


def cmd_render(args) -> None:
    from waku_shadow.render import plan, provenance, run_folder

    run_dir = Path(args.run_dir)
    nwaku_identity = json.loads(Path(args.nwaku_identity).read_text())
    study = sources.study_on_this_machine(json.loads(args.config_json), source="run config")
    # what the build's patches read is the build's: a sign-off side's tag is not this machine's (a
    # prebuilt binary's identity knows its tag, not its patches)
    study = dataclasses.replace(study, stack=dataclasses.replace(
        study.stack, nwaku_tag=nwaku_identity["nwaku_tag"],
        nwaku_patches=nwaku_identity.get("patch_tiers") or study.stack.nwaku_patches))
    (size,) = study.message_sizes
    wakunode2 = shutil.which(args.wakunode2)
    curl = shutil.which(study.stack.curl)
    if wakunode2 is None:
        raise StackError(f"wakunode2 not found or not executable: {args.wakunode2}")
    if curl is None:
        raise StackError(f"stack.curl: {study.stack.curl!r} not found; the publisher processes need curl")
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run = plan.plan(study, size)
    run_folder.render(run, run_dir, str(Path(wakunode2).resolve()), str(Path(curl).resolve()))
    (run_dir / layout.RUN_CONFIG).write_text(loader.dump_study(study))
    provenance.write(run_dir, run, shadow=args.shadow, curl=curl, nwaku_identity=nwaku_identity)


def cmd_simulate(args) -> None:
    from waku_shadow.run import open_files

    run_dir = Path(args.run_dir)
    study = load_run(run_dir)
    open_files.check(study)
    study_dir = layout.study_dir_of(run_dir)
    stats_ = guard.run(
        args.shadow,
        run_dir,
        memory_floor_bytes=study.resources.memory_floor_bytes,
        poll_interval_s=study.resources.memory_poll_interval_ns / 1e9,
        stall_timeout_s=None if study.resources.stall_timeout_ns is None else study.resources.stall_timeout_ns / 1e9,
        merge_identical_pages=study.resources.merge_identical_pages,
        attempts_log=layout.attempts(study_dir, run_dir.name),
        failures_dir=layout.failures(study_dir, run_dir.name),
        parallelism=args.parallelism,
        memory_budget_bytes=args.memory_budget_mb * 2**20 if args.memory_budget_mb else None,
        preload=allocator.preload(study.stack.shadow_allocator),
    )
    collect.collect(run_dir)
    print(
        f"{run_dir.name}: {stats_.wall_seconds:.0f} s wall, peak memory {stats_.memory_bytes / 2**30:.1f} GiB "
        f"({stats_.memory_measure}; the machine's fall {stats_.peak_memory_bytes / 2**30:.1f} GiB)",
        file=sys.stderr,
    )


def cmd_parse(args) -> None:
    import pandas as pd

    from waku_shadow.parse import node_logs, trees

    run_dir = Path(args.run_dir)
    tables = node_logs.parse_run(run_dir)
    receipts = tables["receipts"]
    try:
        receipts["hop"] = trees.hops(receipts)
    except ValidationError:
        receipts["hop"] = pd.NA  # the validate stage names what is wrong with the tree
    for name, file in (("receipts", layout.RECEIPTS), ("publishes", layout.PUBLISHES), ("sends", layout.SENDS),
                       ("receipts_again", layout.RECEIPTS_AGAIN), ("spam_receipts", layout.SPAM_RECEIPTS),
                       ("rln_events", layout.RLN_EVENTS), ("withheld", layout.WITHHELD),
                       ("topology_events", layout.TOPOLOGY_EVENTS),
                       ("filter_receipts", layout.FILTER_RECEIPTS), ("lightpushes", layout.LIGHTPUSHES),
                       ("store_queries", layout.STORE_QUERIES), ("store_returns", layout.STORE_RETURNS)):
        tables[name].to_parquet(run_dir / file, index=False)


def cmd_traffic(args) -> None:
    from waku_shadow.analyse import bandwidth
    from waku_shadow.parse import pcap

    run_dir = Path(args.run_dir)
    study = load_run(run_dir)
    pcap.node_traffic(run_dir, study.traffic_interval_ns).to_parquet(run_dir / layout.TRAFFIC, index=False)
    bandwidth.run_amplification(run_dir, study).to_parquet(run_dir / layout.AMPLIFICATION, index=False)


def cmd_closes(args) -> None:
    from waku_shadow.analyse import connections
    from waku_shadow.render import schedule

    run_dir = Path(args.run_dir)
    open_at_s = args.open_at
    if open_at_s is None:
        open_at_s = schedule.read(run_dir)["scheduled_ns"].min() / 1e9
    closes = connections.connection_closes(run_dir, open_at_s, args.host or None)
    if args.out:
        closes.to_csv(args.out, index=False)
    print(closes.to_string(index=False, float_format=lambda value: f"{value:.3f}"))
    print(connections.summary(closes, open_at_s))
    if (run_dir / layout.TRAFFIC).exists() and (run_dir / layout.RECEIPTS).exists():
        last_receipt_s, after, share = connections.sent_after_last_receipt(run_dir, open_at_s)
        print(f"after the last receipt ({last_receipt_s:.3f} s) the nodes still sent {after / 1e6:.0f} MB, "
              f"{share:.1%} of what they sent from {open_at_s:g} s on")


def cmd_validate(args) -> None:
    import pandas as pd

    from waku_shadow.analyse import discovery
    from waku_shadow.parse import light_clients as parsed_light_clients
    from waku_shadow.parse.store_queries import QUERY_COLUMNS as store_query_columns
    from waku_shadow.render import churn_plan, schedule, shards
    from waku_shadow.render.light_clients import away_windows
    from waku_shadow.run import run_stats
    from waku_shadow.validate import discovery as discovery_check
    from waku_shadow.validate import light_clients, publish_retries, validation

    run_dir = Path(args.run_dir)
    study = load_run(run_dir)
    identities = pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False)
    clients = parsed_light_clients.clients(identities)
    relay_hosts = [host for host in identities["host"] if host not in set(clients["host"])]
    run_schedule = schedule.read(run_dir)
    outages = churn_plan.read(run_dir)
    served = shards.served_by_host(identities, relay_hosts)
    result = validation.check(
        study.runs()[0].run_id,
        run_stats.read_stats(run_dir),
        relay_hosts,
        run_schedule,
        pd.read_parquet(run_dir / layout.PUBLISHES),
        pd.read_parquet(run_dir / layout.RECEIPTS),
        publish_retries.publish_retries(run_dir),
        study.min_delivery,
        outages,
        len(pd.read_parquet(run_dir / layout.RECEIPTS_AGAIN)),
        served,
    )
    if study.discovery is not None:
        events = pd.read_parquet(run_dir / layout.TOPOLOGY_EVENTS)
        discovery_check.check(result, discovery.mesh_times(events, served, study.gossipsub.effective()["d_low"]))
    if not clients.empty:
        windows = away_windows(study, outages, set(clients["host"]))
        # a run parsed before clients left has no store_queries.parquet, and none of its clients left
        store_queries = (pd.read_parquet(run_dir / layout.STORE_QUERIES) if not windows.empty
                         else pd.DataFrame(columns=store_query_columns))
        light_clients.check(result, clients, run_schedule, pd.read_parquet(run_dir / layout.FILTER_RECEIPTS),
                            pd.read_parquet(run_dir / layout.LIGHTPUSHES), windows, store_queries, study.min_delivery)
    validation.require(result, run_dir)
