"""The study schema: validation with every problem named at once, and its defaults."""

from __future__ import annotations

import copy
from functools import cache
from importlib import resources as importlib_resources
from typing import Any

import jsonschema
import yaml

from waku_shadow.errors import Problem


@cache
def schema() -> dict:
    text = importlib_resources.files("waku_shadow").joinpath("schemas/study.schema.yaml").read_text()
    return yaml.safe_load(text)


def problems(raw: dict) -> list[Problem]:
    """Every key of ``raw`` the schema refuses."""
    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(raw), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    return [problem for error in errors for problem in _problems(error)]


def _problems(error: jsonschema.ValidationError) -> list[Problem]:
    key = ".".join(map(str, error.absolute_path))
    if error.validator == "additionalProperties":
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        prefix = f"{key}." if key else ""
        known = ", ".join(error.schema.get("properties", {}))
        return [Problem(f"{prefix}{name}", f"unknown key '{prefix}{name}' (known keys here: {known})") for name in unknown]
    if error.validator == "required":
        return [Problem(key, f"missing key: {error.message}" + (f" in {key}" if key else ""))]
    return [Problem(key, f"{key or '(top level)'}: {error.message}")]


def without_refused_keys(raw: dict, refused: list[Problem]) -> dict:
    """``raw`` without the keys the schema refused (a list's whole key for a refused item), so that
    the checks after the schema's can still look at the rest."""
    pruned = copy.deepcopy(raw)
    for problem in refused:
        path = []
        for part in problem.key.split(".") if problem.key else []:
            if part.isdigit():
                break
            path.append(part)
        parent = pruned
        for part in path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if path and isinstance(parent, dict):
            parent.pop(path[-1], None)
    return pruned


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
