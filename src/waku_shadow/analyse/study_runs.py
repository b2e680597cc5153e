"""A study's runs on disk and the state of each (validated, failed, not run), gathered for the reports."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.configuration import loader, sources
from waku_shadow.configuration.study import Study, merge
from waku_shadow.run.run_stats import read_stats

VALIDATED = "validated"
RUN_RULES = ("render", "simulate", "parse", "validate")  # a run's jobs, in order


@dataclass
class StudyRuns:
    study: Study
    study_dir: Path
    states: pd.DataFrame  # one row per run the study calls for (run_states)

    @property
    def validated_states(self) -> pd.DataFrame:
        return self.states[self.states["state"] == VALIDATED]

    @property
    def validated(self) -> list[Path]:
        return [layout.run_dir(self.study_dir, run) for run in self.validated_states["run"]]

    @property
    def single_host(self) -> bool:
        return self.study.topology != "cascade"


def run_states(study: Study, study_dir: Path) -> pd.DataFrame:
    """Every run of the study: validated, failed validation, failed (evidence kept) or not run."""
    rows = []
    for point in study.runs():
        run_id = point.run_id
        run_dir = layout.run_dir(study_dir, run_id)
        row = {"study": study.name, "run": run_id, "size_bytes": point.size_bytes, "seed": point.seed,
               **({study.sweep.name: point.value} if study.sweep else {})}
        validation = run_dir / layout.VALIDATION
        evidence = sorted(layout.failures(study_dir, run_id).glob("*"))
        if validation.exists():
            passed = json.loads(validation.read_text())["passed"]
            row["state"] = VALIDATED if passed else "failed validation"
            row["detail"] = str(validation)
        elif evidence:
            failed = json.loads((evidence[-1] / layout.RUN_STATS).read_text())
            row["state"] = f"failed: {failed['status']} at simulated {failed['simulated_reached']}"
            row["detail"] = str(evidence[-1])
        else:
            row["state"], row["detail"] = _stopped_job(study_dir, run_id)
        if (run_dir / layout.RUN_STATS).exists() and (run_dir / layout.PROVENANCE).exists():
            cost = read_stats(run_dir)
            provenance = json.loads((run_dir / layout.PROVENANCE).read_text())
            row |= {
                "wall_s": round(cost.wall_seconds, 1),
                "peak_memory_GiB": round(cost.memory_bytes / 2**30, 2),
                "memory_measure": cost.memory_measure,
                "nwaku": f"{provenance['nwaku']['nwaku_tag']} ({provenance['nwaku'].get('patch_set', 'n/a')})",
                "wakunode2_sha256": provenance["nwaku"]["binary_sha256"][:16],
                "shadow": provenance["shadow"],
                "config_sha256": provenance["config_sha256_12"],
            }
        rows.append(row)
    return pd.DataFrame(rows)


def _stopped_job(study_dir: Path, run_id: str) -> tuple[str, str]:
    """The last of the run's jobs that left a log with something in it, and that log; else not run."""
    for rule in reversed(RUN_RULES):
        log = layout.job_log(study_dir, rule, run_id)
        if log.exists() and log.read_text().strip():
            return f"stopped in {rule}: {log.read_text().strip().splitlines()[-1]}", str(log)
    return "not run", ""


def gather(studies: list[Study]) -> list[StudyRuns]:
    gathered = []
    for study in studies:
        study_dir = Path(study.resources.results_dir) / study.name
        gathered.append(StudyRuns(study, study_dir, run_states(study, study_dir)))
    return gathered


def studies(results_dir: Path) -> list[Study]:
    """Every study with a resolved study.yaml under results_dir, on this machine's settings."""
    found = []
    for path in sorted(results_dir.glob(f"*/{layout.STUDY_CONFIG}")):
        study = sources.study_on_this_machine(loader.read_yaml(path), source=str(path))
        found.append(loader.resolve(merge(study.resolved, {"resources": {"results_dir": str(results_dir)}})))
    return found
