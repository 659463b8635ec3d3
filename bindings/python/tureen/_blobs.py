"""Blobs: the part of :class:`tureen.Store` that keeps files beside the
entries, encrypted in the store and named by their SHA-256. See
``tureen.h``, "Blobs"."""

from __future__ import annotations

import ctypes
import io
import json
import os
from typing import IO, Optional, TypedDict, Union

from ._convert import c_json
from ._library import call_for_string, check, errmsg, lib
from .errors import NotFoundError, error_for
from ._store_part import StorePart

__all__ = ["BlobRef", "BlobReader", "Blobs"]

#: How much a file or stream is read at a time.
_PIECE = 1 << 20


#: How an entry refers to a blob (put it anywhere in the entry):
#: ``{"@type": "blob", "digest": "sha256-<hex>", "length": N, "content_type": "..."}``.
BlobRef = TypedDict("BlobRef", {"@type": str, "digest": str, "length": int, "content_type": str})


def _digest(digest: Union[str, BlobRef]) -> bytes:
    text = digest if isinstance(digest, str) else digest["digest"]
    return text.encode("utf-8")


class BlobReader(io.RawIOBase):
    """A stored blob as a read-only binary file (seekable). Reads from the
    start to the end check the blob's digest before the last bytes are
    returned; damage raises :class:`tureen.CorruptError`. Close it (or use
    ``with``); closing the store makes it unusable."""

    def __init__(self, handle: ctypes.c_void_p, length: int) -> None:
        super().__init__()
        self._handle: Optional[ctypes.c_void_p] = handle
        self._length = length
        self._position = 0

    @property
    def length(self) -> int:
        """The blob's size in bytes."""
        return self._length

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._length}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position %d" % (base + offset))
        self._position = base + offset
        return self._position

    def tell(self) -> int:
        return self._position

    def readinto(self, buffer: "bytearray | memoryview") -> int:  # type: ignore[override]
        if self._handle is None:
            raise ValueError("I/O operation on closed blob reader")
        view = memoryview(buffer).cast("B")
        if len(view) == 0:
            return 0
        c_buffer = (ctypes.c_char * len(view)).from_buffer(view)
        n = ctypes.c_size_t()
        check(lib.tureen_blob_reader_read(self._handle, self._position, c_buffer, len(view), ctypes.byref(n)))
        self._position += n.value
        return n.value

    def close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            rc = lib.tureen_blob_reader_close(handle)
            # A store closed first made the reader stale: nothing is left to release.
            if rc not in (0, 1):
                check(rc)
        super().close()


class Blobs(StorePart):
    """Mixed into :class:`tureen.Store`: blobs."""

    def blob_put(self, source: Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", IO[bytes]],
                 content_type: Optional[str] = None) -> BlobRef:
        """Stores bytes, the file at a path, or what a binary file object
        reads (to its end, 1 MiB at a time) as a blob, and returns the
        reference to put in entries. Files and file objects are streamed:
        their size never shows in memory."""
        c_type = content_type.encode("utf-8") if content_type is not None else None
        if isinstance(source, (str, os.PathLike)):
            path = os.fsencode(source)
            with self._use() as handle:
                ref: BlobRef = json.loads(call_for_string(lib.tureen_blob_import, handle, path, c_type))
            return ref
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            with self._use() as handle:
                ref = json.loads(call_for_string(lib.tureen_blob_put, handle, data, len(data), c_type))
            return ref
        return self._put_stream(source, c_type)

    def _put_stream(self, stream: IO[bytes], c_type: Optional[bytes]) -> BlobRef:
        writer = ctypes.c_void_p()
        with self._use() as handle:
            check(lib.tureen_blob_writer_open(handle, c_type, ctypes.byref(writer)))
        try:
            while True:
                piece = stream.read(_PIECE)
                if not piece:
                    break
                check(lib.tureen_blob_writer_write(writer, bytes(piece), len(piece)))
        except BaseException:
            lib.tureen_blob_writer_cancel(writer)
            raise
        ref: BlobRef = json.loads(call_for_string(lib.tureen_blob_writer_finish, writer))
        return ref

    def blob_open(self, digest: Union[str, BlobRef]) -> BlobReader:
        """Opens a stored blob (a digest or a reference) as a binary file.
        A blob a lazy sync awaits is fetched first."""
        reader = ctypes.c_void_p()
        length = ctypes.c_int64()
        with self._use(serving=True) as handle:
            check(lib.tureen_blob_reader_open(handle, _digest(digest), ctypes.byref(reader), ctypes.byref(length)))
        return BlobReader(reader, length.value)

    def blob_get(self, digest: Union[str, BlobRef]) -> bytes:
        """The whole blob, verified, as bytes."""
        data = ctypes.c_void_p()
        size = ctypes.c_size_t()
        with self._use(serving=True) as handle:
            rc = lib.tureen_blob_get(handle, _digest(digest), ctypes.byref(data), ctypes.byref(size))
            if rc != 0:
                raise error_for(rc, errmsg())
        try:
            return ctypes.string_at(data.value, size.value) if data.value and size.value else b""
        finally:
            lib.tureen_free(data)

    def blob_export(self, digest: Union[str, BlobRef], path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the blob to ``path``, whole and verified or not at all."""
        with self._use(serving=True) as handle:
            check(lib.tureen_blob_export(handle, _digest(digest), os.fsencode(path)))

    def blob_info(self, digest: Union[str, BlobRef]) -> Optional[BlobRef]:
        """The stored blob's reference, or None when it is not stored here."""
        try:
            with self._use() as handle:
                ref: BlobRef = json.loads(call_for_string(lib.tureen_blob_info, handle, _digest(digest)))
            return ref
        except NotFoundError:
            return None

    def blob_fetch(self, digest: Union[str, BlobRef]) -> bool:
        """Fetches now a blob that a lazy sync down awaits; False when none
        awaits it."""
        fetched = ctypes.c_int()
        with self._use(serving=True) as handle:
            check(lib.tureen_blob_fetch(handle, _digest(digest), ctypes.byref(fetched)))
        return bool(fetched.value)

    def collect_blobs(self, min_age_ms: Optional[int] = None) -> int:
        """Removes the blobs no entry refers to that are older than
        ``min_age_ms`` (default: one hour); returns how many went."""
        options = c_json({"min_age_ms": min_age_ms}) if min_age_ms is not None else None
        removed = ctypes.c_int64()
        with self._use() as handle:
            check(lib.tureen_blob_collect(handle, options, ctypes.byref(removed)))
        return removed.value
