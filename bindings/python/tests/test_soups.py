"""tureen.Store: soups, entries, maintenance, threads and an alter killed midway."""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import IndexSpec, query

from conftest import child_env

RAW = "5a" * 32  # a raw key: no KDF, fast to open

SPECS = [IndexSpec("name", "string"), IndexSpec("k", "integer"), IndexSpec("ext", "string")]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "soups.db", raw_key=RAW) as s:
        yield s


@pytest.fixture
def soup(store: tureen.Store) -> str:
    store.register_soup("people", SPECS)
    return "people"


def count_all(store: tureen.Store, soup: str) -> int:
    return store.count(query.all(soup))


def all_entries(store: tureen.Store, soup: str) -> List[Dict[str, Any]]:
    return list(store.iter_query(query.all(soup, order_path="_soupEntryId", page_size=1000)))


# ---------------------------------------------------------------------------
# registering soups


def test_register_and_index_specs_round_trip(store: tureen.Store) -> None:
    specs = [
        IndexSpec("Name", "string"),
        IndexSpec("Owner.Age", "integer"),
        IndexSpec("score", "floating"),
        IndexSpec("bio", "full_text"),
    ]
    store.register_soup("contacts", specs)
    got = store.index_specs("contacts")
    assert got == specs
    assert all(isinstance(spec, IndexSpec) for spec in got)
    assert got[1].path == "Owner.Age" and got[1].type == "integer"
    assert got[1].to_dict() == {"path": "Owner.Age", "type": "integer"}
    assert IndexSpec.from_dict({"path": "a", "type": "string"}) == ("a", "string")
    assert store.soup_exists("contacts") is True
    assert store.soup_exists("Contacts") is False  # names are case-sensitive


def test_register_accepts_dicts_tuples_and_index_specs(store: tureen.Store) -> None:
    store.register_soup(
        "mixed",
        [{"path": "a", "type": "string"}, ("b", "integer"), IndexSpec("c", IndexSpec.FLOATING)],
    )
    assert store.index_specs("mixed") == [("a", "string"), ("b", "integer"), ("c", "floating")]
    store.register_soup("gen", (IndexSpec(p, "string") for p in ("x", "y")))  # any iterable
    assert [s.path for s in store.index_specs("gen")] == ["x", "y"]


def test_register_same_specs_is_a_no_op(store: tureen.Store, soup: str) -> None:
    store.upsert(soup, {"name": "kept", "k": 1})
    store.register_soup(soup, SPECS)
    store.register_soup(soup, list(reversed(SPECS)))  # any order
    store.register_soup(soup, [s.to_dict() for s in SPECS])
    assert store.index_specs(soup) == SPECS  # registration order, unchanged
    assert count_all(store, soup) == 1  # the soup was not recreated


def test_register_different_specs_is_invalid_and_mentions_alter(
    store: tureen.Store, soup: str
) -> None:
    with pytest.raises(tureen.InvalidError) as info:
        store.register_soup(soup, SPECS[:2])
    assert "alter" in info.value.message
    assert info.value.code == 2
    with pytest.raises(tureen.InvalidError, match="alter"):
        store.register_soup(soup, SPECS[:2] + [IndexSpec("ext", "integer")])
    assert store.index_specs(soup) == SPECS


@pytest.mark.parametrize(
    "name",
    ["", "1abc", "-a", ".a", "a b", "a'b", 'a"b', "x'); DROP TABLE soups; --", "a/b", "a" * 101],
)
def test_register_bad_names_are_invalid(store: tureen.Store, name: str) -> None:
    with pytest.raises(tureen.InvalidError):
        store.register_soup(name, SPECS)
    assert store.soup_names() == []
    assert store.soup_exists(name) is False


@pytest.mark.parametrize("name", ["a", "_", "A1", "a-b.c_d", "_9", "a" * 100])
def test_register_good_names(store: tureen.Store, name: str) -> None:
    store.register_soup(name, SPECS)
    assert store.soup_exists(name)
    assert store.soup_names() == [name]


@pytest.mark.parametrize(
    "specs",
    [
        [],
        [{"path": "a", "type": "text"}],
        [{"path": "a", "type": "STRING"}],
        [{"path": "a..b", "type": "string"}],
        [{"path": ".a", "type": "string"}],
        [{"path": "a.", "type": "string"}],
        [{"path": "", "type": "string"}],
        [{"path": "a{b", "type": "string"}],
        [{"path": "a}b", "type": "string"}],
        [{"path": "a:b", "type": "string"}],
        [{"path": "a\tb", "type": "string"}],
        [{"path": "a\nb", "type": "string"}],
        [{"path": "a", "type": "string"}, {"path": "a", "type": "string"}],
        [{"path": "a"}],
        [{"type": "string"}],
        [{"path": 5, "type": "string"}],
        [{"path": "a", "type": "string", "unique": True}],
    ],
)
def test_register_bad_specs_are_invalid(store: tureen.Store, specs: List[Any]) -> None:
    with pytest.raises(tureen.InvalidError):
        store.register_soup("s", specs)
    assert not store.soup_exists("s")


def test_register_type_errors_on_the_python_side(store: tureen.Store) -> None:
    with pytest.raises(TypeError, match="index_specs"):
        store.register_soup("s", {"path": "a", "type": "string"})  # type: ignore
    with pytest.raises(TypeError, match="index_specs"):
        store.register_soup("s", "a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="index spec 1"):
        store.register_soup("s", [("a", "string"), "b"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="index spec 0"):
        store.register_soup("s", [("a", "string", "x")])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="soup name"):
        store.register_soup(5, SPECS)  # type: ignore[arg-type]
    assert store.soup_names() == []


def test_soup_names_sorted(store: tureen.Store) -> None:
    names = ["b", "a", "_z", "C", "a.b", "a-b", "a0", "Z9"]
    for name in names:
        store.register_soup(name, SPECS)
    assert store.soup_names() == sorted(names)


def test_unknown_soup_is_not_found(store: tureen.Store) -> None:
    for call in (
        lambda: store.index_specs("nope"),
        lambda: store.alter_soup("nope", SPECS),
        lambda: store.reindex_soup("nope", ["k"]),
        lambda: store.clear_soup("nope"),
        lambda: store.drop_soup("nope"),
        lambda: store.upsert("nope", {"a": 1}),
        lambda: store.query(query.all("nope")),
        lambda: store.count(query.all("nope")),
    ):
        with pytest.raises(tureen.NotFoundError, match="nope"):
            call()


def test_closed_store_is_misuse(tmp_path: Path) -> None:
    s = tureen.Store.open(tmp_path / "c.db", raw_key=RAW)
    s.register_soup("s", SPECS)
    s.close()
    for call in (
        lambda: s.register_soup("t", SPECS),
        lambda: s.soup_names(),
        lambda: s.upsert("s", {"a": 1}),
        lambda: s.retrieve("s", [1]),
        lambda: s.remove("s", [1]),
        lambda: s.query(query.all("s")),
        lambda: s.count(query.all("s")),
        lambda: next(s.iter_query(query.all("s"))),
        lambda: s.compact(),
        lambda: s.check(),
    ):
        with pytest.raises(tureen.MisuseError):
            call()


def test_soup_and_path_names_differ_by_case_and_punctuation(store: tureen.Store) -> None:
    # SQLite's own names ignore case; soup names and index paths must not.
    for name in ("people", "People", "PEOPLE", "a.b", "a_b", "a-b"):
        store.register_soup(name, [("Name", "string"), ("name", "string"), ("x.y", "string"),
                                   ("x_y", "string"), ("x-y", "string")])
    for i, name in enumerate(store.soup_names()):
        store.upsert(name, [{"Name": "N", "name": "n", "x": {"y": "dot"}, "x_y": "u", "x-y": "d"}] * (i + 1))
    assert store.soup_names() == sorted(["people", "People", "PEOPLE", "a.b", "a_b", "a-b"])
    for i, name in enumerate(store.soup_names()):
        assert count_all(store, name) == i + 1
        assert store.count(query.exact(name, "Name", "N")) == i + 1
        assert store.count(query.exact(name, "name", "N")) == 0
        assert store.count(query.exact(name, "name", "n")) == i + 1
        assert store.count(query.exact(name, "x.y", "dot")) == i + 1
        assert store.count(query.exact(name, "x_y", "dot")) == 0
        assert store.count(query.exact(name, "x-y", "d")) == i + 1
    counts = {name: count_all(store, name) for name in store.soup_names()}
    store.drop_soup("People")
    del counts["People"]
    assert {name: count_all(store, name) for name in store.soup_names()} == counts


# ---------------------------------------------------------------------------
# upsert


def test_upsert_assigns_id_and_date(store: tureen.Store, soup: str) -> None:
    entry = {"name": "Ann", "k": 1}
    before = time.time() * 1000
    stored = store.upsert(soup, entry)
    after = time.time() * 1000
    assert isinstance(stored, dict)
    assert entry == {"name": "Ann", "k": 1}  # the argument is not changed
    assert stored["name"] == "Ann" and stored["k"] == 1
    assert type(stored["_soupEntryId"]) is int and stored["_soupEntryId"] >= 1
    date = stored["_soupLastModifiedDate"]
    assert type(date) is int
    assert before - 2000 <= date <= after + 2000, (before, date, after)

    many = store.upsert(soup, [{"name": "B"}, {"name": "C"}, {"name": "D"}])
    assert isinstance(many, list) and [e["name"] for e in many] == ["B", "C", "D"]
    ids = [e["_soupEntryId"] for e in many]
    assert len(set(ids + [stored["_soupEntryId"]])) == 4
    assert ids == sorted(ids)
    assert store.retrieve(soup, [stored["_soupEntryId"]]) == [stored]


def test_upsert_tuple_and_generator_give_lists(store: tureen.Store, soup: str) -> None:
    assert isinstance(store.upsert(soup, ({"name": "t"},)), list)
    got = store.upsert(soup, ({"name": n} for n in "xy"))
    assert isinstance(got, list) and [e["name"] for e in got] == ["x", "y"]
    assert store.upsert(soup, []) == []
    assert count_all(store, soup) == 3


def test_upsert_updates_by_soup_entry_id(store: tureen.Store, soup: str) -> None:
    first = store.upsert(soup, {"name": "old", "k": 1})
    time.sleep(0.005)
    first["name"] = "new"
    updated = store.upsert(soup, first)
    assert updated["_soupEntryId"] == first["_soupEntryId"]
    assert updated["_soupLastModifiedDate"] >= first["_soupLastModifiedDate"]
    assert count_all(store, soup) == 1
    assert store.retrieve(soup, [first["_soupEntryId"]])[0]["name"] == "new"
    assert store.count(query.exact(soup, "name", "old")) == 0
    assert store.count(query.exact(soup, "name", "new")) == 1
    # "_soupEntryId" as the external id path means by id.
    again = store.upsert(soup, {"_soupEntryId": first["_soupEntryId"], "name": "x"}, "_soupEntryId")
    assert again["_soupEntryId"] == first["_soupEntryId"] and count_all(store, soup) == 1


def test_upsert_unknown_soup_entry_id_inserts_a_new_entry(store: tureen.Store, soup: str) -> None:
    store.upsert(soup, {"name": "a"})
    got = store.upsert(soup, {"_soupEntryId": 999, "name": "b"})
    assert got["_soupEntryId"] != 999
    assert count_all(store, soup) == 2
    assert store.retrieve(soup, [999]) == []


def test_upsert_null_soup_entry_id_inserts(store: tureen.Store, soup: str) -> None:
    a = store.upsert(soup, {"name": "a"})
    b = store.upsert(soup, {"_soupEntryId": None, "name": "b"})
    assert b["_soupEntryId"] != a["_soupEntryId"] and count_all(store, soup) == 2


def test_upsert_external_id_creates_then_updates(store: tureen.Store, soup: str) -> None:
    created = store.upsert(soup, {"ext": "X-1", "name": "first"}, "ext")
    updated = store.upsert(soup, {"ext": "X-1", "name": "second"}, "ext")
    assert updated["_soupEntryId"] == created["_soupEntryId"]
    other = store.upsert(soup, {"ext": "X-2", "name": "other"}, "ext")
    assert other["_soupEntryId"] != created["_soupEntryId"]
    assert count_all(store, soup) == 2
    assert [e["name"] for e in store.query(query.exact(soup, "ext", "X-1"))] == ["second"]
    # An integer index works as an external id too; the key is converted.
    a = store.upsert(soup, {"k": 7, "name": "k7"}, "k")
    b = store.upsert(soup, {"k": "7", "name": "k7 again"}, "k")
    assert a["_soupEntryId"] == b["_soupEntryId"]
    # In a batch, an entry inserted earlier counts as a match.
    batch = store.upsert(soup, [{"ext": "X-3", "name": "p"}, {"ext": "X-3", "name": "q"}], "ext")
    assert batch[0]["_soupEntryId"] == batch[1]["_soupEntryId"]
    assert [e["name"] for e in store.query(query.exact(soup, "ext", "X-3"))] == ["q"]


@pytest.mark.parametrize("entry", [{"ext": None, "name": "n"}, {"name": "missing"}])
def test_upsert_null_or_missing_external_id_is_invalid(
    store: tureen.Store, soup: str, entry: Dict[str, Any]
) -> None:
    store.upsert(soup, {"ext": "keep", "name": "kept"})
    with pytest.raises(tureen.InvalidError, match="ext"):
        store.upsert(soup, entry, "ext")
    with pytest.raises(tureen.InvalidError, match="entry 1"):
        store.upsert(soup, [{"ext": "fine", "name": "f"}, entry], "ext")
    assert count_all(store, soup) == 1
    assert store.count(query.exact(soup, "ext", "fine")) == 0


@pytest.mark.parametrize("path", ["nope", "Name", "name.x", "_soupLastModifiedDate"])
def test_upsert_external_id_path_not_indexed_is_invalid(
    store: tureen.Store, soup: str, path: str
) -> None:
    with pytest.raises(tureen.InvalidError):
        store.upsert(soup, {"name": "a", "nope": 1, "Name": "b"}, path)
    assert count_all(store, soup) == 0


def test_upsert_external_id_on_full_text_is_invalid(store: tureen.Store) -> None:
    store.register_soup("ft", [("body", "full_text")])
    with pytest.raises(tureen.InvalidError):
        store.upsert("ft", {"body": "x"}, "body")
    assert count_all(store, "ft") == 0


def test_several_external_id_matches_is_constraint_and_writes_nothing(
    store: tureen.Store, soup: str
) -> None:
    store.upsert(soup, [{"ext": "dup", "name": "a"}, {"ext": "dup", "name": "b"}])  # no ext path
    before = all_entries(store, soup)
    with pytest.raises(tureen.ConstraintError) as info:
        store.upsert(soup, {"ext": "dup", "name": "c"}, "ext")
    assert info.value.code == 8
    with pytest.raises(tureen.ConstraintError, match="entry 2"):
        store.upsert(
            soup,
            [{"ext": "new-1", "name": "n1"}, {"ext": "new-2", "name": "n2"}, {"ext": "dup"}],
            "ext",
        )
    assert count_all(store, soup) == 2
    assert store.count(query.exact(soup, "ext", "new-1")) == 0
    assert all_entries(store, soup) == before


def test_batch_with_a_bad_entry_in_the_middle_writes_nothing(store: tureen.Store, soup: str) -> None:
    store.upsert(soup, {"name": "existing"})
    for bad in (5, "text", None, [1], True):
        with pytest.raises(tureen.InvalidError) as info:
            store.upsert(soup, [{"name": "a"}, {"name": "b"}, bad, {"name": "d"}])  # type: ignore[list-item]
        assert "entry 2" in info.value.message
    with pytest.raises(tureen.InvalidError, match="entry 1"):
        store.upsert(soup, [{"name": "a"}, {"_soupEntryId": "1", "name": "bad id"}])
    assert count_all(store, soup) == 1
    assert store.count(query.exact(soup, "name", "a")) == 0


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_is_refused_before_the_library(store: tureen.Store, soup: str, value: float) -> None:
    with pytest.raises(ValueError, match="JSON"):
        store.upsert(soup, {"name": "n", "x": value})
    with pytest.raises(ValueError):
        store.upsert(soup, [{"name": "ok"}, {"deep": {"list": [1, value]}}])
    with pytest.raises(ValueError):
        store.query(query.exact(soup, "k", value))
    assert count_all(store, soup) == 0


def test_upsert_type_errors(store: tureen.Store, soup: str) -> None:
    with pytest.raises(TypeError, match="entries"):
        store.upsert(soup, '{"name": "a"}')  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="entries"):
        store.upsert(soup, 5)  # type: ignore
    with pytest.raises(TypeError, match="not JSON serializable"):
        store.upsert(soup, {"when": object()})
    with pytest.raises(TypeError, match="external_id_path"):
        store.upsert(soup, {"name": "a"}, 5)  # type: ignore
    with pytest.raises(ValueError):  # a lone surrogate is not UTF-8
        store.upsert(soup, {"name": "\ud800"})
    assert count_all(store, soup) == 0


def test_upsert_accepts_other_mappings(store: tureen.Store, soup: str) -> None:
    from types import MappingProxyType

    got = store.upsert(soup, MappingProxyType({"name": "proxy"}))
    assert isinstance(got, dict) and got["name"] == "proxy"
    got2 = store.upsert(soup, [MappingProxyType({"name": "p2"})])
    assert got2[0]["name"] == "p2"


TRICKY = {
    "quote": 'He said "hi"',
    "backslash": "C:\\path\\to\\x",
    "quote_and_backslash": 'a\\"b\\\\"c\'',
    "controls": "".join(chr(c) for c in range(1, 32)) + "\x7f",
    "line_separators": "a\u2028b\u2029c\u0085d",
    "emoji": "🍲🥣👩‍👩‍👧 🇫🇷",
    "cjk": "汤碗 スープ",
    "rtl": "مرحبا",
    "combining": "e\u0301 vs \u00e9",
    "astral": "\U0001d11e\U0010fffd",
    "json_like": '{"a": [1, "}"]}',
    "sql_like": "'); DROP TABLE soups; --",
    "percent": "100% _true_",
    "empty": "",
    "clé 🔑": "unicode key",
    'k"ey\\': "quoted key",
    "nested": {"ü": ["ß", {"\u00a0": "\t"}], "n": [1, -2.5, 1e300, 0, True, None]},
    "big": 2**53 + 1,
    "neg": -(2**62),
}


def test_unicode_and_quotes_round_trip_exactly(store: tureen.Store, soup: str) -> None:
    entry = dict(TRICKY, name=TRICKY["quote_and_backslash"])
    stored = store.upsert(soup, entry)
    expected = dict(entry, _soupEntryId=stored["_soupEntryId"])
    expected["_soupLastModifiedDate"] = stored["_soupLastModifiedDate"]
    assert stored == expected
    assert store.retrieve(soup, [stored["_soupEntryId"]]) == [expected]
    # The exact strings are the indexed values.
    for value in (TRICKY["quote_and_backslash"], TRICKY["emoji"], TRICKY["controls"]):
        store.upsert(soup, {"name": value, "k": 1})
        found = store.query(query.exact(soup, "name", value))
        assert found and all(e["name"] == value for e in found), value
    assert json.dumps(store.retrieve(soup, [stored["_soupEntryId"]])[0], sort_keys=True) == json.dumps(
        expected, sort_keys=True
    )


def test_nul_character_in_a_value_round_trips(store: tureen.Store, soup: str) -> None:
    stored = store.upsert(soup, {"name": "a\u0000b"})
    assert store.retrieve(soup, [stored["_soupEntryId"]])[0]["name"] == "a\u0000b"
    assert store.count(query.exact(soup, "name", "a\u0000b")) == 1
    assert store.count(query.exact(soup, "name", "a")) == 0


CAFE_NFC, CAFE_NFD = "caf\u00e9", "cafe\u0301"  # one name to Swift's String ==, two in bytes
# A name that JSON text spells with an escape: it sends an entry past the
# skim (which stores plain text as given) through the full parse and tree.
ESCAPED_NAME = {"line\nbreak": 0}


def test_names_that_differ_only_in_normalisation_are_two_members(store: tureen.Store, soup: str) -> None:
    """JSON compares member names by code units, and so do Python, servers
    and the soup's byte readers. The store took the NFC and NFD spellings
    of "café" for one repeated name and kept only the last member."""
    stored = store.upsert(soup, [{CAFE_NFC: 1, CAFE_NFD: 2, "name": "n"}, {CAFE_NFC: 1, CAFE_NFD: 2, **ESCAPED_NAME}])
    entries = store.retrieve(soup, [e["_soupEntryId"] for e in stored])
    assert [(e[CAFE_NFC], e[CAFE_NFD]) for e in entries] == [(1, 2), (1, 2)]
    assert stored == entries
    # An entry rewritten from its tree (a local change's flags) keeps both too.
    changed = store.local_upsert(soup, dict(entries[0], name="m"))
    assert (changed[CAFE_NFC], changed[CAFE_NFD]) == (1, 2)


def test_an_index_path_matches_its_own_bytes_before_and_after_reindex(store: tureen.Store) -> None:
    """An NFD member matched an NFC index path when upserted (Swift's
    String ==) but not after reindex_soup, which reads bytes: a query
    answered differently depending on how the entry got its index value."""
    store.register_soup("cafes", [IndexSpec(CAFE_NFC, "string")])
    store.upsert("cafes", [{CAFE_NFD: "decomposed", **ESCAPED_NAME}, {CAFE_NFC: "composed", **ESCAPED_NAME}])

    def found() -> List[int]:
        return [store.count(query.exact("cafes", CAFE_NFC, v)) for v in ("decomposed", "composed")]

    assert found() == [0, 1]
    store.reindex_soup("cafes", [CAFE_NFC])
    assert found() == [0, 1]


def test_an_index_path_is_named_by_its_bytes(store: tureen.Store) -> None:
    """A query, reindex or alter that names the NFD spelling of an NFC
    index path found the NFC index (String ==) and read the NFC member,
    though the entry holds an NFD member of its own."""
    store.register_soup("cafes", [IndexSpec(CAFE_NFC, "string")])
    store.upsert("cafes", {CAFE_NFC: "composed", CAFE_NFD: "decomposed"})
    assert store.count(query.exact("cafes", CAFE_NFC, "composed")) == 1
    with pytest.raises(tureen.QueryError, match="no index on path"):
        store.count(query.exact("cafes", CAFE_NFD, "decomposed"))
    with pytest.raises(tureen.InvalidError, match="not an indexed path"):
        store.reindex_soup("cafes", [CAFE_NFD])
    # Two spellings, two indexes; and an alter to the other spelling is a change.
    store.register_soup("both", [IndexSpec(CAFE_NFC, "string"), IndexSpec(CAFE_NFD, "string")])
    store.upsert("both", {CAFE_NFC: "composed", CAFE_NFD: "decomposed"})
    assert [store.count(query.exact("both", p, v)) for p, v in [(CAFE_NFC, "composed"), (CAFE_NFD, "decomposed"),
                                                                (CAFE_NFC, "decomposed")]] == [1, 1, 0]
    # Pages too, in either order: a page's prepared statement is kept by
    # the query's shape, whose paths compared as Strings.
    for paths in [(CAFE_NFC, CAFE_NFD), (CAFE_NFD, CAFE_NFC)]:
        for p in paths:
            value = "composed" if p == CAFE_NFC else "decomposed"
            assert [e[p] for e in store.query(query.exact("both", p, value))] == [value], p
            assert store.query(query.exact("both", p, "composed" if value == "decomposed" else "decomposed")) == [], p
    store.alter_soup("cafes", [IndexSpec(CAFE_NFD, "string")], reindex=True)
    assert [s.path for s in store.index_specs("cafes")] == [CAFE_NFD]
    assert store.count(query.exact("cafes", CAFE_NFD, "decomposed")) == 1


def test_nul_in_a_soup_name_is_refused(store: tureen.Store) -> None:
    with pytest.raises(tureen.InvalidError, match="NUL"):
        store.register_soup("a\x00b", SPECS)


def test_large_batch(store: tureen.Store, soup: str) -> None:
    entries = [{"name": "n%05d" % i, "k": i, "payload": "x" * 50} for i in range(5000)]
    stored = store.upsert(soup, entries)
    assert len(stored) == 5000
    ids = [e["_soupEntryId"] for e in stored]
    assert len(set(ids)) == 5000
    assert [e["k"] for e in stored] == list(range(5000))
    assert count_all(store, soup) == 5000
    assert store.upsert(soup, entries, return_result=False) is None
    assert count_all(store, soup) == 10000
    assert store.count(query.exact(soup, "k", 4999)) == 2
    # By external id: every entry updated, none added.
    assert store.upsert(soup, [dict(e, ext="e%d" % e["k"]) for e in stored], return_result=False) is None
    assert count_all(store, soup) == 10000
    assert store.count(query.range(soup, "ext")) == 5000


# ---------------------------------------------------------------------------
# retrieve and remove


def test_retrieve_in_the_order_asked_skipping_missing(store: tureen.Store, soup: str) -> None:
    stored = store.upsert(soup, [{"name": str(i)} for i in range(5)])
    ids = [e["_soupEntryId"] for e in stored]
    got = store.retrieve(soup, [ids[3], 12345, ids[0], ids[4], -1])
    assert [e["name"] for e in got] == ["3", "0", "4"]
    assert store.retrieve(soup, []) == []
    assert [e["name"] for e in store.retrieve(soup, iter(ids[:2]))] == ["0", "1"]
    assert [e["name"] for e in store.retrieve(soup, (ids[1],))] == ["1"]


def test_retrieve_and_remove_bad_ids(store: tureen.Store, soup: str) -> None:
    store.upsert(soup, {"name": "a"})
    for bad in (["1"], [1.5], [True], [None], [{"a": 1}]):
        with pytest.raises(tureen.InvalidError):
            store.retrieve(soup, bad)  # type: ignore[arg-type]
        with pytest.raises(tureen.InvalidError):
            store.remove(soup, bad)  # type: ignore[arg-type]
    for not_a_list in (1, "1", {1: 1}):
        with pytest.raises(TypeError, match="ids"):
            store.retrieve(soup, not_a_list)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="ids"):
            store.remove(soup, not_a_list)  # type: ignore[arg-type]
    assert count_all(store, soup) == 1


def test_remove_entries(store: tureen.Store, soup: str) -> None:
    stored = store.upsert(soup, [{"name": str(i), "k": i} for i in range(6)])
    ids = [e["_soupEntryId"] for e in stored]
    store.remove(soup, [ids[1], ids[3], 99999])
    assert count_all(store, soup) == 4
    assert store.retrieve(soup, ids) == [stored[i] for i in (0, 2, 4, 5)]
    assert store.count(query.exact(soup, "k", 1)) == 0
    store.remove(soup, [])
    store.remove(soup, ids)
    assert count_all(store, soup) == 0
    # A new entry never reuses a removed id.
    assert store.upsert(soup, {"name": "new"})["_soupEntryId"] > max(ids)


def test_store_remove_on_the_class_still_deletes_files(tmp_path: Path) -> None:
    path = tmp_path / "gone.db"
    with tureen.Store.open(path, raw_key=RAW) as s:
        s.register_soup("s", SPECS)
        assert callable(s.remove)
    tureen.remove_store(path)
    assert not path.exists()
    with pytest.raises(tureen.NotFoundError):
        tureen.remove_store(path)


# ---------------------------------------------------------------------------
# alter, reindex, clear, drop


def _fill(store: tureen.Store, soup: str, n: int) -> List[Dict[str, Any]]:
    return store.upsert(
        soup, [{"name": "n%03d" % i, "k": i, "age": i % 7, "city": "c%d" % (i % 3)} for i in range(n)]
    )


def test_alter_with_reindex(store: tureen.Store, soup: str) -> None:
    _fill(store, soup, 30)
    before = all_entries(store, soup)
    new = [IndexSpec("k", "integer"), IndexSpec("age", "integer"), IndexSpec("city", "string")]
    store.alter_soup(soup, new)  # reindex defaults to True
    assert store.index_specs(soup) == new
    assert all_entries(store, soup) == before  # entries, ids and dates kept
    assert store.count(query.exact(soup, "age", 3)) == len([i for i in range(30) if i % 7 == 3])
    assert store.count(query.exact(soup, "city", "c1")) == 10
    assert store.count(query.range(soup, "k", 10, 19)) == 10  # a kept index keeps working
    with pytest.raises(tureen.QueryError):
        store.count(query.exact(soup, "name", "n001"))  # dropped index
    # Changing an index's type recomputes it.
    store.alter_soup(soup, [IndexSpec("k", "string"), IndexSpec("age", "integer")])
    assert store.count(query.exact(soup, "k", "12")) == 1
    assert store.count(query.like(soup, "k", "1%")) == 11  # 1, 10..19


def test_alter_without_reindex_then_reindex_soup(store: tureen.Store, soup: str) -> None:
    _fill(store, soup, 21)
    new = SPECS + [IndexSpec("age", "integer"), IndexSpec("city", "string")]
    store.alter_soup(soup, new, reindex=False)
    assert store.index_specs(soup) == new
    assert store.count(query.exact(soup, "age", 2)) == 0  # not computed yet
    assert store.count(query.range(soup, "city")) == 0
    assert store.count(query.exact(soup, "k", 5)) == 1  # kept index keeps its values
    store.reindex_soup(soup, ["age"])
    assert store.count(query.exact(soup, "age", 2)) == 3
    assert store.count(query.range(soup, "city")) == 0
    store.reindex_soup(soup, ["city", "k"])
    assert store.count(query.exact(soup, "city", "c2")) == 7
    # New entries are indexed on every path right away.
    store.upsert(soup, {"name": "late", "k": 100, "age": 2, "city": "c2"})
    assert store.count(query.exact(soup, "age", 2)) == 4


def test_alter_errors_leave_the_soup_unchanged(store: tureen.Store, soup: str) -> None:
    _fill(store, soup, 5)
    for bad in ([], [("a", "nope")], [("a..b", "string")], [("a", "string"), ("a", "string")]):
        with pytest.raises(tureen.InvalidError):
            store.alter_soup(soup, bad)
    assert store.index_specs(soup) == SPECS
    assert store.count(query.exact(soup, "name", "n003")) == 1
    with pytest.raises(TypeError):
        store.alter_soup(soup, "k")  # type: ignore[arg-type]


def test_reindex_soup_errors(store: tureen.Store, soup: str) -> None:
    with pytest.raises(tureen.InvalidError, match="nope"):
        store.reindex_soup(soup, ["k", "nope"])
    with pytest.raises(TypeError, match="paths"):
        store.reindex_soup(soup, "k")  # type: ignore[arg-type]
    with pytest.raises(tureen.InvalidError):
        store.reindex_soup(soup, [5])  # type: ignore[list-item]


def test_clear_soup(store: tureen.Store, soup: str) -> None:
    stored = _fill(store, soup, 12)
    store.clear_soup(soup)
    assert store.soup_exists(soup) and store.index_specs(soup) == SPECS
    assert count_all(store, soup) == 0 and store.query(query.all(soup)) == []
    again = store.upsert(soup, {"name": "after"})
    assert again["_soupEntryId"] > max(e["_soupEntryId"] for e in stored)  # ids not reused
    assert store.count(query.exact(soup, "name", "after")) == 1


def test_drop_soup(store: tureen.Store, soup: str) -> None:
    store.register_soup("other", SPECS)
    _fill(store, soup, 5)
    store.drop_soup(soup)
    assert not store.soup_exists(soup)
    assert store.soup_names() == ["other"]
    with pytest.raises(tureen.NotFoundError):
        store.count(query.all(soup))
    with pytest.raises(tureen.NotFoundError):
        store.drop_soup(soup)
    # The name is free again, with other specs.
    store.register_soup(soup, [IndexSpec("z", "floating")])
    assert store.index_specs(soup) == [("z", "floating")]
    assert count_all(store, soup) == 0


def test_compact_gives_space_back(store: tureen.Store, soup: str) -> None:
    for start in range(0, 4000, 1000):
        store.upsert(
            soup,
            [{"name": "n%d" % i, "k": i, "blob": ("%06d" % i) * 80} for i in range(start, start + 1000)],
            return_result=False,
        )
    full = store.size()
    store.clear_soup(soup)
    store.compact()
    small = store.size()
    assert small < full / 4, (full, small)
    store.check()
    store.upsert(soup, {"name": "still works"})
    assert count_all(store, soup) == 1


def test_check_passes_on_a_sound_store(store: tureen.Store, soup: str) -> None:
    store.check()
    _fill(store, soup, 200)
    store.alter_soup(soup, SPECS + [IndexSpec("age", "integer")])
    store.remove_by_query(query.range(soup, "k", 0, 50))
    store.check()


def test_check_reports_corruption(tmp_path: Path) -> None:
    path = tmp_path / "damaged.db"
    with tureen.Store.open(path, raw_key=RAW) as s:
        s.register_soup("big", [("k", "integer")])
        s.upsert("big", [{"k": i, "pad": "x" * 200} for i in range(3000)], return_result=False)
        s.check()
    size = path.stat().st_size
    with open(path, "r+b") as f:  # damage one page in the middle of the file
        f.seek(size // 2 + 100)
        f.write(b"\0" * 16)
    with tureen.Store.open(path, raw_key=RAW) as s:
        with pytest.raises(tureen.CorruptError) as info:
            s.check()
        assert info.value.code == 5 and info.value.message


def test_alter_to_a_reordered_spec_list_changes_the_order(store: tureen.Store, soup: str) -> None:
    reordered = [SPECS[2], SPECS[0], SPECS[1]]
    store.alter_soup(soup, reordered)
    assert store.index_specs(soup) == reordered


def test_alter_to_a_new_set_takes_its_order(store: tureen.Store, soup: str) -> None:
    new = [IndexSpec("z", "integer"), SPECS[2], SPECS[0]]
    store.alter_soup(soup, new)
    assert store.index_specs(soup) == new


# ---------------------------------------------------------------------------
# threads


def test_threads_upsert_and_query_one_store(store: tureen.Store, soup: str) -> None:
    threads_n, rounds, batch = 8, 25, 4
    acknowledged: List[List[int]] = [[] for _ in range(threads_n)]
    errors: List[BaseException] = []
    start = threading.Barrier(threads_n)

    def work(t: int) -> None:
        try:
            start.wait(timeout=30)
            for r in range(rounds):
                stored = store.upsert(
                    soup, [{"name": "t%d" % t, "k": r * batch + j, "ext": "%d-%d-%d" % (t, r, j)}
                           for j in range(batch)]
                )
                acknowledged[t].extend(e["_soupEntryId"] for e in stored)
                if r % 5 == 0:  # an update by external id, never a new entry
                    store.upsert(soup, {"ext": "%d-%d-0" % (t, r), "name": "t%d" % t, "k": -1}, "ext")
                mine = store.count(query.exact(soup, "name", "t%d" % t))
                assert mine == len(acknowledged[t]), (t, mine, len(acknowledged[t]))
                page = store.query(query.range(soup, "k", 0, 10, page_size=5))
                assert len(page) <= 5
                assert len(store.retrieve(soup, acknowledged[t][-batch:])) == batch
                if r % 8 == 0:
                    seen = [e["_soupEntryId"] for e in store.iter_query(
                        query.exact(soup, "name", "t%d" % t, order_path="_soupEntryId", page_size=7))]
                    assert seen == sorted(acknowledged[t])
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(threads_n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not any(w.is_alive() for w in workers), "a worker is stuck"
    assert not errors, errors
    every = [i for ids in acknowledged for i in ids]
    assert len(every) == len(set(every)) == threads_n * rounds * batch
    assert count_all(store, soup) == len(every)
    got = store.retrieve(soup, every)
    assert [e["_soupEntryId"] for e in got] == every
    store.check()


def test_close_waits_for_calls_in_flight(tmp_path: Path) -> None:
    s = tureen.Store.open(tmp_path / "busy.db", raw_key=RAW)
    s.register_soup("s", SPECS)
    done = threading.Event()
    failures: List[BaseException] = []

    def writer() -> None:
        try:
            s.upsert("s", [{"name": "n%d" % i, "k": i} for i in range(20000)], return_result=False)
        except BaseException as exc:
            failures.append(exc)
        done.set()

    t = threading.Thread(target=writer)
    t.start()
    time.sleep(0.01)
    s.close()  # waits for the upsert, or the upsert raises MisuseError (not started yet)
    t.join(timeout=60)
    assert done.is_set()
    assert all(isinstance(f, tureen.MisuseError) for f in failures), failures
    with tureen.Store.open(tmp_path / "busy.db", raw_key=RAW) as again:
        assert count_all(again, "s") in (0, 20000)


def test_reads_go_on_during_an_alter_and_writes_wait(store: tureen.Store, soup: str) -> None:
    n = 20000
    store.upsert(soup, [{"name": "n%d" % i, "k": i, "age": i % 50} for i in range(n)],
                 return_result=False)
    stop = threading.Event()
    errors: List[BaseException] = []
    reads: List[int] = []
    written: List[int] = []

    def reader() -> None:
        try:
            while not stop.is_set():
                assert store.count(query.range(soup, "k", 100, 199)) == 100
                assert store.index_specs(soup) in (SPECS, SPECS + [IndexSpec("age", "integer")])
                reads.append(1)
        except BaseException as exc:
            errors.append(exc)

    def writer() -> None:
        try:
            i = 0
            while not stop.is_set():
                written.append(store.upsert(soup, {"name": "w", "k": -1, "age": 7})["_soupEntryId"])
                i += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.02)
        store.alter_soup(soup, SPECS + [IndexSpec("age", "integer")])
        store.compact()
        store.check()
        time.sleep(0.02)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert not errors, errors
    assert reads and written
    assert count_all(store, soup) == n + len(written)
    # Entries written during the alter are indexed on the new path too.
    assert store.count(query.exact(soup, "age", 7)) == n // 50 + len(written)


ACK_CHILD = r"""
import sys
import tureen
store = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
store.register_soup("acks", [("n", "integer")])
i = 0
while True:
    stored = store.upsert("acks", [{"n": i}, {"n": i + 1}])
    print(stored[0]["_soupEntryId"], stored[1]["_soupEntryId"], flush=True)
    i += 2
"""


def test_acknowledged_upserts_survive_a_kill(tmp_path: Path) -> None:
    path = tmp_path / "acks.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", ACK_CHILD, str(path), RAW],
        env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    acknowledged: List[int] = []
    try:
        while len(acknowledged) < 600:
            line = _read_line(proc, 60)
            assert line, proc.stderr.read()  # type: ignore[union-attr]
            acknowledged.extend(int(x) for x in line.split())
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with tureen.Store.open(path, raw_key=RAW) as s:
        got = s.retrieve("acks", acknowledged)
        assert [e["_soupEntryId"] for e in got] == acknowledged
        total = count_all(s, "acks")
        assert total % 2 == 0 and total >= len(acknowledged)  # batches are all or nothing
        s.check()


# ---------------------------------------------------------------------------
# an alter killed at moments spread over its duration

KILL_ENTRIES = 20000
OLD_SPECS = [IndexSpec("name", "string"), IndexSpec("k", "integer")]
NEW_SPECS = [
    IndexSpec("name", "string"),
    IndexSpec("k", "integer"),
    IndexSpec("v", "integer"),
    IndexSpec("group", "string"),
]

ALTER_CHILD = r"""
import json, sys, time
import tureen
path, raw, specs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
store = tureen.Store.open(path, raw_key=raw)
print("ready", flush=True)
started = time.perf_counter()
store.alter_soup("big", specs, reindex=True)
print("done %.6f" % (time.perf_counter() - started), flush=True)
store.close()
"""


def _start_alter(path: Path) -> "subprocess.Popen[str]":
    return subprocess.Popen(
        [sys.executable, "-c", ALTER_CHILD, str(path), RAW,
         json.dumps([s.to_dict() for s in NEW_SPECS])],
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read_line(proc: "subprocess.Popen[str]", timeout: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        proc.kill()
        raise AssertionError("the child said nothing in %.0f s" % timeout)
    return proc.stdout.readline().strip()


def _verify_after_kill(path: Path) -> str:
    """Reopens the store; returns "old" or "new", or fails."""
    with tureen.Store.open(path, raw_key=RAW) as s:
        specs = s.index_specs("big")
        assert specs in (OLD_SPECS, NEW_SPECS), specs
        assert s.count(query.all("big")) == KILL_ENTRIES
        assert s.count(query.range("big", "k")) == KILL_ENTRIES
        assert [e["k"] for e in s.query(query.exact("big", "name", "n12345"))] == [12345]
        if specs == OLD_SPECS:
            with pytest.raises(tureen.QueryError):
                s.count(query.exact("big", "v", 21))
            state = "old"
        else:
            assert s.count(query.range("big", "v")) == KILL_ENTRIES
            assert [e["k"] for e in s.query(query.exact("big", "v", 3 * 777))] == [777]
            assert s.count(query.exact("big", "group", "g3")) == KILL_ENTRIES // 10
            assert s.count(query.range("big", "v", 0, 299)) == 100
            state = "new"
        ids = [e["_soupEntryId"] for e in s.iter_query(
            query.all("big", order_path="_soupEntryId", page_size=5000))]
        assert ids == list(range(1, KILL_ENTRIES + 1))
        s.check()
    with tureen.Store.open(path, raw_key=RAW) as s:  # and it stays that way
        assert s.index_specs("big") == specs
    return state


def test_alter_killed_midway_is_old_or_new_never_half(tmp_path: Path) -> None:
    base = tmp_path / "base.db"
    with tureen.Store.open(base, raw_key=RAW) as s:
        s.register_soup("big", OLD_SPECS)
        s.upsert(
            "big",
            [{"name": "n%d" % i, "k": i, "v": 3 * i, "group": "g%d" % (i % 10), "pad": "p" * 40}
             for i in range(KILL_ENTRIES)],
            return_result=False,
        )

    # How long an uninterrupted alter takes, on a copy.
    measure = tmp_path / "measure.db"
    shutil.copy(base, measure)
    proc = _start_alter(measure)
    try:
        assert _read_line(proc, 60) == "ready"
        done = _read_line(proc, 120)
        assert done.startswith("done "), done + proc.stderr.read()  # type: ignore[union-attr]
        duration = float(done.split()[1])
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _verify_after_kill(measure) == "new"

    rounds = 8
    outcomes: List[str] = []
    for r in range(rounds):
        path = tmp_path / ("round%d.db" % r)
        shutil.copy(base, path)
        proc = _start_alter(path)
        try:
            assert _read_line(proc, 60) == "ready"
            time.sleep(duration * r / (rounds - 1))  # 0 .. the whole alter
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
            assert proc.returncode == -signal.SIGKILL or proc.returncode == 0
            finished = "done" in proc.stdout.read()  # type: ignore[union-attr]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        state = _verify_after_kill(path)
        outcomes.append(state + ("" if finished else " (killed)"))
        os.remove(path)
    print("alter of %d entries: %.3f s; outcomes %s" % (KILL_ENTRIES, duration, outcomes))
    outcomes = [o.split()[0] for o in outcomes]
    assert outcomes.count("new") >= rounds // 2, (outcomes, duration)


def test_soup_names_leave_out_the_engines_soups(store: tureen.Store) -> None:
    store.register_soup("notes", [("id", "string")])
    target = tureen.kinto_target("http://127.0.0.1:1/v1", "b", "c")
    store.sync_up(target, "notes")  # nothing to send: no server needed; creates syncs_soup
    assert store.soup_exists("syncs_soup")
    assert store.soup_names() == ["notes"]
    assert store.soup_names(include_engine=True) == ["notes", "syncs_soup"]
    assert tureen.ENGINE_SOUPS == {"syncs_soup", "cache_soup"}
