"""The commands that gather studies into one page: a build's sign-off, the paper's figures and tables."""

from __future__ import annotations

from pathlib import Path

from waku_shadow import layout
from waku_shadow.configuration import loader, sources
from waku_shadow.errors import ConfigError


def cmd_signoff(args) -> None:
    """The sign-off page of a candidate build against a base build, from each side's battery studies
    (results/<study>/, their validated runs), paired in the order given."""
    from waku_shadow.analyse import study_runs
    from waku_shadow.paper.study_results import StudyResults
    from waku_shadow.report import signoff_page

    def side(label: str, study_dirs: list[str]) -> signoff_page.Side:
        studies = []
        for study_dir in map(Path, study_dirs):
            study = loader.load(study_dir / layout.STUDY_CONFIG)
            validated = study_runs.StudyRuns(study, study_dir, study_runs.run_states(study, study_dir)).validated
            if not validated:
                raise ConfigError(f"{study_dir}: no validated run to sign off on")
            studies.append(StudyResults(study, validated))
        return signoff_page.Side(label, studies)

    if len(args.base) != len(args.candidate):
        raise ConfigError(f"--base names {len(args.base)} studies and --candidate {len(args.candidate)}: the battery pairs them one by one")
    page = signoff_page.write(side(args.base_label, args.base), side(args.candidate_label, args.candidate), Path(args.out))
    print(f"{page}: {args.candidate_label} against {args.base_label}")


def cmd_paper_page(args) -> None:
    """The paper's figures and tables from the studies' validated runs, in one folder with one page."""
    from waku_shadow.report import figures_page

    studies = [sources.study_on_this_machine(loader.read_yaml(path), source=path) for path in args.studies]
    missing = figures_page.write(studies, Path(args.out))
    print(f"{args.out}/index.html: " + (f"{len(missing)} missing:\n  " + "\n  ".join(missing) if missing else "complete"))
