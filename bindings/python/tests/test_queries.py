"""tureen.Store queries: the query builders, index value rules, paging,
remove_by_query, and injection attempts."""

from __future__ import annotations

import copy
import json
import pickle
import random
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import IndexSpec, query

RAW = "3c" * 32
SOUP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,99}")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "queries.db", raw_key=RAW) as s:
        yield s


def names(entries: List[Dict[str, Any]]) -> List[Any]:
    return [e["name"] for e in entries]


def found(store: tureen.Store, spec: Dict[str, Any]) -> List[Any]:
    """The names of every entry the query matches, over all pages, sorted by
    entry id."""
    return [e["name"] for e in sorted(store.iter_query(spec), key=lambda e: e["_soupEntryId"])]


# ---------------------------------------------------------------------------
# the builders


def test_builders_make_plain_dicts() -> None:
    assert query.all("s") == {"queryType": "all", "soupName": "s", "order": "ascending", "pageSize": 10}
    assert query.all("s", "k", "descending", 3) == {
        "queryType": "all",
        "soupName": "s",
        "orderPath": "k",
        "order": "descending",
        "pageSize": 3,
    }
    assert query.exact("s", "name", "Ann") == {
        "queryType": "exact",
        "soupName": "s",
        "indexPath": "name",
        "matchKey": "Ann",
        "order": "ascending",
        "pageSize": 10,
    }
    assert query.range("s", "k") == {
        "queryType": "range",
        "soupName": "s",
        "indexPath": "k",
        "order": "ascending",
        "pageSize": 10,
    }
    spec = query.range("s", "k", begin=1, end=5, order=query.DESCENDING, page_size=2)
    assert spec["beginKey"] == 1 and spec["endKey"] == 5 and spec["order"] == "descending"
    assert spec["pageSize"] == 2 and "orderPath" not in spec
    assert query.range("s", "k", end=0)["endKey"] == 0 and "beginKey" not in query.range("s", "k", end=0)
    assert query.like("s", "name", "A%")["likeKey"] == "A%"
    assert type(query.like("s", "name", "A%")) is dict


def test_order_path_none_sends_null_and_default_omits_it() -> None:
    assert "orderPath" not in query.exact("s", "k", 1)
    unordered = query.exact("s", "k", 1, order_path=None)
    assert "orderPath" in unordered and unordered["orderPath"] is None
    assert json.loads(json.dumps(unordered))["orderPath"] is None
    assert "orderPath" not in query.all("s", order_path=query.DEFAULT)
    assert query.all("s", order_path=None)["orderPath"] is None
    assert repr(query.DEFAULT) == "tureen.query.DEFAULT"
    assert copy.deepcopy(query.DEFAULT) is query.DEFAULT
    assert pickle.loads(pickle.dumps(query.DEFAULT)) is query.DEFAULT


def test_builder_module_is_exported() -> None:
    assert tureen.query is query
    assert "query" in tureen.__all__ and "IndexSpec" in tureen.__all__


# ---------------------------------------------------------------------------
# index value rules (include/tureen.h, "Soups")

RULE_SPECS = [
    IndexSpec("s", "string"),
    IndexSpec("i", "integer"),
    IndexSpec("f", "floating"),
    IndexSpec("t", "full_text"),
    IndexSpec("tags.n", "string"),
    IndexSpec("tags.v", "integer"),
    IndexSpec("list", "string"),
    IndexSpec("owner.name", "string"),
    IndexSpec("owner.age", "integer"),
]


@pytest.fixture
def rules(store: tureen.Store) -> str:
    store.register_soup("rules", RULE_SPECS)
    store.upsert(
        "rules",
        [
            {"name": "bools", "s": True, "i": True, "f": False},
            {"name": "numbers", "s": 42, "i": 7.9, "f": "2.5"},
            {"name": "negative", "s": 1.5, "i": -7.9, "f": -0.5},
            {"name": "strings", "s": {"b": [1, 2], "a": "x"}, "i": " 7.9 ", "f": "abc"},
            {"name": "numeric", "s": "42", "i": "42", "f": "1e3"},
            {"name": "junk", "s": None, "i": "abc", "f": "1e999", "t": None},
            {"name": "objects", "i": {"a": 1}, "f": [1, 2], "s": False},
            {"name": "false", "i": False, "f": True, "s": "false"},
            {
                "name": "tags",
                "tags": [{"n": "a", "v": 1}, {"m": "skip"}, {"n": "b", "v": 2}],
                "t": ["hello", "brave new", "world"],
            },
            {"name": "one tag", "tags": [{"n": "solo", "v": 5}], "t": "just text"},
            {"name": "list", "list": ["x", "y"], "owner": {"name": "Ann", "age": "30"}},
            {"name": "nested", "owner": {"name": {"first": "Bo"}, "age": 41.99}},
        ],
    )
    return "rules"


def test_booleans(store: tureen.Store, rules: str) -> None:
    assert found(store, query.exact(rules, "s", "true")) == ["bools"]
    assert found(store, query.exact(rules, "s", True)) == ["bools"]  # key converted too
    assert found(store, query.exact(rules, "s", "false")) == ["objects", "false"]
    assert found(store, query.exact(rules, "i", 1)) == ["bools"]
    assert found(store, query.exact(rules, "i", 0)) == ["false"]
    assert found(store, query.exact(rules, "f", 0.0)) == ["bools"]
    assert found(store, query.exact(rules, "f", 1)) == ["false"]


def test_numbers_in_a_string_index(store: tureen.Store, rules: str) -> None:
    assert found(store, query.exact(rules, "s", "42")) == ["numbers", "numeric"]
    assert found(store, query.exact(rules, "s", 42)) == ["numbers", "numeric"]
    assert found(store, query.exact(rules, "s", "1.5")) == ["negative"]
    assert found(store, query.like(rules, "s", "4%")) == ["numbers", "numeric"]


def test_objects_in_a_string_index_are_their_json_text(store: tureen.Store, rules: str) -> None:
    spec = query.like(rules, "s", "{%")
    got = store.query(spec)
    assert names(got) == ["strings"]
    # The indexed text is JSON for the same object: find it by that text.
    hits = [
        text
        for text in ('{"b":[1,2],"a":"x"}', '{"a":"x","b":[1,2]}', '{"b": [1, 2], "a": "x"}')
        if store.count(query.exact(rules, "s", text)) == 1
    ]
    assert len(hits) == 1, hits
    assert json.loads(hits[0]) == {"b": [1, 2], "a": "x"}


def test_nested_paths(store: tureen.Store, rules: str) -> None:
    assert found(store, query.exact(rules, "owner.name", "Ann")) == ["list"]
    assert found(store, query.exact(rules, "owner.age", 30)) == ["list"]  # "30" converted
    assert found(store, query.exact(rules, "owner.age", 41)) == ["nested"]  # 41.99 truncated
    assert found(store, query.like(rules, "owner.name", '%"first"%')) == ["nested"]
    assert store.count(query.range(rules, "owner.name")) == 2  # the others have no owner


def test_array_projection(store: tureen.Store, rules: str) -> None:
    # Several values: the JSON array text of them; the element without "n"
    # yields nothing.
    assert found(store, query.exact(rules, "tags.n", '["a","b"]')) == ["tags"]
    assert found(store, query.like(rules, "tags.n", '%"b"%')) == ["tags"]
    # Any path through an array is an array, even with one element.
    assert found(store, query.exact(rules, "tags.n", '["solo"]')) == ["one tag"]
    assert store.count(query.exact(rules, "tags.n", "solo")) == 0
    # A path ending on an array yields its elements.
    assert found(store, query.exact(rules, "list", '["x","y"]')) == ["list"]
    # An integer index of several values is NULL.
    assert "tags" not in found(store, query.range(rules, "tags.v"))
    assert store.count(query.exact(rules, "tags.v", 1)) == 0
    assert store.count(query.exact(rules, "tags.v", 2)) == 0


def test_full_text_joins_several_values_with_spaces(store: tureen.Store, rules: str) -> None:
    assert found(store, query.exact(rules, "t", "hello brave new world")) == ["tags"]
    assert found(store, query.like(rules, "t", "%new world%")) == ["tags"]
    assert found(store, query.exact(rules, "t", "just text")) == ["one tag"]
    assert store.count(query.range(rules, "t")) == 2  # None and missing index NULL


def test_integer_truncation_and_numeric_strings(store: tureen.Store, rules: str) -> None:
    assert found(store, query.exact(rules, "i", 7)) == ["numbers", "strings"]  # 7.9, " 7.9 "
    assert found(store, query.exact(rules, "i", -7)) == ["negative"]  # toward zero
    assert found(store, query.exact(rules, "i", "7")) == ["numbers", "strings"]
    assert found(store, query.exact(rules, "i", 7.5)) == ["numbers", "strings"]  # key truncated too
    assert found(store, query.exact(rules, "i", "42")) == ["numeric"]
    assert store.count(query.exact(rules, "i", 8)) == 0
    # "abc", an object: NULL, so not in an open range; booleans are 1 and 0.
    assert found(store, query.range(rules, "i")) == [
        "bools", "numbers", "negative", "strings", "numeric", "false"
    ]
    assert found(store, query.range(rules, "i", -7, 7)) == [
        "bools", "numbers", "negative", "strings", "false"
    ]
    assert found(store, query.range(rules, "i", 2, None)) == ["numbers", "strings", "numeric"]
    assert found(store, query.range(rules, "i", None, 0)) == ["negative", "false"]


def test_floating_values(store: tureen.Store, rules: str) -> None:
    assert found(store, query.exact(rules, "f", 2.5)) == ["numbers"]
    assert found(store, query.exact(rules, "f", "2.5")) == ["numbers"]
    assert found(store, query.exact(rules, "f", 1000)) == ["numeric"]
    # "abc", "1e999" (not finite), [1, 2]: NULL.
    assert found(store, query.range(rules, "f")) == ["bools", "numbers", "negative", "numeric", "false"]
    assert found(store, query.range(rules, "f", -1, 1)) == ["bools", "negative", "false"]
    ordered = store.query(query.range(rules, "f", order_path="f", order="descending"))
    assert names(ordered) == ["numeric", "numbers", "false", "bools", "negative"]


def test_null_and_missing_are_not_found(store: tureen.Store, rules: str) -> None:
    # "junk" has s null; most entries lack "t": none of them is in an open range.
    in_s = found(store, query.range(rules, "s"))
    assert "junk" not in in_s and "tags" not in in_s
    assert len(in_s) == 7
    assert store.count(query.all(rules)) == 12


def test_exact_needs_a_key(store: tureen.Store, rules: str) -> None:
    with pytest.raises(tureen.QueryError, match="matchKey"):
        store.query(query.exact(rules, "s", None))


# ---------------------------------------------------------------------------
# paging


@pytest.fixture
def numbered(store: tureen.Store) -> str:
    store.register_soup("nums", [IndexSpec("k", "integer"), IndexSpec("name", "string")])
    ks = list(range(95))
    random.Random(7).shuffle(ks)
    store.upsert("nums", [{"k": k, "name": "n%02d" % k, "tie": k // 10} for k in ks])
    return "nums"


def test_query_pages(store: tureen.Store, numbered: str) -> None:
    spec = query.range(numbered, "k", page_size=10)
    pages = [store.query(spec, p) for p in range(11)]
    assert [len(p) for p in pages] == [10] * 9 + [5, 0]
    assert [e["k"] for p in pages for e in p] == list(range(95))
    assert store.query(spec) == pages[0]
    assert store.count(spec) == 95
    with pytest.raises(tureen.QueryError, match="page"):
        store.query(spec, -1)
    with pytest.raises(OverflowError):
        store.query(spec, 2**31)
    with pytest.raises(TypeError, match="page_index"):
        store.query(spec, "1")  # type: ignore[arg-type]
    assert store.query(spec, 2**31 - 1) == []


@pytest.mark.parametrize("page_size", [1, 7, 10, 19, 95, 96, 1000])
def test_iter_query_yields_every_entry_once_in_order(
    store: tureen.Store, numbered: str, page_size: int
) -> None:
    got = [e["k"] for e in store.iter_query(query.range(numbered, "k", page_size=page_size))]
    assert got == list(range(95))
    desc = [e["k"] for e in store.query_all(query.all(numbered, "k", "descending", page_size))]
    assert desc == list(range(94, -1, -1))


def test_iter_query_orders(store: tureen.Store, numbered: str) -> None:
    by_name = [e["name"] for e in store.iter_query(query.like(numbered, "name", "n%", page_size=8))]
    assert by_name == sorted(by_name) and len(by_name) == 95
    # Ties on the order path are broken by entry id, so pages never overlap.
    store.alter_soup(numbered, [IndexSpec("k", "integer"), IndexSpec("tie", "integer")])
    for order in ("ascending", "descending"):
        got = list(store.iter_query(query.range(numbered, "tie", order=order, page_size=3)))
        assert len(got) == 95 and len({e["_soupEntryId"] for e in got}) == 95
        ties = [e["tie"] for e in got]
        assert ties == sorted(ties, reverse=(order == "descending"))
        for tie in set(ties):
            ids = [e["_soupEntryId"] for e in got if e["tie"] == tie]
            assert ids == sorted(ids, reverse=(order == "descending")) or ids == sorted(ids)
    by_id = [e["_soupEntryId"] for e in store.iter_query(
        query.all(numbered, "_soupEntryId", "descending", 10))]
    assert by_id == list(range(95, 0, -1))
    by_date = list(store.iter_query(query.all(numbered, "_soupLastModifiedDate", page_size=10)))
    assert len(by_date) == 95


def test_order_by_dates(store: tureen.Store) -> None:
    import time

    store.register_soup("dated", [IndexSpec("name", "string")])
    first = store.upsert("dated", [{"name": "a"}, {"name": "b"}, {"name": "c"}])
    time.sleep(0.01)
    first[0]["name"] = "a2"
    store.upsert("dated", first[0])  # updated last, created first
    by_modified = names(store.query(query.all("dated", "_soupLastModifiedDate", page_size=10)))
    assert by_modified == ["b", "c", "a2"]
    by_created = names(store.query(query.all("dated", "_soupCreatedDate", page_size=10)))
    assert by_created == ["a2", "b", "c"]
    newest = names(store.query(query.all("dated", "_soupLastModifiedDate", "descending", 1)))
    assert newest == ["a2"]


def test_unordered_paging_still_yields_everything_once(store: tureen.Store, numbered: str) -> None:
    spec = query.range(numbered, "k", 10, 59, order_path=None, page_size=7)
    got = [e["k"] for e in store.iter_query(spec)]
    assert sorted(got) == list(range(10, 60))
    assert store.count(spec) == 50
    every = [e["k"] for e in store.iter_query(query.all(numbered, order_path=None, page_size=9))]
    assert sorted(every) == list(range(95))


def test_iter_query_without_page_size_uses_ten(store: tureen.Store, numbered: str) -> None:
    spec: Dict[str, Any] = {"queryType": "range", "soupName": numbered, "indexPath": "k"}
    assert [e["k"] for e in store.iter_query(spec)] == list(range(95))
    spec["pageSize"] = None
    assert len(list(store.iter_query(spec))) == 95


def test_iter_query_is_lazy_and_pages_are_not_snapshots(store: tureen.Store, numbered: str) -> None:
    it = store.iter_query(query.range(numbered, "k", page_size=10))
    first = [next(it)["k"] for _ in range(10)]  # page 0, and not one more read
    assert first == list(range(10))
    # Changes before the next page is read show on it.
    store.remove_by_query(query.range(numbered, "k", 10, 14))
    store.upsert(numbered, [{"k": 1000, "name": "late"}, {"k": 50.5, "name": "mid"}])
    rest = [e["k"] for e in it]
    # 50.5 is indexed as 50 and follows the first 50 (a larger entry id).
    assert rest == list(range(15, 51)) + [50.5] + list(range(51, 95)) + [1000]
    # The same through query(): removing the last entry of page 0 moves the
    # first entry of page 1 onto page 0 (a snapshot would still show it).
    spec = query.range(numbered, "k", page_size=10)
    before = [e["k"] for e in store.iter_query(spec)]
    page0 = store.query(spec, 0)
    store.remove(numbered, [page0[-1]["_soupEntryId"]])
    page1 = [e["k"] for e in store.query(spec, 1)]
    assert page1 == before[11:21]
    assert [e["k"] for e in store.query(spec, 0)] == before[:9] + [before[10]]


def test_iter_query_errors(store: tureen.Store, numbered: str) -> None:
    with pytest.raises(TypeError, match="dict"):
        store.iter_query([("queryType", "all")])  # type: ignore[arg-type]
    with pytest.raises(tureen.QueryError):
        next(store.iter_query(query.all(numbered, page_size=0)))
    with pytest.raises(tureen.NotFoundError):
        list(store.iter_query(query.all("missing")))
    it = store.iter_query(query.all(numbered, page_size=10))
    next(it)
    store.close()
    for _ in range(9):
        next(it)  # the rest of page 0 is already in memory
    with pytest.raises(tureen.MisuseError):
        next(it)


def test_count_matches_the_pages(store: tureen.Store, numbered: str) -> None:
    for spec in (
        query.all(numbered),
        query.range(numbered, "k", 20, 29),
        query.range(numbered, "k", begin=90),
        query.exact(numbered, "k", 3),
        query.like(numbered, "name", "n1%"),
    ):
        assert store.count(spec) == len(list(store.iter_query(spec)))
    assert store.count(query.exact(numbered, "k", 1000)) == 0


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"queryType": "all"}, None),
        ({"queryType": "exact", "soupName": "nums", "indexPath": "nope", "matchKey": 1}, "nope"),
        ({"queryType": "all", "soupName": "nums", "orderPath": "nope"}, "nope"),
        ({"queryType": "all", "soupName": "nums", "order": "up"}, "order"),
        ({"queryType": "all", "soupName": "nums", "pageSize": 0}, "pageSize"),
        ({"queryType": "all", "soupName": "nums", "pageSize": "5"}, "pageSize"),
        ({"queryType": "all", "soupName": "nums", "bogus": 1}, "bogus"),
        ({"queryType": "match", "soupName": "nums"}, "match"),
        ({"queryType": "smart", "smartSql": "delete from {nums}"}, None),
        ({"queryType": "smart", "smartSql": "select 1; select 2"}, None),
        ({"queryType": "all", "soupName": "nums", "selectPaths": "k"}, "selectPaths"),
        ({"queryType": "sideways", "soupName": "nums"}, None),
    ],
)
def test_malformed_specs_are_query_errors(
    store: tureen.Store, numbered: str, spec: Dict[str, Any], message: Any
) -> None:
    for call in (store.query, store.count, store.remove_by_query):
        with pytest.raises(tureen.QueryError) as info:
            call(spec)
        if message:
            assert message in info.value.message
    assert store.count(query.all(numbered)) == 95


def test_spec_must_be_a_mapping(store: tureen.Store, numbered: str) -> None:
    for call in (store.query, store.count, store.remove_by_query, store.iter_query):
        with pytest.raises(TypeError, match="dict"):
            call(json.dumps(query.all(numbered)))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# remove_by_query


def test_remove_by_query_removes_every_match(store: tureen.Store, numbered: str) -> None:
    spec = query.range(numbered, "k", 10, 59, page_size=5)
    assert store.count(spec) == 50
    store.remove_by_query(spec)
    assert store.count(spec) == 0
    left = [e["k"] for e in store.iter_query(query.all(numbered, "k", page_size=100))]
    assert left == list(range(10)) + list(range(60, 95))
    store.remove_by_query(query.exact(numbered, "k", 1000))  # nothing matches: fine
    store.remove_by_query(query.like(numbered, "name", "n9%"))
    assert store.count(query.all(numbered)) == 10 + 30
    store.remove_by_query(query.all(numbered, page_size=1))
    assert store.count(query.all(numbered)) == 0
    assert store.soup_exists(numbered)


# ---------------------------------------------------------------------------
# injection attempts

EVIL = [
    "'",
    '"',
    "\\",
    "'); DROP TABLE soups; --",
    "\"); DELETE FROM entries; --",
    "' OR '1'='1",
    "1 OR 1=1",
    "%",
    "_",
    "%' OR 1=1 --",
    "x]; drop",
    "$.a",
    "';",
    "`",
    "\u0000'",
]


@pytest.fixture
def evil(store: tureen.Store) -> str:
    store.register_soup("evil", [IndexSpec("name", "string"), IndexSpec("k", "integer")])
    store.register_soup("bystander", [IndexSpec("name", "string")])
    store.upsert("bystander", {"name": "safe"})
    store.upsert("evil", [{"name": text, "k": i} for i, text in enumerate(EVIL)])
    store.upsert("evil", [{"name": "plain", "k": 100}, {"name": "other", "k": 101}])
    return "evil"


def _intact(store: tureen.Store) -> None:
    assert store.soup_names() == ["bystander", "evil"]
    assert store.count(query.all("evil")) == len(EVIL) + 2
    assert store.count(query.all("bystander")) == 1
    assert store.index_specs("evil") == [("name", "string"), ("k", "integer")]
    store.check()


@pytest.mark.parametrize("text", EVIL)
def test_quotes_in_match_keys_are_values(store: tureen.Store, evil: str, text: str) -> None:
    assert names(store.query(query.exact(evil, "name", text))) == [text]
    assert store.count(query.range(evil, "name", text, text)) == 1
    assert store.count(query.exact(evil, "k", text)) == 0  # not a number: no integer matches
    _intact(store)


@pytest.mark.parametrize("text", EVIL)
def test_quotes_in_like_keys_are_patterns(store: tureen.Store, evil: str, text: str) -> None:
    got = names(list(store.iter_query(query.like(evil, "name", text))))
    # LIKE wildcards are wildcards (SQLite's LIKE ignores ASCII case), but the
    # pattern is only ever a pattern: what it matches is what LIKE would.
    regex = re.compile(
        "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in text),
        re.IGNORECASE | re.DOTALL,
    )
    every = EVIL + ["plain", "other"]
    assert sorted(got) == sorted(n for n in every if regex.fullmatch(n))
    assert text in got
    if text == "%":
        assert len(got) == len(every)
    _intact(store)


@pytest.mark.parametrize("text", EVIL)
def test_quotes_in_index_paths_are_refused_cleanly(store: tureen.Store, evil: str, text: str) -> None:
    for spec in (
        query.exact(evil, text, "x"),
        query.all(evil, order_path=text),
        query.range(evil, "name" + text),
    ):
        with pytest.raises(tureen.QueryError):
            store.query(spec)
        with pytest.raises(tureen.QueryError):
            store.count(spec)
        with pytest.raises(tureen.QueryError):
            store.remove_by_query(spec)
    with pytest.raises((tureen.InvalidError, tureen.NotFoundError)):
        store.upsert(evil, {"name": "z"}, text)
    with pytest.raises((tureen.InvalidError, tureen.NotFoundError)):
        store.reindex_soup(evil, [text])
    _intact(store)


@pytest.mark.parametrize("text", EVIL)
def test_quotes_in_soup_names_are_refused_cleanly(store: tureen.Store, evil: str, text: str) -> None:
    for name in (text, "evil" + text, text + "evil"):
        if SOUP_NAME.fullmatch(name):
            continue  # "_", "evil_", "_evil" are good names
        if "\u0000" in name:
            with pytest.raises(tureen.InvalidError, match="NUL"):
                store.register_soup(name, [("name", "string")])
            continue
        with pytest.raises(tureen.InvalidError):
            store.register_soup(name, [("name", "string")])
        assert store.soup_exists(name) is False
        for call in (
            lambda: store.query(query.all(name)),
            lambda: store.count(query.exact(name, "name", "x")),
            lambda: store.remove_by_query(query.all(name)),
            lambda: store.upsert(name, {"name": "x"}),
            lambda: store.retrieve(name, [1]),
            lambda: store.remove(name, [1]),
            lambda: store.clear_soup(name),
            lambda: store.drop_soup(name),
            lambda: store.alter_soup(name, [("name", "string")]),
        ):
            with pytest.raises((tureen.NotFoundError, tureen.InvalidError)):
                call()
    _intact(store)


def test_quoted_index_paths_that_are_valid_work_as_paths(store: tureen.Store) -> None:
    # Quotes, parentheses and semicolons are allowed in paths: they must be
    # names, never SQL.
    path = "a'); DROP TABLE soups; --"
    store.register_soup("odd", [IndexSpec(path, "string"), IndexSpec('b"\\', "integer")])
    store.upsert("odd", [{path: "v1", 'b"\\': 1}, {path: "v2", 'b"\\': 2}])
    assert store.index_specs("odd") == [(path, "string"), ('b"\\', "integer")]
    assert [e[path] for e in store.query(query.exact("odd", path, "v2"))] == ["v2"]
    assert store.count(query.range("odd", 'b"\\', 2)) == 1
    store.alter_soup("odd", [IndexSpec(path, "string"), IndexSpec("c'", "string")])
    store.upsert("odd", {path: "v3", "c'": "'"})
    assert store.count(query.exact("odd", "c'", "'")) == 1
    assert store.soup_names() == ["odd"]
    store.check()


# ---------------------------------------------------------------------------
# prepared pages: queries that differ only in their keys share a statement


def test_pages_of_one_shape_with_other_keys_bounds_and_specs(store: tureen.Store) -> None:
    """The store prepares a page's SQL once per query shape. Whatever ran
    before, each query gets its own keys, bounds, order, and the soup as it
    is now: after an alter, and after a drop and a new soup of that name."""
    store.register_soup("n", [("v", "integer"), ("w", "string")])
    store.upsert("n", [{"v": i, "w": "w%02d" % i} for i in range(100)])

    def vs(spec: Dict[str, Any]) -> List[Any]:
        return [e["v"] for e in store.query(spec)]

    for _ in range(2):  # the second round runs on prepared statements
        assert vs(query.range("n", "v", 10, 13)) == [10, 11, 12, 13]
        assert vs(query.range("n", "v", 95)) == [95, 96, 97, 98, 99]
        assert vs(query.range("n", "v", end=2)) == [0, 1, 2]
        assert vs(query.range("n", "v")) == list(range(10))
        assert vs(query.range("n", "v", 50, order="descending")) == list(range(99, 89, -1))
        assert vs(query.range("n", "v", 50, order_path="w", order="descending")) == list(range(99, 89, -1))
        assert vs(query.exact("n", "v", 7)) == [7]
        assert vs(query.exact("n", "v", 8)) == [8]
        assert vs(query.exact("n", "w", "w09")) == [9]
        assert vs(query.range("n", "w", "w97")) == [97, 98, 99]
        assert vs(query.like("n", "w", "w4%", page_size=3)) == [40, 41, 42]
        assert vs(query.all("n", "v", "descending", page_size=2)) == [99, 98]

    # The same shape after an alter: "v" is now a string index.
    store.alter_soup("n", [("v", "string"), ("w", "string")])
    assert vs(query.range("n", "v", "95")) == [95, 96, 97, 98, 99]
    assert vs(query.range("n", "v", "10", "11")) == [10, 11]  # as strings: "10" <= v <= "11"
    assert vs(query.range("n", "v", "9")) == [9] + list(range(90, 99))  # "9" < "90" < ... as strings
    assert vs(query.exact("n", "v", 7)) == [7]

    # A new soup of the same name, with other entries.
    store.drop_soup("n")
    store.register_soup("n", [("v", "integer"), ("w", "string")])
    store.upsert("n", [{"v": i * 10, "w": "x"} for i in range(5)])
    assert vs(query.range("n", "v", 10, 30)) == [10, 20, 30]
    assert vs(query.exact("n", "v", 7)) == []
