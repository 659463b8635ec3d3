"""Full-text ("match") queries: SmartStore's match syntax over full_text
indexes (include/tureen.h, "Queries"), through tureen.query.match."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

import tureen
from tureen import IndexSpec, query

RAW = "5e" * 32

ANIMALS = [
    {"id": 1, "name": "cat", "color": "black"},
    {"id": 2, "name": "cat", "color": "white"},
    {"id": 3, "name": "dog", "color": "black"},
    {"id": 4, "name": "dog", "color": "brown"},
    {"id": 5, "name": "dog", "color": "white"},
]
ANIMAL_SPECS = [IndexSpec("name", "full_text"), IndexSpec("color", "full_text"), IndexSpec("id", "integer")]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "fulltext.db", raw_key=RAW) as s:
        yield s


@pytest.fixture
def animals(store: tureen.Store) -> str:
    store.register_soup("animals", ANIMAL_SPECS)
    store.upsert("animals", ANIMALS)
    return "animals"


def ids(store: tureen.Store, spec: Dict[str, Any]) -> List[int]:
    """The "id" of every entry the query matches, over all pages, sorted."""
    return sorted(e["id"] for e in store.iter_query(spec))


def ids_in_order(store: tureen.Store, spec: Dict[str, Any]) -> List[int]:
    return [e["id"] for e in store.iter_query(spec)]


# ---------------------------------------------------------------------------
# the builder


def test_match_builder_makes_a_plain_dict() -> None:
    assert query.match("animals", None, "black cat") == {
        "queryType": "match",
        "soupName": "animals",
        "indexPath": None,
        "matchKey": "black cat",
        "order": "ascending",
        "pageSize": 10,
    }
    spec = query.match("animals", "color", "b*", order_path="_soupEntryId", order=query.DESCENDING, page_size=3)
    assert spec == {
        "queryType": "match",
        "soupName": "animals",
        "indexPath": "color",
        "matchKey": "b*",
        "orderPath": "_soupEntryId",
        "order": "descending",
        "pageSize": 3,
    }
    assert query.match("s", None, "x", order_path=None)["orderPath"] is None
    assert type(query.match("s", None, "x")) is dict
    assert "match" in query.__all__ and query.match is tureen.query.match


# ---------------------------------------------------------------------------
# the reference's table (SmartStore's full-text documentation), with d) and
# j) corrected: "brown" starts with b too.

TABLE = [
    ("a", None, "black", [1, 3]),
    ("b", None, "black cat", [1]),
    ("c", None, "black OR cat", [1, 2, 3]),
    ("d", None, "b*", [1, 3, 4]),
    ("e", None, "black NOT cat", [3]),
    ("f", None, "{animals:color}:black NOT cat", [3]),
    ("g", "color", "black", [1, 3]),
    ("h", "color", "black cat", []),
    ("i", "color", "black OR cat", [1, 3]),
    ("j", "color", "b*", [1, 3, 4]),
    ("k", "color", "black NOT cat", [1, 3]),
]


@pytest.mark.parametrize("label, path, key, expected", TABLE, ids=[row[0] for row in TABLE])
def test_reference_table(
    store: tureen.Store, animals: str, label: str, path: Optional[str], key: str, expected: List[int]
) -> None:
    spec = query.match(animals, path, key, page_size=2)  # several pages for most rows
    assert ids(store, spec) == expected
    assert store.count(spec) == len(expected)
    # one page holding everything gives the same entries, whole
    page = store.query(query.match(animals, path, key, page_size=100))
    assert sorted(e["id"] for e in page) == expected
    for entry in page:
        assert entry == dict(ANIMALS[entry["id"] - 1], _soupEntryId=entry["id"],
                             _soupLastModifiedDate=entry["_soupLastModifiedDate"])


def test_words_are_case_insensitive_and_punctuation_separates(store: tureen.Store, animals: str) -> None:
    assert ids(store, query.match(animals, None, "BLACK")) == [1, 3]
    assert ids(store, query.match(animals, None, "Black Cat")) == [1]
    assert ids(store, query.match(animals, None, "black,cat")) == [1]
    assert ids(store, query.match(animals, None, "cat:black")) == [1]  # ':' separates: two words
    assert ids(store, query.match(animals, None, "-cat")) == [1, 2]  # '-' is a separator, not NOT
    assert ids(store, query.match(animals, None, "dog -black")) == [3]
    assert ids(store, query.match(animals, None, "or")) == []  # lower case: a word
    assert ids(store, query.match(animals, None, "ca* bl*")) == [1]
    assert ids(store, query.match(animals, None, "cat OR dog NOT black")) == [2, 4, 5]
    assert ids(store, query.match(animals, None, "black OR white NOT cat")) == [3, 5]
    assert ids(store, query.match(animals, None, "dog NOT black NOT white")) == [4]
    assert ids(store, query.match(animals, None, "{animals:name}:cat OR {animals:color}:brown")) == [1, 2, 4]
    assert ids(store, query.match(animals, None, "{animals:name}:c* {animals:color}:w*")) == [2]


def test_match_orders(store: tureen.Store, animals: str) -> None:
    # The default order path is the index path: by color, then by entry id.
    assert ids_in_order(store, query.match(animals, "color", "black OR white")) == [1, 3, 2, 5]
    assert ids_in_order(store, query.match(animals, "color", "black OR white", order=query.DESCENDING)) == [5, 2, 3, 1]
    assert ids_in_order(store, query.match(animals, None, "black OR white", "_soupEntryId", "descending")) == [5, 3, 2, 1]
    assert ids_in_order(store, query.match(animals, None, "dog", "id", "descending", 1)) == [5, 4, 3]
    assert ids(store, query.match(animals, None, "dog", order_path=None, page_size=1)) == [3, 4, 5]


def test_match_with_select_paths(store: tureen.Store, animals: str) -> None:
    spec = query.match(animals, None, "black", order_path="id")
    spec["selectPaths"] = ["name", "color", "id"]
    assert store.query(spec) == [["cat", "black", 1], ["dog", "black", 3]]
    assert list(store.iter_query(dict(spec, pageSize=1))) == [["cat", "black", 1], ["dog", "black", 3]]


# ---------------------------------------------------------------------------
# phrases


@pytest.fixture
def notes(store: tureen.Store) -> str:
    store.register_soup("notes", [IndexSpec("title", "full_text"), IndexSpec("body", "full_text")])
    store.upsert(
        "notes",
        [
            {"n": 1, "title": "fox", "body": "the quick brown fox jumps"},
            {"n": 2, "title": "fox", "body": "brown, quick fox"},
            {"n": 3, "title": "brownie", "body": "a quick brownie recipe"},
            {"n": 4, "title": "quick", "body": "brown bread"},
        ],
    )
    return "notes"


def ns(store: tureen.Store, spec: Dict[str, Any]) -> List[int]:
    return sorted(e["n"] for e in store.iter_query(spec))


def test_phrases(store: tureen.Store, notes: str) -> None:
    assert ns(store, query.match(notes, None, "quick brown")) == [1, 2, 4]  # words: anywhere
    assert ns(store, query.match(notes, None, '"quick brown"')) == [1]  # a phrase: in a row
    assert ns(store, query.match(notes, None, '"brown quick"')) == [2]  # the comma separates
    assert ns(store, query.match(notes, None, '"quick, brown"')) == [1]
    assert ns(store, query.match(notes, None, '"quick brown" OR brownie')) == [1, 3]
    assert ns(store, query.match(notes, None, '"quick brown" jumps')) == [1]
    assert ns(store, query.match(notes, None, 'fox "quick"')) == [1, 2]
    assert ns(store, query.match(notes, None, '"" fox')) == [1, 2]  # an empty phrase is nothing
    assert ns(store, query.match(notes, "body", '"brown bread"')) == [4]
    assert ns(store, query.match(notes, "title", '"brown bread"')) == []
    assert ns(store, query.match(notes, None, "brown*")) == [1, 2, 3, 4]
    assert ns(store, query.match(notes, "title", "brown*")) == [3]
    assert store.count(query.match(notes, None, '"quick brown"')) == 1


# ---------------------------------------------------------------------------
# values, updates, removals, alter


def test_several_values_are_each_searchable(store: tureen.Store) -> None:
    store.register_soup("tagged", [IndexSpec("tags", "full_text"), IndexSpec("parts.w", "full_text")])
    store.upsert(
        "tagged",
        [
            {"n": 1, "tags": ["red", "green"], "parts": [{"w": "alpha"}, {"w": "beta gamma"}]},
            {"n": 2, "tags": "green blue", "parts": {"w": "delta"}},
            {"n": 3, "tags": 42, "parts": [{"x": 1}]},
        ],
    )
    assert ns(store, query.match("tagged", None, "green")) == [1, 2]
    assert ns(store, query.match("tagged", "tags", "red green")) == [1]
    assert ns(store, query.match("tagged", "parts.w", "gamma")) == [1]
    assert ns(store, query.match("tagged", "parts.w", "alpha gamma")) == [1]
    assert ns(store, query.match("tagged", None, "42")) == [3]  # a number as its text
    assert ns(store, query.match("tagged", None, "{tagged:parts.w}:delta")) == [2]


def test_match_follows_updates_and_removals(store: tureen.Store, animals: str) -> None:
    first = store.query(query.match(animals, None, "cat", order_path="id"))[0]
    assert first["id"] == 1
    first["color"] = "green"
    store.upsert(animals, first)
    assert ids(store, query.match(animals, None, "black")) == [3]
    assert ids(store, query.match(animals, None, "green")) == [1]
    assert ids(store, query.match(animals, "color", "green cat")) == []
    assert ids(store, query.match(animals, None, "green cat")) == [1]
    store.upsert(animals, {"id": 3, "name": "dog", "color": "grey"}, external_id_path="id")
    assert ids(store, query.match(animals, None, "black")) == []
    assert ids(store, query.match(animals, None, "g*")) == [1, 3]
    store.remove(animals, [first["_soupEntryId"]])
    assert ids(store, query.match(animals, None, "green")) == []
    assert ids(store, query.match(animals, None, "cat")) == [2]
    # an update that removes the value: no longer found by it
    two = store.query(query.match(animals, None, "cat"))[0]
    del two["name"]
    store.upsert(animals, two)
    assert ids(store, query.match(animals, None, "cat")) == []
    assert ids(store, query.match(animals, None, "white")) == [2, 5]
    store.upsert(animals, {"id": 6, "name": "black cat", "color": None})
    assert ids(store, query.match(animals, "name", "black")) == [6]
    store.clear_soup(animals)
    assert store.count(query.match(animals, None, "dog OR cat OR white")) == 0


def test_match_after_alter(store: tureen.Store, animals: str) -> None:
    store.upsert(animals, {"id": 6, "name": "owl", "color": "brown", "habitat": "forest barn"})
    specs = ANIMAL_SPECS + [IndexSpec("habitat", "full_text")]
    store.alter_soup(animals, specs, reindex=True)
    assert ids(store, query.match(animals, "habitat", "barn")) == [6]
    assert ids(store, query.match(animals, None, "brown barn")) == [6]
    assert ids(store, query.match(animals, None, "b*")) == [1, 3, 4, 6]
    store.upsert(animals, {"id": 7, "name": "bat", "habitat": "barn"})
    assert ids(store, query.match(animals, None, "{animals:habitat}:barn")) == [6, 7]
    # color no longer full_text: it is not searched any more
    store.alter_soup(animals, [IndexSpec("name", "full_text"), IndexSpec("id", "integer")], reindex=True)
    assert ids(store, query.match(animals, None, "b*")) == [7]
    with pytest.raises(tureen.QueryError):
        store.query(query.match(animals, "color", "black"))
    with pytest.raises(tureen.QueryError):
        store.query(query.match(animals, None, "{animals:color}:black"))


# ---------------------------------------------------------------------------
# count and remove_by_query


def test_count_of_a_match_query(store: tureen.Store, animals: str) -> None:
    for _, path, key, expected in TABLE:
        spec = query.match(animals, path, key, page_size=1)
        assert store.count(spec) == len(expected) == len(list(store.iter_query(spec)))


def test_remove_by_query_with_a_match(store: tureen.Store, animals: str) -> None:
    store.register_soup("bystander", [IndexSpec("name", "full_text")])
    store.upsert("bystander", {"name": "white cat"})
    store.remove_by_query(query.match(animals, None, "white", page_size=1))  # every page
    assert ids(store, query.all(animals)) == [1, 3, 4]
    assert store.count(query.match(animals, None, "white")) == 0
    assert ids(store, query.match(animals, None, "cat")) == [1]
    store.remove_by_query(query.match(animals, "color", "b*"))
    assert store.count(query.all(animals)) == 0
    assert store.count(query.match("bystander", None, "white cat")) == 1
    store.remove_by_query(query.match(animals, None, "dog"))  # nothing left: fine
    store.check()


# ---------------------------------------------------------------------------
# refusals

MALFORMED = [
    ('"black', "character 0"),
    ('black "cat', "character 6"),
    ("NOT cat", "character 0"),
    ("cat OR", "character 4"),
    ("OR cat", "character 0"),
    ("NOT", "character 0"),
    ("OR", "character 0"),
    ("cat NOT OR dog", "character 8"),
    ("{animals:nope}:cat", "character 0"),
    ("{other:name}:cat", "character 0"),
    ("{animals:color}:", "character 0"),
    ("{animals:color}black", "character 0"),
    ("{animals", "character 0"),
    ("cat {animals:name", "character 4"),
    ("{employees}", "character 0"),
]


@pytest.mark.parametrize("key, where", MALFORMED)
def test_malformed_keys_are_query_errors_with_the_position(
    store: tureen.Store, animals: str, key: str, where: str
) -> None:
    for call in (store.query, store.count, store.remove_by_query):
        with pytest.raises(tureen.QueryError) as info:
            call(query.match(animals, None, key))
        assert where in info.value.message, info.value.message
    assert store.count(query.all(animals)) == 5


@pytest.mark.parametrize("key", ["", "   ", "***", "%", "\\", "\u0000", '""', "-"])
def test_keys_without_terms_are_query_errors(store: tureen.Store, animals: str, key: str) -> None:
    with pytest.raises(tureen.QueryError, match="no terms"):
        store.query(query.match(animals, None, key))
    assert store.count(query.all(animals)) == 5


@pytest.mark.parametrize("key", ["cat NOT", "cat OR OR dog", "cat OR NOT dog"])
def test_malformed_keys_after_a_term_give_the_position(store: tureen.Store, animals: str, key: str) -> None:
    with pytest.raises(tureen.QueryError) as info:
        store.query(query.match(animals, None, key))
    assert "character" in info.value.message, info.value.message


def test_double_not_is_refused(store: tureen.Store, animals: str) -> None:
    with pytest.raises(tureen.QueryError):
        store.query(query.match(animals, None, "cat NOT NOT dog"))


def test_match_errors(store: tureen.Store, animals: str) -> None:
    store.register_soup("plain", [IndexSpec("k", "string")])
    with pytest.raises(tureen.QueryError, match="full_text"):
        store.query(query.match("plain", None, "x"))
    with pytest.raises(tureen.QueryError, match="full_text"):
        store.query(query.match(animals, "id", "1"))  # an integer index
    with pytest.raises(tureen.QueryError, match="nope"):
        store.query(query.match(animals, "nope", "x"))
    with pytest.raises(tureen.NotFoundError):
        store.query(query.match("missing", None, "x"))
    for key in (5, None, ["cat"], {"a": 1}):
        with pytest.raises(tureen.QueryError, match="matchKey"):
            store.query(query.match(animals, None, key))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# what the header says that the library does not do (yet)


def test_near_is_a_word(store: tureen.Store) -> None:
    store.register_soup("places", [IndexSpec("text", "full_text")])
    store.upsert("places", [{"n": 1, "text": "near the river"}, {"n": 2, "text": "river far away"}])
    assert ns(store, query.match("places", None, "near")) == [1]
    assert ns(store, query.match("places", None, "NEAR")) == [1]
    assert ns(store, query.match("places", None, "river NEAR")) == [1]
    assert ns(store, query.match("places", None, "far NEAR away")) == []  # three words, not an operator


def test_index_path_restricts_qualified_terms(store: tureen.Store, animals: str) -> None:
    spec = query.match(animals, "color", "{animals:name}:cat")
    try:
        got = ids(store, spec)
    except tureen.QueryError:
        return  # refusing is as good
    assert got == []


COMPOSED = [
    # NOT before a phrase: [6] comes back (the entries WITH the phrase)
    ('cat NOT "dark black"', [1, 2]),
    # NOT before a qualified word: nothing comes back
    ("dog NOT {animals:color}:black", [4, 5]),
    ("cat NOT {animals:name}:big", [1, 2]),
    # a qualified phrase: nothing comes back
    ('{animals:name}:"big cat"', [6]),
    ('{animals:color}:"dark black"', [6]),
]


@pytest.mark.parametrize("key, expected", COMPOSED)
def test_not_and_qualifiers_compose_with_phrases(
    store: tureen.Store, animals: str, key: str, expected: List[int]
) -> None:
    store.upsert(animals, {"id": 6, "name": "big cat", "color": "dark black"})
    try:
        got = ids(store, query.match(animals, None, key))
    except tureen.QueryError:
        return  # refusing a combination is acceptable; a wrong answer is not
    assert got == expected
