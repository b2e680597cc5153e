"""Reported studies are code: every study the README and docs/ quote in a generated block has exactly
one config under configs/ or configs/experiments/, and every such config resolves. Studies of builds
that no longer exist (``before-`` in the name) are not rerun, so they need none."""

from collections import Counter

import pytest
from conftest import CONFIGS, REPO

from waku_shadow.configuration import loader
from waku_shadow.report import docs_tables

EXPERIMENTS = CONFIGS / "experiments"
# configs/ files that hold no study: the machine sections a local.yaml starts from
NOT_STUDIES = ("local.example.yaml",)


def quoted_studies() -> set[str]:
    """The study names the generated blocks of README.md and docs/ quote: a section's bold name or
    a table row's first cell, less those of builds that no longer exist."""
    names = set()
    for page in docs_tables.generated_docs(REPO):
        for block in docs_tables.BLOCK.finditer(page.read_text()):
            names.update(docs_tables.sections(block["body"]))
            names.update(row["study"] for row in docs_tables.STUDY_ROW.finditer(block["body"]))
    return {name for name in names if "before-" not in name}


STUDY_CONFIGS = sorted(
    [path for path in CONFIGS.glob("*.yaml") if path.name not in NOT_STUDIES] + list(EXPERIMENTS.glob("*.yaml")))
STUDY_OF = {path: loader.read_yaml(path).get("study") for path in STUDY_CONFIGS}


def test_the_docs_quote_studies():
    assert {"paper", "paper-calibrated"} <= quoted_studies()


@pytest.mark.parametrize("study", sorted(quoted_studies()))
def test_every_quoted_study_has_one_config(study):
    configs = [path.relative_to(REPO).as_posix() for path, name in STUDY_OF.items() if name == study]
    assert len(configs) == 1, f"{study}: configs {configs}; add configs/experiments/{study}.yaml"


def test_no_two_configs_name_the_same_study():
    assert [name for name, count in Counter(STUDY_OF.values()).items() if count > 1] == []


@pytest.mark.parametrize("path", STUDY_CONFIGS, ids=lambda path: path.relative_to(CONFIGS).as_posix())
def test_every_study_config_resolves(path):
    study = loader.load(path)
    assert study.name == STUDY_OF[path] and study.run_ids()


@pytest.mark.parametrize("path", sorted(EXPERIMENTS.glob("*.yaml")), ids=lambda path: path.stem)
def test_an_experiment_is_named_as_its_file_and_extends_a_study(path):
    values = loader.read_yaml(path)
    assert values["study"] == path.stem
    assert (CONFIGS / f"{values['extends']}.yaml").exists()
