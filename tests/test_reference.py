"""docs/configuration.md is the schema's: regenerated, it is the same file, and every key is described."""

import copy

from conftest import REPO

from waku_shadow.configuration import schema
from waku_shadow.report import config_reference


def test_the_committed_reference_is_the_schemas():
    committed = (REPO / "docs" / "configuration.md").read_text()
    assert committed == config_reference.markdown(), "run: waku-shadow config-reference > docs/configuration.md"


def test_every_key_is_described_and_its_default_shown():
    text = config_reference.markdown()
    for path, spec in config_reference.keys(schema.schema()):
        if any(path.startswith(f"{p}.") for p in config_reference.PASSTHROUGH):
            continue
        assert spec.get("description"), f"{path} has no description in the schema"
        assert f"| `{path}` |" in text or f"## {path}\n" in text, path
    assert "| `network.nodes` | `50` | integer (≥ 2) |" in text
    assert "| `study` | required |" in text


def test_the_reference_follows_a_changed_default(monkeypatch):
    changed = copy.deepcopy(schema.schema())  # the schema is cached: a change in place would reach every later test
    changed["properties"]["network"]["properties"]["nodes"]["default"] = 77
    monkeypatch.setattr(config_reference, "schema", lambda: changed)
    assert "| `network.nodes` | `77` |" in config_reference.markdown()
