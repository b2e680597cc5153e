"""The study schema: validation with every problem named at once, and its defaults."""

from __future__ import annotations

import copy
from functools import cache
from importlib import resources as importlib_resources
from typing import Any

import jsonschema
import yaml

from .errors import ConfigError


@cache
def schema() -> dict:
    text = importlib_resources.files("waku_shadow").joinpath("schemas/study.schema.yaml").read_text()
    return yaml.safe_load(text)


def check(raw: dict, node: dict | None = None, where: tuple[str, ...] = ()) -> None:
    """Raise ConfigError naming every key of ``raw`` the schema (or its part ``node``, at ``where``) refuses."""
    validator = jsonschema.Draft202012Validator(schema() if node is None else node)
    errors = sorted(validator.iter_errors(raw), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        problems = [_problem(error, where) for error in errors]
        raise ConfigError(problems[0] if len(problems) == 1 else f"{len(problems)} problems: " + "; ".join(problems))


def _problem(error: jsonschema.ValidationError, where: tuple[str, ...]) -> str:
    key = ".".join(map(str, (*where, *error.absolute_path)))
    if error.validator == "additionalProperties":
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        prefix = f"{key}." if key else ""
        known = ", ".join(error.schema.get("properties", {}))
        return ", ".join(f"unknown key '{prefix}{name}'" for name in unknown) + f" (known keys here: {known})"
    if error.validator == "required":
        return f"missing key: {error.message}"
    return f"{key or '(top level)'}: {error.message}"


def check_machine_sections(raw: dict) -> None:
    """Check the machine sections alone (a local config's), against their part of the schema."""
    for section, values in raw.items():
        check(values, schema()["properties"][section], (section,))


def with_defaults(instance: Any, node: dict) -> Any:
    types = node.get("type")
    if "object" not in (types if isinstance(types, list) else [types]) or not isinstance(instance, dict):
        return instance
    filled = dict(instance)
    for name, sub in node.get("properties", {}).items():
        if name not in filled and "default" in sub:
            filled[name] = copy.deepcopy(sub["default"])
        if name in filled:
            filled[name] = with_defaults(filled[name], sub)
    return filled
