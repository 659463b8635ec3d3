"""Behaviour taken from SmartStore's own test suite: integer indexes clamp
numbers beyond 64 bits as Java's long conversion does, and projections
(selectPaths, Smart SQL) through arrays keep the nesting of the document."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import IndexSpec, query

RAW = "5a" * 32
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "fidelity.db", raw_key=RAW) as s:
        yield s


# ---------------------------------------------------------------------------
# integer indexes: numbers beyond the 64-bit range

NUMBERS: List[Dict[str, Any]] = [
    {"name": "1e30", "n": 1e30},
    {"name": "-1e30", "n": -1e30},
    {"name": "2^64", "n": 2**64},
    {"name": "2^63", "n": 2**63},
    {"name": "-2^63-1", "n": -(2**63) - 1},
    {"name": "max", "n": INT64_MAX},
    {"name": "min", "n": INT64_MIN},
    {"name": "2.9", "n": 2.9},
    {"name": "-2.9", "n": -2.9},
    {"name": "text 1e30", "n": "1e30"},
    {"name": "text -2^64", "n": str(-(2**64))},
    {"name": "word", "n": "abc"},
    {"name": "text NaN", "n": "NaN"},
    {"name": "text Infinity", "n": "Infinity"},
    {"name": "text 1e999", "n": "1e999"},
]

# What SmartStore stores ((long) of the number: toward zero, clamped to the
# 64-bit limits); numeric strings converted the same way, other strings NULL.
EXPECTED_N: Dict[str, Any] = {
    "1e30": INT64_MAX, "-1e30": INT64_MIN, "2^64": INT64_MAX, "2^63": INT64_MAX,
    "-2^63-1": INT64_MIN, "max": INT64_MAX, "min": INT64_MIN, "2.9": 2, "-2.9": -2,
    "text 1e30": INT64_MAX, "text -2^64": INT64_MIN, "word": None, "text NaN": None,
    "text Infinity": None, "text 1e999": None,
}


def names_of(store: tureen.Store, spec: Dict[str, Any]) -> List[Any]:
    return sorted(e["name"] for e in store.iter_query(spec))


def with_n(value: Any) -> List[str]:
    return sorted(k for k, v in EXPECTED_N.items() if v == value and v is not None)


def fill_numbers(store: tureen.Store, how: str) -> str:
    """The soup "nums" with NUMBERS in it and an integer index on "n", the
    index computed by upsert, by alter or by reindex."""
    full = [IndexSpec("name", "string"), IndexSpec("n", "integer")]
    store.register_soup("nums", full if how == "upsert" else full[:1])
    store.upsert("nums", NUMBERS)
    if how == "alter":
        store.alter_soup("nums", full, reindex=True)
    elif how == "reindex":
        store.alter_soup("nums", full, reindex=False)
        store.reindex_soup("nums", ["n"])
    return "nums"


@pytest.mark.parametrize("how", ["upsert", "alter", "reindex"])
def test_integer_index_clamps_beyond_64_bits(store: tureen.Store, how: str) -> None:
    soup = fill_numbers(store, how)
    # The indexed values themselves (selectPaths reads an indexed path's index).
    spec = dict(query.all(soup, order_path="_soupEntryId"), selectPaths=["name", "n"], pageSize=100)
    assert {name: n for name, n in store.query(spec)} == EXPECTED_N
    # Found at the clamped value by exact and range queries.
    assert names_of(store, query.exact(soup, "n", INT64_MAX)) == with_n(INT64_MAX)
    assert names_of(store, query.exact(soup, "n", INT64_MIN)) == with_n(INT64_MIN)
    assert names_of(store, query.range(soup, "n", 2**62, None)) == with_n(INT64_MAX)
    assert names_of(store, query.range(soup, "n", None, -(2**62))) == with_n(INT64_MIN)
    assert names_of(store, query.range(soup, "n", -2, 2)) == ["-2.9", "2.9"]
    # Keys are converted by the same rule: 1e30 means the upper limit.
    assert names_of(store, query.exact(soup, "n", 1e30)) == with_n(INT64_MAX)
    assert names_of(store, query.exact(soup, "n", -(2**64))) == with_n(INT64_MIN)
    # Strings that are no finite number index nothing.
    assert store.count(query.range(soup, "n")) == len([v for v in EXPECTED_N.values() if v is not None])


def test_integer_order_puts_the_clamped_values_at_the_ends(store: tureen.Store) -> None:
    soup = fill_numbers(store, "upsert")
    spec = dict(query.range(soup, "n", order_path="n"), selectPaths=["n"], pageSize=100)
    got = [row[0] for row in store.query(spec)]
    assert got == sorted(v for v in EXPECTED_N.values() if v is not None)
    assert got[0] == INT64_MIN and got[-1] == INT64_MAX


# ---------------------------------------------------------------------------
# projections through arrays

# SmartStore's testProjectThroughArrays document and its expected projections.
DOC: Dict[str, Any] = {
    "a": "a1",
    "b": 2,
    "c": [{"cc": "cc1"}, {"cc": 2}, {"cc": [1, 2, 3]}, {}, {"cc": {"cc5": 5}}],
    "d": [
        {"dd": [{"ddd": "ddd11"}, {"ddd": "ddd12"}]},
        {"dd": [{"ddd": "ddd21"}]},
        {"dd": [{"ddd": "ddd31"}, {"ddd3": "ddd32"}]},
    ],
}
PROJECTIONS: Dict[str, Any] = {
    "a": "a1",
    "b": 2,
    "c": DOC["c"],
    "c.cc": ["cc1", 2, [1, 2, 3], {"cc5": 5}],
    "c.cc.cc5": [5],
    "d": DOC["d"],
    "d.dd": [
        [{"ddd": "ddd11"}, {"ddd": "ddd12"}],
        [{"ddd": "ddd21"}],
        [{"ddd": "ddd31"}, {"ddd3": "ddd32"}],
    ],
    "d.dd.ddd": [["ddd11", "ddd12"], ["ddd21"], ["ddd31"]],
    "d.dd.ddd3": [["ddd32"]],
    "d.dd.nothing": None,
    "nothing": None,
}


DOCS: List[Dict[str, Any]] = [
    dict(DOC, name="smartstore"),
    {"name": "two levels", "d": [{"dd": [{"ddd": "a"}, {"ddd": "b"}]}, {"dd": [{"ddd": "c"}]}]},
    {"name": "empty", "d": [], "c": [{"cc": []}, {"cc": None}], "e": []},
]


@pytest.fixture
def docs(store: tureen.Store) -> str:
    store.register_soup("docs", [IndexSpec("name", "string")])
    store.upsert("docs", DOCS)
    return "docs"


def test_select_paths_keep_the_nesting_of_arrays(store: tureen.Store, docs: str) -> None:
    paths = list(PROJECTIONS)
    spec = dict(query.exact(docs, "name", "smartstore"), selectPaths=paths)
    assert store.query(spec) == [list(PROJECTIONS.values())]
    spec = dict(query.exact(docs, "name", "two levels"), selectPaths=["d.dd.ddd", "d.dd"])
    assert store.query(spec) == [[[["a", "b"], ["c"]], [[{"ddd": "a"}, {"ddd": "b"}], [{"ddd": "c"}]]]]


def test_smart_sql_projections_keep_the_nesting_of_arrays(store: tureen.Store, docs: str) -> None:
    rows = store.query(query.smart(
        "select {docs:d.dd.ddd}, {docs:c.cc} from {docs} order by {docs:_soupEntryId}"))
    assert rows[0] == [PROJECTIONS["d.dd.ddd"], PROJECTIONS["c.cc"]]
    assert rows[1] == [[["a", "b"], ["c"]], None]
    assert rows[2] == [None, [[], None]]


def test_empty_arrays_and_nulls_as_smartstore_projects_them(store: tureen.Store, docs: str) -> None:
    # An array that yields nothing leads nowhere; a value at the end of the
    # path comes back whole, an empty array or a null included.
    spec = dict(query.exact(docs, "name", "empty"), selectPaths=["d", "d.dd", "e", "c.cc", "c.cc.x"])
    assert store.query(spec) == [[[], None, [], [[], None], None]]


def test_indexes_of_an_array_path_still_flatten(store: tureen.Store) -> None:
    # Indexing is unchanged: every value of the path is searchable as words,
    # and a string index holds the JSON text of the values, flattened. An
    # indexed path reads its index, in selectPaths as in Smart SQL.
    store.register_soup("indexed", [IndexSpec("name", "string"), IndexSpec("d.dd.ddd", "full_text"),
                                    IndexSpec("d.dd", "string")])
    store.upsert("indexed", DOCS)
    assert names_of(store, query.match("indexed", "d.dd.ddd", "ddd21")) == ["smartstore"]
    assert names_of(store, query.match("indexed", "d.dd.ddd", "a c")) == ["two levels"]
    assert names_of(store, query.exact("indexed", "d.dd.ddd", "a b c")) == ["two levels"]
    assert names_of(store, query.exact("indexed", "d.dd", '[{"ddd":"a"},{"ddd":"b"},{"ddd":"c"}]')) == ["two levels"]
    spec = dict(query.exact("indexed", "name", "two levels"), selectPaths=["d.dd.ddd"])
    assert store.query(spec) == [["a b c"]]
