"""Errors that stop a stage with one message naming the problem."""

from __future__ import annotations

from dataclasses import dataclass


class WakuShadowError(Exception):
    """Base class: the CLI prints the message and exits non-zero."""


class ConfigError(WakuShadowError):
    """A study or machine config that cannot be used; ``key`` is the dotted key it is about, if one."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


def refused(key: str, message: str) -> ConfigError:
    """The error for one key's value."""
    return ConfigError(f"{key}: {message}", key)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a config: the dotted key it is about ('' for none) and the message, which names it."""

    key: str
    text: str


class ConfigProblems(ConfigError):
    """Every problem found in one config, so that one error names them all."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__(describe(self.problems, lambda key: ""))


def describe(problems: list[Problem], source_of) -> str:
    """The problems as one message, each after the source (a file, --config) ``source_of`` names for its key."""
    lines = [f"{source}: {p.text}" if (source := source_of(p.key)) else p.text for p in problems]
    return lines[0] if len(lines) == 1 else f"{len(lines)} problems:\n" + "\n".join(f"  {line}" for line in lines)


class TopologyError(WakuShadowError):
    """A peer graph that cannot be built as asked."""


class StackError(WakuShadowError):
    """A missing or unusable Shadow / nwaku binary or source tree."""


class RunError(WakuShadowError):
    """A Shadow run that did not complete as expected."""


class LogError(WakuShadowError):
    """A node log that cannot be read completely."""


class ValidationError(WakuShadowError):
    """A completed run whose results break an invariant."""
