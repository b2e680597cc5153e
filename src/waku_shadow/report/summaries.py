"""A study's committed summary: the small tables the docs quote, with the provenance of the runs.

`waku-shadow docs-tables` writes summaries/<study>/ from a study's validated runs where they are on
the machine, and writes the docs' tables of the paper's network from summaries/ alone, so that a
fresh clone, with no results at all, rewrites those tables byte for byte. A summary names the config
under configs/ that regenerates it: a study without one is refused, since nobody could rerun it.

    summaries/<study>/provenance.json         the config, the runs and seeds, the builds they ran on
                      latency_summary.csv      stats.latency_summary per point
                      distances.csv            compare.distances, repetitions pooled
                      distances_by_seed.csv    compare.distances per point and seed
                      distances_between_seeds.csv  stats.largest_distance_between
                      relay_hop_times.csv      hops.relay_hop_times per point
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from waku_shadow import checkout, layout
from waku_shadow.errors import ConfigError
from waku_shadow.paper import compare
from waku_shadow.paper.study_results import StudyResults

SUMMARIES = "summaries"
PROVENANCE = "provenance.json"
TABLES = ("latency_summary", "distances", "distances_by_seed", "distances_between_seeds", "relay_hop_times")


@dataclass
class StudySummary:
    """What a summary holds: each table as StudyResults computes it, and where it came from."""

    study: str
    config: str  # the config under configs/ that regenerates the study
    runs: list[str]
    seeds: list[int]
    keys: list[str]
    nwaku: dict  # the runs' nwaku build: tag, patch set, tiers, memory manager, allocator
    shadow: str
    waku_shadow: list[str]  # the project's versions that rendered the runs
    latency_summary: pd.DataFrame
    distances: pd.DataFrame
    distances_by_seed: pd.DataFrame
    distances_between_seeds: pd.DataFrame
    relay_hop_times: pd.DataFrame

    @property
    def table5(self) -> pd.DataFrame:
        return compare.table5_comparison(self.latency_summary)


def config_of(study: str, configs_dir: Path | None = None) -> Path:
    """The config under configs/ or configs/experiments/ (not its overlays) whose study is ``study``,
    as a path from the folder that holds configs/, the repository: configs/experiments/<study>.yaml."""
    configs_dir = configs_dir or checkout.path("configs")
    for path in [*sorted(configs_dir.glob("*.yaml")), *sorted(configs_dir.glob("experiments/*.yaml"))]:
        if (yaml.safe_load(path.read_text()) or {}).get("study") == study:
            return path.relative_to(configs_dir.parent)
    raise ConfigError(f"study {study!r} has no config under {configs_dir}: a study the docs report must be one "
                      "anybody can rerun; add its config there")


def one_build(run_provenance: list[dict], study: str) -> tuple[dict, str]:
    """The nwaku build and the Shadow all of a study's runs ran on; a study whose runs mixed builds is
    refused, since its summary could not say which one its numbers are of."""
    builds = {json.dumps(_nwaku_build(p["nwaku"]), sort_keys=True) for p in run_provenance}
    shadows = {p["shadow"] for p in run_provenance}
    if len(builds) > 1 or len(shadows) > 1:
        raise ConfigError(f"{study}: its runs ran on {len(builds)} nwaku builds and {len(shadows)} Shadow builds; "
                          "rerun it on one before it is summarised")
    return json.loads(builds.pop()), shadows.pop()


def _nwaku_build(nwaku: dict) -> dict:
    return {key: nwaku.get(key) for key in ("nwaku_tag", "patch_set", "patch_tiers", "memory_manager", "allocator")}


def write(results: StudyResults, out: Path, configs_dir: Path | None = None) -> Path:
    """summaries/<study>/ of the study's (validated) runs, replacing what was there."""
    study = results.study.name
    config = config_of(study, configs_dir)
    provenance = [json.loads((run_dir / layout.PROVENANCE).read_text()) for run_dir in results.run_dirs]
    nwaku, shadow = one_build(provenance, study)
    folder = out / study
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / PROVENANCE).write_text(json.dumps({
        "study": study,
        "config": config.as_posix(),
        "runs": [run_dir.name for run_dir in results.run_dirs],
        "seeds": sorted({int(p["seed"]) for p in provenance}),
        "keys": results.keys,
        "nwaku": nwaku,
        "shadow": shadow,
        "waku_shadow": sorted({p["waku_shadow"] for p in provenance}),
    }, indent=2) + "\n")
    for table in TABLES:
        getattr(results, "summary" if table == "latency_summary" else table).to_csv(folder / f"{table}.csv", index=False)
    return folder


def read(folder: Path) -> StudySummary:
    provenance = json.loads((folder / PROVENANCE).read_text())
    tables = {table: pd.read_csv(folder / f"{table}.csv") for table in TABLES}
    return StudySummary(**provenance, **tables)


def read_all(summaries_dir: Path) -> dict[str, StudySummary]:
    """Every summary under summaries_dir, by study name, in the order of the names."""
    return {summary.study: summary for summary in
            (read(p.parent) for p in sorted(summaries_dir.glob(f"*/{PROVENANCE}")))}
