"""Errors that stop a stage with one message naming the problem."""


class WakuShadowError(Exception):
    """Base class: the CLI prints the message and exits non-zero."""


class ConfigError(WakuShadowError):
    """A study or machine config that cannot be used."""


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
