"""The status codes of ``include/tureen.h``, declared once for the binding."""

from __future__ import annotations

import enum

__all__ = ["Status"]


class Status(enum.IntEnum):
    """A C status code (``TUREEN_OK``, ``TUREEN_E_*``). The values are fixed
    by the header and never change; ``Status.KEY.c_name`` is
    ``"TUREEN_E_KEY"``."""

    OK = 0
    MISUSE = 1
    INVALID = 2
    NOT_FOUND = 3
    KEY = 4
    CORRUPT = 5
    IO = 6
    BUSY = 7
    CONSTRAINT = 8
    QUERY = 9
    NETWORK = 10
    HTTP = 11
    CONFLICT = 12
    CANCELLED = 13
    INTERNAL = 99

    @property
    def c_name(self) -> str:
        """The name the header gives the code."""
        return "TUREEN_OK" if self is Status.OK else "TUREEN_E_" + self.name
