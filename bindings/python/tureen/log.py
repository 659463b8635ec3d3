"""The library's log, routed to :mod:`logging` (logger ``"tureen"``).

``TUREEN_LOG=debug`` (or error, warning, info) in the environment turns it
on at import, with a handler to standard error if the logger has none;
:func:`set_level` does it from code. Library levels map to logging's:
error, warning, info, debug. Categories ("store", "query", "sync", "http")
become child loggers: ``tureen.http`` and so on. Lines come from the
library's threads too; nothing in them is a key, token or password.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
from typing import Optional, Union

from ._library import FreeCtxFn, LogFn, check, lib

__all__ = ["set_level", "LEVELS"]

#: Library levels by name (TUREEN_LOG_* in the header).
LEVELS = {"off": 0, "error": 1, "warning": 2, "info": 3, "debug": 4}
_TO_LOGGING = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}

logger = logging.getLogger("tureen")


def _log_trampoline(ctx: Optional[int], level: int, category: Optional[bytes], message: Optional[bytes]) -> None:
    try:
        if sys.is_finalizing():
            return
        name = "tureen.%s" % (category or b"?").decode("utf-8", "replace")
        logging.getLogger(name).log(_TO_LOGGING.get(level, logging.DEBUG), (message or b"").decode("utf-8", "replace"))
    except BaseException:  # noqa: B902 - nothing may unwind into C
        pass


_LOG = LogFn(_log_trampoline)


def set_level(level: Union[str, int]) -> None:
    """Routes the library's log at ``level`` ("off", "error", "warning",
    "info", "debug", or 0-4) and more severe to the ``tureen`` loggers."""
    number = LEVELS.get(level.lower(), -1) if isinstance(level, str) else level
    if number not in LEVELS.values():
        raise ValueError("log level must be one of %s or 0-4, not %r" % (", ".join(LEVELS), level))
    check(lib.tureen_log_set(number, _LOG if number else LogFn(), None, FreeCtxFn()))
    if number:
        logger.setLevel(_TO_LOGGING[number])


def _from_environment() -> None:
    wanted = os.environ.get("TUREEN_LOG", "").strip().lower()
    if wanted in LEVELS and wanted != "off":
        if not logger.handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
            logger.addHandler(handler)
        set_level(wanted)


@atexit.register
def _stop() -> None:
    """No library thread may log into a finalizing interpreter."""
    try:
        lib.tureen_log_set(0, LogFn(), None, FreeCtxFn())
    except BaseException:  # noqa: B902 - shutting down: best effort
        pass


_from_environment()
