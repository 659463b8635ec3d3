"""The library: lookup, loading, version check, declarations, errors."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import json
import pickle
import re
import threading
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import tureen
from tureen import _library, errors

from conftest import HEADER, REPO, child_env, header_text, run_python

# ---------------------------------------------------------------------------
# Versions


def test_version_matches_header() -> None:
    m = re.search(r"#define\s+TUREEN_VERSION_NUMBER\s+(\d+)", HEADER.read_text())
    assert m, "TUREEN_VERSION_NUMBER not found in the header"
    header_number = int(m.group(1))
    assert tureen.HEADER_VERSION_NUMBER == header_number
    assert tureen.version_number() == header_number
    assert isinstance(tureen.version_number(), int)
    n = header_number
    assert tureen.version() == "%d.%d.%d" % (n // 10000, n // 100 % 100, n % 100)


def test_package_version_matches_pyproject() -> None:
    text = (REPO / "bindings" / "python" / "pyproject.toml").read_text()
    m = re.search(r'^version\s*=\s*"([^"]+)"', text, flags=re.M)
    assert m and m.group(1) == tureen.__version__ == "0.1.0"


def test_version_mismatch_names_both_versions() -> None:
    with pytest.raises(tureen.VersionMismatchError) as info:
        _library.check_version(20304, "/x/libtureen.so")
    text = str(info.value)
    assert "2.3.4" in text and "20304" in text
    assert "0.1.0" in text and str(tureen.HEADER_VERSION_NUMBER) in text
    assert "/x/libtureen.so" in text
    assert isinstance(info.value, ImportError)
    _library.check_version(tureen.HEADER_VERSION_NUMBER)  # no error


# ---------------------------------------------------------------------------
# Every header function is declared, with the right types

_C_TO_CTYPES: Dict[str, Any] = {
    "void": None,
    "int": ctypes.c_int,
    "const char*": ctypes.c_char_p,
    "void*": ctypes.c_void_p,
    "int*": ctypes.POINTER(ctypes.c_int),
    "int64_t*": ctypes.POINTER(ctypes.c_int64),
    "char**": ctypes.POINTER(ctypes.c_void_p),  # freed with tureen_free
    "const char**": ctypes.POINTER(ctypes.c_char_p),  # static strings, not freed
    "tureen_store*": _library.StoreHandle,
    "tureen_store**": ctypes.POINTER(_library.StoreHandle),
    "int64_t": ctypes.c_int64,
    "tureen_progress_fn": _library.ProgressFn,
    "const tureen_callbacks*": ctypes.POINTER(_library.tureen_callbacks),
    "const tureen_auth_callbacks*": ctypes.POINTER(_library.tureen_auth_callbacks),
    "const tureen_transformer*": ctypes.POINTER(_library.tureen_transformer),
    "tureen_event_fn": _library.EventFn,
    "tureen_log_fn": _library.LogFn,
    "void (*free_ctx)(void*)": _library.FreeCtxFn,
    "tureen_listener*": _library.ListenerHandle,
    "tureen_listener**": ctypes.POINTER(_library.ListenerHandle),
    "const void*": ctypes.c_void_p,
    "size_t": ctypes.c_size_t,
    "size_t*": ctypes.POINTER(ctypes.c_size_t),
    "void**": ctypes.POINTER(ctypes.c_void_p),  # freed with tureen_free
    # Blob streams are opaque handles the binding keeps as plain pointers.
    "tureen_blob_writer*": ctypes.c_void_p,
    "tureen_blob_writer**": ctypes.POINTER(ctypes.c_void_p),
    "tureen_blob_reader*": ctypes.c_void_p,
    "tureen_blob_reader**": ctypes.POINTER(ctypes.c_void_p),
}


def _norm(c_type: str) -> str:
    c_type = re.sub(r"\s+", " ", c_type).strip()
    return re.sub(r"\s*\*\s*", "*", c_type)


def _ctype(c_type: str, where: str) -> Any:
    key = _norm(c_type)
    assert key in _C_TO_CTYPES, (
        "%s: C type %r has no ctypes equivalent in this test; add it to "
        "_C_TO_CTYPES (and declare the function in tureen/_library.py)" % (where, key)
    )
    return _C_TO_CTYPES[key]


def _header_prototypes() -> Dict[str, Tuple[Any, List[Any]]]:
    text = header_text()
    names = set(re.findall(r"\b(tureen_[a-z0-9_]+)\s*\(", text))
    assert len(names) >= 9, names  # the header has at least the store functions
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    code = code.replace('extern "C" {', " ")
    prototypes: Dict[str, Tuple[Any, List[Any]]] = {}
    for statement in code.split(";"):
        m = re.match(r"^\s*(.*?)\b(tureen_[a-z0-9_]+)\s*\((.*)\)\s*$", statement, flags=re.S)
        if not m:
            continue
        ret, name, params = m.group(1), m.group(2), m.group(3).strip()
        ret = ret.replace("}", " ")
        args: List[Any] = []
        if params and params != "void":
            for param in params.split(","):
                pm = re.match(r"^(.*?[\s*])(\w+)\s*$", param.strip(), flags=re.S)
                c_type = pm.group(1) if pm and pm.group(1).strip() not in ("", "const") else param
                args.append(_ctype(c_type, name))
        prototypes[name] = (_ctype(ret, name), args)
    assert names == set(prototypes), "could not parse prototypes of %s" % (names - set(prototypes))
    return prototypes


def test_every_header_function_is_declared() -> None:
    lib = _library.lib
    for name, (restype, argtypes) in sorted(_header_prototypes().items()):
        assert name in _library.PROTOTYPES, "%s is in tureen.h but not declared" % name
        if name in _library.MISSING_FUNCTIONS:
            continue  # test_library_exports_every_header_function reports it
        function = getattr(lib, name)
        assert function.argtypes is not None, "%s has no argtypes" % name
        assert list(function.argtypes) == argtypes, name
        assert function.restype is restype, name


def test_no_declaration_without_header_function() -> None:
    assert set(_library.PROTOTYPES) == set(_header_prototypes())


def test_library_exports_every_header_function() -> None:
    assert _library.MISSING_FUNCTIONS == (), (
        "%s lacks %s: a stale build? rebuild it"
        % (_library.LIBRARY_PATH, ", ".join(_library.MISSING_FUNCTIONS))
    )


def test_missing_function_stub_raises_library_error() -> None:
    stub = _library._missing_function("/x/libtureen.so", "tureen_future")
    with pytest.raises(tureen.LibraryError) as info:
        stub(None)
    assert "tureen_future" in str(info.value) and "/x/libtureen.so" in str(info.value)


# ---------------------------------------------------------------------------
# Finding the library


def _fake_layout(tmp_path: Path) -> Tuple[Path, Path]:
    pkg = tmp_path / "repo" / "bindings" / "python" / "tureen"
    pkg.mkdir(parents=True)
    build = tmp_path / "repo" / ".build" / "release"
    build.mkdir(parents=True)
    return pkg, build


def test_lookup_order(tmp_path: Path) -> None:
    pkg, build = _fake_layout(tmp_path)
    no_env: Dict[str, str] = {}

    with pytest.raises(tureen.LibraryNotFoundError) as info:
        _library.find_library(no_env, str(pkg))
    text = str(info.value)
    assert str(pkg / "libtureen.so") in text
    assert str(build / "libtureen.so") in text
    assert isinstance(info.value, ImportError)

    (build / "libtureen.so").write_bytes(b"")
    assert _library.find_library(no_env, str(pkg)) == str(build / "libtureen.so")

    (pkg / "libtureen.so").write_bytes(b"")
    assert _library.find_library(no_env, str(pkg)) == str(pkg / "libtureen.so")

    other = tmp_path / "other.so"
    other.write_bytes(b"")
    assert _library.find_library({"TUREEN_LIB": str(other)}, str(pkg)) == str(other)

    # A TUREEN_LIB naming nothing is an error, even with other copies around.
    with pytest.raises(tureen.LibraryNotFoundError) as info:
        _library.find_library({"TUREEN_LIB": str(tmp_path / "missing.so")}, str(pkg))
    assert str(tmp_path / "missing.so") in str(info.value)
    assert "TUREEN_LIB" in str(info.value)


def test_import_fails_clearly_without_library(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere" / "libtureen.so")
    result = run_python(
        "import tureen", env=child_env({"TUREEN_LIB": missing}), timeout=30
    )
    assert result.returncode != 0
    assert "LibraryNotFoundError" in result.stderr
    assert missing in result.stderr


def test_import_fails_clearly_with_a_non_library(tmp_path: Path) -> None:
    bogus = tmp_path / "libtureen.so"
    bogus.write_text("not an ELF file")
    result = run_python(
        "import tureen\n",
        env=child_env({"TUREEN_LIB": str(bogus)}),
        timeout=30,
    )
    assert result.returncode != 0
    assert "LibraryError" in result.stderr and str(bogus) in result.stderr


def test_import_names_the_debian_package_when_sqlcipher_cannot_load(tmp_path: Path) -> None:
    # libtureen opens SQLCipher itself at the first store open, so the loader
    # never complains at import; the binding must. An unloadable
    # libsqlcipher.so.0 first on the search path stands in for a missing one.
    (tmp_path / "libsqlcipher.so.0").write_text("not a library")
    result = run_python(
        "import tureen", env=child_env({"LD_LIBRARY_PATH": str(tmp_path)}), timeout=30
    )
    assert result.returncode != 0
    assert "LibraryError" in result.stderr
    assert "libsqlcipher.so.0" in result.stderr
    assert "apt-get install libsqlcipher0" in result.stderr


# ---------------------------------------------------------------------------
# Errors

_CODES = {
    1: tureen.MisuseError,
    2: tureen.InvalidError,
    3: tureen.NotFoundError,
    4: tureen.BadKeyError,
    5: tureen.CorruptError,
    6: tureen.DiskError,
    7: tureen.BusyError,
    8: tureen.ConstraintError,
    9: tureen.QueryError,
    10: tureen.NetworkError,
    11: tureen.HTTPError,
    12: tureen.ConflictError,
    13: tureen.CancelledError,
    99: tureen.InternalError,
}


def test_status_codes_match_header() -> None:
    defined = {
        int(v): n
        for n, v in re.findall(r"#define\s+(TUREEN_(?:OK|E_[A-Z_]+))\s+(\d+)", HEADER.read_text())
    }
    assert defined == errors.STATUS_NAMES
    assert set(defined) - {0} == set(_CODES)


def test_the_library_names_every_status_as_the_header_does() -> None:
    """tureen_status_name: the header's name of each define, without its
    prefix; None (TUREEN_E_INVALID) for a number that is no status."""
    defined = re.findall(r"#define\s+TUREEN_(?:E_)?([A-Z_]+)\s+(\d+)\s*/\*", HEADER.read_text())
    statuses = {int(v): n for n, v in defined if n != "VERSION_NUMBER" and not n.startswith("LOG_")}
    assert statuses[0] == "OK" and statuses[99] == "INTERNAL" and len(statuses) == len(tureen.Status)
    for code, name in statuses.items():
        assert _library.status_name(code) == name
    for bad in (14, 98, 100, -1, 2 ** 40):
        assert _library.status_name(bad) is None
    rc = _library.lib.tureen_status_name(14, ctypes.byref(ctypes.c_char_p()))
    assert rc == tureen.Status.INVALID and "14" in _library.errmsg()
    assert _library.lib.tureen_status_name(0, None) == tureen.Status.MISUSE


@pytest.mark.parametrize("code,cls", sorted(_CODES.items()))
def test_error_for_each_code(code: int, cls: type) -> None:
    err = errors.error_for(code, "what failed")
    assert type(err) is cls
    assert err.status is tureen.Status(code) and err.code is tureen.Status(code)
    assert err.status_name == tureen.Status(code).c_name
    assert issubclass(cls, tureen.Error) and cls is not tureen.Error
    assert err.code == code and err.message == "what failed"
    assert str(err) == "what failed"
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is cls and copy.code == code and copy.message == "what failed"


def test_unknown_code_is_plain_error() -> None:
    err = errors.error_for(42, "new status")
    assert type(err) is tureen.Error
    assert err.code == 42 and err.message == "new status"
    assert err.status is None and type(err.code) is int


def test_check_ok_and_failure(tmp_path: Path) -> None:
    _library.check(0)
    rc = _library.lib.tureen_store_remove(str(tmp_path / "absent.db").encode())
    with pytest.raises(tureen.NotFoundError) as info:
        _library.check(rc)
    assert str(tmp_path / "absent.db") in info.value.message


def test_error_messages_stay_with_their_thread(tmp_path: Path) -> None:
    """Each thread's exception carries the message of its own failing call."""
    problems: List[str] = []

    def work(i: int) -> None:
        path = tmp_path / ("missing-dir-%d" % i) / "s.db"
        for _ in range(40):
            try:
                tureen.Store.open(path, key="k")
            except tureen.DiskError as e:
                if str(path) not in e.message:
                    problems.append(e.message)
            else:
                problems.append("opened %s" % path)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []


def test_take_string_null() -> None:
    assert _library._take_string(ctypes.c_void_p()) is None


def test_take_string_copies_and_frees_a_library_string(tmp_path: Path) -> None:
    lib = _library.lib
    with tureen.Store.open(tmp_path / "s.db", raw_key="ab" * 32) as store:
        with store._use() as handle:
            _library.check(
                lib.tureen_soup_register(handle, b"notes", b'[{"path": "title", "type": "string"}]')
            )
            out = ctypes.c_void_p()
            for _ in range(200):  # a double free or a use after free would show
                _library.check(lib.tureen_soup_names(handle, ctypes.byref(out)))
                assert out.value
                assert _library._take_string(out) == '["notes"]'
            out = ctypes.c_void_p()
            _library.check(
                lib.tureen_upsert(
                    handle, b"notes", '{"title": "café ☕"}'.encode(), None, ctypes.byref(out)
                )
            )
            stored = json.loads(_library._take_string(out) or "null")
            assert stored["title"] == "café ☕" and stored["_soupEntryId"] >= 1
            # On error, *out is NULL and nothing is to be freed.
            out = ctypes.c_void_p(1)
            rc = lib.tureen_soup_index_specs(handle, b"no_such_soup", ctypes.byref(out))
            assert rc == 3 and out.value is None
            assert _library._take_string(out) is None


def test_callbacks_struct_layout_matches_the_header() -> None:
    """tureen_callbacks: an int version (padded to a pointer), then seven
    pointers, as a C compiler lays it out (Tests/c/test_sync.c checks C's)."""
    s = _library.tureen_callbacks
    pointer = ctypes.sizeof(ctypes.c_void_p)
    assert s.version.offset == 0 and s.ctx.offset == pointer and s.free_ctx.offset == 7 * pointer
    assert ctypes.sizeof(s) == 8 * pointer
    assert "#define TUREEN_CALLBACKS_VERSION %d" % _library.CALLBACKS_VERSION in HEADER.read_text(encoding="utf-8")


def test_auth_callbacks_struct_layout_matches_the_header() -> None:
    """tureen_auth_callbacks: an int version (padded), then four pointers."""
    s = _library.tureen_auth_callbacks
    pointer = ctypes.sizeof(ctypes.c_void_p)
    assert s.version.offset == 0 and s.ctx.offset == pointer and s.free_ctx.offset == 4 * pointer
    assert ctypes.sizeof(s) == 5 * pointer
    assert "#define TUREEN_AUTH_CALLBACKS_VERSION %d" % _library.AUTH_CALLBACKS_VERSION in HEADER.read_text(encoding="utf-8")


def test_transformer_struct_layout_matches_the_header() -> None:
    """tureen_transformer: an int version (padded), then five pointers."""
    s = _library.tureen_transformer
    pointer = ctypes.sizeof(ctypes.c_void_p)
    assert s.version.offset == 0 and s.ctx.offset == pointer and s.free_ctx.offset == 5 * pointer
    assert ctypes.sizeof(s) == 6 * pointer
    assert "#define TUREEN_TRANSFORMER_VERSION %d" % _library.TRANSFORMER_VERSION in HEADER.read_text(encoding="utf-8")


def test_not_found_lists_every_place_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg, build = _fake_layout(tmp_path)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    env = {"LD_LIBRARY_PATH": os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")])}
    with pytest.raises(tureen.LibraryNotFoundError) as info:
        _library.find_library(env, str(pkg))
    assert info.value.tried == [
        ("the package directory", str(pkg / "libtureen.so")),
        ("$LD_LIBRARY_PATH", str(tmp_path / "a" / "libtureen.so")),
        ("$LD_LIBRARY_PATH", str(tmp_path / "b" / "libtureen.so")),
        ("the system loader (ldconfig)", None),
        ("the repository's release build", str(build / "libtureen.so")),
    ]

    with pytest.raises(tureen.LibraryNotFoundError) as info:
        _library.find_library({"TUREEN_LIB": str(tmp_path / "missing.so")}, str(pkg))
    assert info.value.tried == [("$TUREEN_LIB", str(tmp_path / "missing.so"))]
