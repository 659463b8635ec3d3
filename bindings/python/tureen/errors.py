"""Exceptions raised by the Tureen binding.

Every failing library call raises :class:`Error` or, for the status codes of
``include/tureen.h``, the subclass of that code. ``code`` is the C status and
``message`` the text of ``tureen_errmsg()``, read right after the failing call
on the same thread.

Problems with the shared library itself (not found, unloadable, wrong version)
are :class:`LibraryError`, an :class:`ImportError`, raised when ``tureen`` is
imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple, Type

from .status import Status

if TYPE_CHECKING:  # sync imports this module
    from .sync import SyncState

__all__ = [
    "Error",
    "MisuseError",
    "InvalidError",
    "NotFoundError",
    "BadKeyError",
    "CorruptError",
    "DiskError",
    "BusyError",
    "ConstraintError",
    "QueryError",
    "NetworkError",
    "HTTPError",
    "ConflictError",
    "CancelledError",
    "InternalError",
    "LibraryError",
    "LibraryNotFoundError",
    "VersionMismatchError",
    "error_for",
    "STATUS_NAMES",
    "Status",
]

#: The C names of the status codes, by value (include/tureen.h).
STATUS_NAMES: Dict[int, str] = {int(status): status.c_name for status in Status}


class Error(Exception):
    """A Tureen call failed.

    Attributes:
        code: the C status code (``TUREEN_E_*``), an int.
        message: what failed, as the library (or the binding) described it.
    """

    #: The status code of this class; ``None`` on the base class, whose
    #: instances carry the code they were raised with.
    default_code: Optional[int] = None
    #: For the error of a sync that started: its final state (status
    #: ``"FAILED"`` or ``"STOPPED"``); None otherwise.
    state: Optional["SyncState"] = None

    def __init__(self, message: str = "", code: Optional[int] = None) -> None:
        if code is None:
            code = self.default_code if self.default_code is not None else -1
        known = code in STATUS_NAMES
        super().__init__(message, code)
        #: A :class:`~tureen.Status` (an int) when the binding knows the code.
        self.code: int = Status(code) if known else code
        self.message: str = message

    @property
    def status(self) -> Optional[Status]:
        """The code as a :class:`~tureen.Status`, or None for a code this
        binding does not know."""
        try:
            return Status(self.code)
        except ValueError:
            return None

    @property
    def status_name(self) -> str:
        """The C name of the status, e.g. ``"TUREEN_E_KEY"``, as the library
        names it (``tureen_status_name``)."""
        from ._library import status_name  # the library loads after this module

        name = status_name(self.code)
        if name is None:
            return "status %d" % self.code
        return "TUREEN_OK" if name == "OK" else "TUREEN_E_" + name

    def __str__(self) -> str:
        return self.message or "tureen call failed with %s" % self.status_name

    def __repr__(self) -> str:
        return "%s(%r, code=%d)" % (type(self).__name__, self.message, self.code)


class MisuseError(Error):
    """TUREEN_E_MISUSE: NULL or closed handle, call out of order."""

    default_code = Status.MISUSE


class InvalidError(Error):
    """TUREEN_E_INVALID: invalid argument, malformed JSON, bad option."""

    default_code = Status.INVALID


class NotFoundError(Error):
    """TUREEN_E_NOT_FOUND: unknown soup, entry, sync, target or file."""

    default_code = Status.NOT_FOUND


class BadKeyError(Error):
    """TUREEN_E_KEY: wrong key, or the file is not a Tureen store."""

    default_code = Status.KEY


class CorruptError(Error):
    """TUREEN_E_CORRUPT: damaged database."""

    default_code = Status.CORRUPT


class DiskError(Error):
    """TUREEN_E_IO: disk full, permission denied, file-system error."""

    default_code = Status.IO


class BusyError(Error):
    """TUREEN_E_BUSY: locked by another process past the timeout."""

    default_code = Status.BUSY


class ConstraintError(Error):
    """TUREEN_E_CONSTRAINT: e.g. an external id that matches several entries."""

    default_code = Status.CONSTRAINT


class QueryError(Error):
    """TUREEN_E_QUERY: Smart SQL or query spec error (the message says where)."""

    default_code = Status.QUERY


class NetworkError(Error):
    """TUREEN_E_NETWORK: could not reach the server."""

    default_code = Status.NETWORK


class HTTPError(Error):
    """TUREEN_E_HTTP: the server answered with an error status."""

    default_code = Status.HTTP


class ConflictError(Error):
    """TUREEN_E_CONFLICT: a change conflicts with the server's copy."""

    default_code = Status.CONFLICT


class CancelledError(Error):
    """TUREEN_E_CANCELLED: stopped on request."""

    default_code = Status.CANCELLED


class InternalError(Error):
    """TUREEN_E_INTERNAL: a bug, or an environment Tureen cannot work in."""

    default_code = Status.INTERNAL


_BY_CODE: Dict[int, Type[Error]] = {
    cls.default_code: cls
    for cls in (
        MisuseError,
        InvalidError,
        NotFoundError,
        BadKeyError,
        CorruptError,
        DiskError,
        BusyError,
        ConstraintError,
        QueryError,
        NetworkError,
        HTTPError,
        ConflictError,
        CancelledError,
        InternalError,
    )
}


def error_for(code: int, message: str) -> Error:
    """The exception for status ``code``: its subclass, or :class:`Error` for
    a code this binding does not know."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return Error(message, code)
    return cls(message)


class LibraryError(ImportError):
    """libtureen.so could not be found, loaded or used by this binding."""


class LibraryNotFoundError(LibraryError):
    """No libtureen.so at any of the places the binding looks.

    Attributes:
        tried: every place looked at, in order, as ``(place, path)``: the
            place as the message names it (``"$TUREEN_LIB"``, ``"the
            package directory"``, ``"$LD_LIBRARY_PATH"``, ``"the system
            loader (ldconfig)"``, ``"the repository's release build"``) and
            the path looked for there (None: ldconfig knew no libtureen).
    """

    def __init__(self, message: str, tried: Sequence[Tuple[str, Optional[str]]] = ()) -> None:
        super().__init__(message)
        self.tried: List[Tuple[str, Optional[str]]] = list(tried)


class VersionMismatchError(LibraryError):
    """The loaded libtureen.so is not the version this binding was written for."""
