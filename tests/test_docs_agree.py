"""The docs as a fresh clone holds them: every generated table is what `waku-shadow docs-tables`
writes from the committed summaries and benchmarks, and every summary names the config that reruns it."""

from conftest import REPO

from waku_shadow.configuration import loader
from waku_shadow.report import docs_tables, summaries, summary_tables


def test_every_generated_table_is_what_the_committed_summaries_and_benchmarks_write(tmp_path):
    no_results = tmp_path / "results"
    no_results.mkdir()
    generated = docs_tables.tables(no_results, REPO / "bench", REPO / summaries.SUMMARIES, REPO / "configs")
    docs = docs_tables.generated_docs(REPO)
    assert REPO / "README.md" in docs and REPO / "docs" / "paper.md" in docs
    for doc in docs:
        text = doc.read_text()
        assert docs_tables.fill(text, generated, str(doc))[0] == text, (
            f"{doc.relative_to(REPO)} is not what its summaries and benchmarks write: run `waku-shadow docs-tables`")


def test_every_summary_names_the_config_that_reruns_it():
    summarised = summaries.read_all(REPO / summaries.SUMMARIES)
    assert summary_tables.HEADLINE_STUDY in summarised
    for name, summary in summarised.items():
        assert loader.read_yaml(REPO / summary.config)["study"] == name, summary.config
        assert loader.load(REPO / summary.config).name == name
