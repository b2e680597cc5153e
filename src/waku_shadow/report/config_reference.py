"""docs/configuration.md, written from the study schema: its descriptions and defaults are the only source."""

from __future__ import annotations

import json

from waku_shadow.configuration.schema import schema
from waku_shadow.configuration.study import MACHINE_SECTIONS
from waku_shadow.report import tables

# Shadow's own options, passed through as they are: the schema lists them, Shadow's documentation describes them.
PASSTHROUGH = ("shadow.experimental",)
BOUNDS = {"minimum": "≥", "exclusiveMinimum": ">", "maximum": "≤"}


def keys(node: dict, prefix: str = "") -> list[tuple[str, dict]]:
    """Every key of the schema (or its part ``node``), depth first, as (dotted path, its schema);
    a key its parent requires has no default and is marked required."""
    found = []
    for name, spec in node.get("properties", {}).items():
        path = f"{prefix}{name}"
        found.append((path, {**spec, "required": True} if name in node.get("required", []) else spec))
        if path not in PASSTHROUGH:
            found += keys(spec, f"{path}.")
    return found


def allowed(spec: dict) -> str:
    if "enum" in spec:
        return ", ".join(f"`{value}`" for value in spec["enum"])
    types = spec.get("type", [])
    types = [types] if isinstance(types, str) else types
    bounds = [f"{sign} {spec[bound]}" for bound, sign in BOUNDS.items() if bound in spec]
    return " or ".join(types) + (f" ({', '.join(bounds)})" if bounds else "")


def default(spec: dict) -> str:
    if "default" not in spec or spec.get("type") == "object":
        return "required" if spec.get("required") is True else ""
    return f"`{json.dumps(spec['default'], ensure_ascii=False)}`"


def description(path: str, spec: dict) -> str:
    text = " ".join(spec.get("description", "").split())
    if path in PASSTHROUGH:
        text += " Keys: " + ", ".join(f"`{name}`" for name in spec["properties"]) + "."
    return text.replace("|", "\\|")


def markdown() -> str:
    study = schema()
    sections = {name: spec for name, spec in study["properties"].items() if spec.get("type") == "object"}
    lines = [
        "# Configuration reference",
        "",
        "<!-- written by `waku-shadow config-reference > docs/configuration.md` from",
        "     src/waku_shadow/schemas/study.schema.yaml; tests/test_reference.py fails when they differ -->",
        "",
        " ".join(study["description"].split()),
        "",
        "A study is one YAML file (configs/ holds the shipped ones; configs/default.yaml shows every default). "
        "Every key is optional except `study`; a missing key takes the default below. The config is checked "
        "against the schema before anything runs, and every problem is named at once. "
        f"The machine sections ({', '.join(f'`{s}`' for s in MACHINE_SECTIONS)}) belong in the untracked "
        "local.yaml (configs/local.example.yaml): they say where things are on this machine and never "
        "change which runs are due.",
        "",
        reference([(path, spec) for path, spec in keys(study) if path.split(".")[0] not in sections]),
    ]
    for section, spec in sections.items():
        lines += ["", f"## {section}", ""]
        if spec.get("description"):
            lines += [" ".join(spec["description"].split()), ""]
        lines.append(reference(keys(spec, f"{section}.")))
    return "\n".join(lines) + "\n"


def reference(found: list[tuple[str, dict]]) -> str:
    """The table of some keys: each one's default, what it allows and what it does."""
    rows = [[f"`{path}`", default(spec), allowed(spec), description(path, spec)] for path, spec in found]
    return tables.table(rows, ["key", "default", "allowed", "what it does"], "llll").markdown().rstrip("\n")
