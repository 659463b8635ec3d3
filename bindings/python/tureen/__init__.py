"""Tureen: JSON documents in SQLCipher-encrypted stores (Python binding).

A ctypes binding of libtureen.so (C header ``include/tureen.h``)::

    import tureen

    with tureen.Store.open("notes.db", key="correct horse battery") as store:
        print(tureen.version(), store.size())

Importing this package loads libtureen.so: from ``$TUREEN_LIB``, else from the
package directory, else from the repository's ``.build/release``; it raises
:class:`tureen.LibraryError` (an ImportError) saying where it looked if none is
there, or if the library's version is not the one this binding follows.

Every failing call raises :class:`tureen.Error` or its subclass for the status
code (:class:`BadKeyError`, :class:`DiskError`, ...), with ``code`` and
``message`` attributes.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import (
    BadKeyError,
    BusyError,
    CancelledError,
    ConflictError,
    ConstraintError,
    CorruptError,
    DiskError,
    Error,
    HTTPError,
    InternalError,
    InvalidError,
    LibraryError,
    LibraryNotFoundError,
    MisuseError,
    NetworkError,
    NotFoundError,
    QueryError,
    VersionMismatchError,
)
from ._library import HEADER_VERSION_NUMBER, LIBRARY_PATH, version, version_number
from .store import Store

__all__ = [
    "__version__",
    "HEADER_VERSION_NUMBER",
    "LIBRARY_PATH",
    "version",
    "version_number",
    "Store",
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
]
