"""The library's log, routed to :mod:`logging` (logger ``"tureen"``).

The library logs at the level the ``tureen`` logger lets through, as other
Python libraries do: ``logging.basicConfig(level=logging.DEBUG)`` shows
every line, and ``logging.getLogger("tureen").setLevel(...)`` or
:func:`set_level` narrows it. Lines the logger would drop are never built
by the library nor passed to Python: its level follows each change of a
logger's level (``setLevel``, ``basicConfig``, ``dictConfig``,
``logging.disable``). Library levels map to logging's: error, warning,
info, debug. Categories ("store", "query", "sync", "http") become child
loggers: ``tureen.http`` and so on; one set more verbose than ``tureen``
has the library log that much. ``tureen`` has a NullHandler, so nothing
is printed until the application configures logging.

``TUREEN_LOG=debug`` (or error, warning, info) in the environment sets
that level at import, with a handler to standard error if the logger has
none; ``TUREEN_LOG=off`` sets "off". Lines come from the library's threads too; nothing in them is a key,
token or password.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from typing import Callable, Optional, Union

from ._library import FreeCtxFn, LogFn, check, lib

__all__ = ["set_level", "LEVELS", "ALIASES"]

#: Library levels by name (TUREEN_LOG_* in the header).
LEVELS = {"off": 0, "error": 1, "warning": 2, "info": 3, "debug": 4}
#: C8o's level names, taken as the nearest of ours (as TUREEN_LOG takes them).
ALIASES = {"trace": "debug", "fatal": "error", "none": "off", "warn": "warning"}
_TO_LOGGING = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}
_OFF = logging.CRITICAL + 1  # the logger level set_level("off") sets: lets nothing through

logger = logging.getLogger("tureen")
logger.addHandler(logging.NullHandler())
_loggers = [logger] + [logging.getLogger("tureen." + c) for c in ("store", "query", "sync", "http")]


def _log_trampoline(ctx: Optional[int], level: int, category: Optional[bytes], message: Optional[bytes]) -> None:
    try:
        if sys.is_finalizing():
            return
        name = "tureen.%s" % (category or b"?").decode("utf-8", "replace")
        logging.getLogger(name).log(_TO_LOGGING.get(level, logging.DEBUG), (message or b"").decode("utf-8", "replace"))
    except BaseException:  # noqa: B902 - nothing may unwind into C
        pass


_LOG = LogFn(_log_trampoline)

# Logging's own lock: held by dictConfig around its setLevel calls, so a lock
# of ours taken inside them and, elsewhere, before logging's would deadlock.
_lock: threading.RLock = getattr(logging, "_lock", None) or threading.RLock()
_sent = -1  # the level the library was last given
_stopped = False  # at exit: no level change reaches the library any more


def _follow() -> None:
    """Gives the library the most verbose level a ``tureen`` logger lets
    through, when it changed."""
    global _sent
    with _lock:
        if _stopped:
            return
        number = next((n for n in (4, 3, 2, 1) if any(g.isEnabledFor(_TO_LOGGING[n]) for g in _loggers)), 0)
        if number != _sent:
            check(lib.tureen_log_set(number, _LOG if number else LogFn(), None, FreeCtxFn()))
            _sent = number


def _hook_level_changes() -> None:
    """Has every change of a logger's level reach :func:`_follow`. logging
    clears its loggers' cached levels on each, through its manager's
    ``_clear_cache``: there is no public hook."""
    manager = logging.Logger.manager
    clear: Optional[Callable[[], None]] = getattr(manager, "_clear_cache", None)
    if clear is None:  # not CPython's logging: set_level still reaches it
        return

    def clear_and_follow() -> None:
        with _lock:
            clear()
            _follow()

    setattr(manager, "_clear_cache", clear_and_follow)


def set_level(level: Union[str, int]) -> None:
    """Sets the ``tureen`` logger's level, which the library follows, to
    ``level`` ("off", "error", "warning", "info", "debug", C8o's "trace",
    "fatal" and "none" as "debug", "error" and "off", or 0-4): the
    library's lines at that level and more severe reach the ``tureen``
    loggers. "off" lets nothing through;
    ``logging.getLogger("tureen").setLevel(logging.NOTSET)`` goes back to
    the level of the root logger."""
    number = LEVELS.get(ALIASES.get(level.lower(), level.lower()), -1) if isinstance(level, str) else level
    if number not in LEVELS.values():
        raise ValueError("log level must be one of %s or 0-4, not %r" % (", ".join(LEVELS), level))
    logger.setLevel(_TO_LOGGING[number] if number else _OFF)
    _follow()


def _from_environment() -> None:
    wanted = os.environ.get("TUREEN_LOG", "").strip().lower()
    wanted = ALIASES.get(wanted, wanted)
    if wanted not in LEVELS:
        return
    if wanted != "off" and not any(not isinstance(h, logging.NullHandler) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
    set_level(wanted)


@atexit.register
def _stop() -> None:
    """No library thread may log into a finalizing interpreter."""
    global _stopped
    try:
        with _lock:
            _stopped = True
            lib.tureen_log_set(0, LogFn(), None, FreeCtxFn())
    except BaseException:  # noqa: B902 - shutting down: best effort
        pass


_hook_level_changes()
_from_environment()
_follow()
