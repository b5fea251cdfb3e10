"""Errors that name the file, the line or key, and the reason."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad input: a missing file, a malformed line, a wrong key.

    The message always carries where (file and line, or config key) and why.
    """

    def __init__(self, where: str | Path, reason: str, line: int | None = None) -> None:
        self.where = str(where)
        self.line = line
        self.reason = reason
        loc = f"{where}:{line}" if line is not None else f"{where}"
        super().__init__(f"{loc}: {reason}")


class ConfigFileError(InputError):
    """An error in a config file (a YAML syntax error, a duplicated key, a key the
    schema or the cross-checks reject), located in the file that sets it: the
    message is one line, ``file:line: config key K: reason``."""
