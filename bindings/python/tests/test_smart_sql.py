"""Smart SQL queries (include/tureen.h, "Queries"): {soup} and {soup:path}
references, joins, aliases, aggregates, args, paging and counting, large
results; and the safety of every string that reaches SQL, for every kind of
query, checked by comparing the whole store before and after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

import tureen
from tureen import IndexSpec, query

RAW = "a7" * 32

EMPLOYEE_SPECS = [
    IndexSpec("firstName", "string"),
    IndexSpec("lastName", "string"),
    IndexSpec("deptCode", "string"),
    IndexSpec("employeeId", "string"),
    IndexSpec("managerId", "string"),
    IndexSpec("salary", "floating"),
]
DEPARTMENT_SPECS = [IndexSpec("deptCode", "string"), IndexSpec("name", "string"), IndexSpec("budget", "integer")]
ANIMAL_SPECS = [IndexSpec("name", "full_text"), IndexSpec("color", "full_text")]

EMPLOYEES = [
    {"firstName": "Christopher", "lastName": "Haas", "deptCode": "A00", "employeeId": "00010",
     "salary": 52750.0, "address": {"zip": "94105", "city": "SF"}, "active": True, "tags": ["ceo"]},
    {"firstName": "Michael", "lastName": "Thompson", "deptCode": "B01", "employeeId": "00020",
     "managerId": "00010", "salary": 41250.0, "address": {"zip": "94105", "city": "SF"}, "active": False},
    {"firstName": "Sally", "lastName": "Kwan", "deptCode": "C01", "employeeId": "00030",
     "managerId": "00010", "salary": 38250.0, "address": {"zip": "10001", "city": "NY"}, "active": True},
    {"firstName": "John", "lastName": "Geyer", "deptCode": "B01", "employeeId": "00040",
     "managerId": "00020", "salary": 40175.0, "address": {"zip": "10001", "city": "NY"},
     "tags": ["a", "b"]},
    {"firstName": "Irving", "lastName": "Stern", "deptCode": "C01", "employeeId": "00050",
     "managerId": "00030", "salary": 32250.0, "address": {"zip": "60601", "city": "CHI"}},
    {"firstName": "Eva", "lastName": "Pulaski", "deptCode": "C01", "employeeId": "00060",
     "managerId": "00030", "salary": 36170.0, "address": {"zip": "60601", "city": "CHI"}},
]
DEPARTMENTS = [
    {"deptCode": "A00", "name": "Spiffy Computer Service", "budget": 70000},
    {"deptCode": "B01", "name": "Planning", "budget": 25000},
    {"deptCode": "C01", "name": "Information Center", "budget": 65000},
]
ANIMALS = [
    {"id": 1, "name": "cat", "color": "black"},
    {"id": 2, "name": "cat", "color": "white"},
    {"id": 3, "name": "dog", "color": "black"},
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "smart.db", raw_key=RAW) as s:
        yield s


@pytest.fixture
def company(store: tureen.Store) -> tureen.Store:
    # employees first: its table is TABLE_1, the target of the injections below
    store.register_soup("employees", EMPLOYEE_SPECS)
    store.register_soup("departments", DEPARTMENT_SPECS)
    store.register_soup("animals", ANIMAL_SPECS)
    store.upsert("employees", EMPLOYEES)
    store.upsert("departments", DEPARTMENTS)
    store.upsert("animals", ANIMALS)
    return store


def rows(store: tureen.Store, sql: str, args: Optional[List[Any]] = None, page_size: int = 1000) -> List[List[Any]]:
    """Every row of the smart query, over all pages."""
    return list(store.iter_query(query.smart(sql, args, page_size)))


# ---------------------------------------------------------------------------
# the builder


def test_smart_builder_makes_a_plain_dict() -> None:
    assert query.smart("select 1") == {"queryType": "smart", "smartSql": "select 1", "pageSize": 10}
    args = ("a", 1, 2.5, True, None)
    spec = query.smart("select ?, ?, ?, ?, ?", args, page_size=5)
    assert spec == {
        "queryType": "smart",
        "smartSql": "select ?, ?, ?, ?, ?",
        "args": ["a", 1, 2.5, True, None],
        "pageSize": 5,
    }
    assert type(spec) is dict and type(spec["args"]) is list
    assert query.smart("select 1", [])["args"] == []
    with pytest.raises(TypeError, match="args"):
        query.smart("select ?", "abc")  # type: ignore[arg-type]
    assert "smart" in query.__all__ and tureen.query.smart is query.smart


# ---------------------------------------------------------------------------
# the reference's examples


def test_basic_select_ordered(company: tureen.Store) -> None:
    got = rows(company, "select {employees:firstName}, {employees:lastName} from {employees} "
                        "order by {employees:lastName}")
    assert got == [["John", "Geyer"], ["Christopher", "Haas"], ["Sally", "Kwan"],
                   ["Eva", "Pulaski"], ["Irving", "Stern"], ["Michael", "Thompson"]]
    got = rows(company, "select {departments:name} from {departments} order by {departments:deptCode}")
    assert got == [["Spiffy Computer Service"], ["Planning"], ["Information Center"]]


def test_queries_that_differ_only_in_normalisation_are_two_queries(company: tureen.Store) -> None:
    """The connection kept its checked Smart SQL and prepared statements by
    the SQL as a String, whose == is canonical equivalence: a query whose
    literal was the NFD spelling of an earlier query's NFC literal ran the
    earlier statement and answered for the other text."""
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    company.upsert("animals", {"id": 4, "name": nfd, "color": "grey"})
    for first, second in [(nfc, nfd), (nfd, nfc)]:
        for text in (first, second):
            assert rows(company, "select '%s'" % text) == [[text]]
            counted = rows(company, "select count(*) from {animals} where {animals:name} = '%s'" % text)
            assert counted == [[1 if text == nfd else 0]], text


def test_join(company: tureen.Store) -> None:
    sql = (
        "select {departments:name}, {employees:firstName} || ' ' || {employees:lastName} "
        "from {employees}, {departments} "
        "where {departments:deptCode} = {employees:deptCode} "
        "order by {departments:name}, {employees:lastName}"
    )
    assert rows(company, sql) == [
        ["Information Center", "Sally Kwan"],
        ["Information Center", "Eva Pulaski"],
        ["Information Center", "Irving Stern"],
        ["Planning", "John Geyer"],
        ["Planning", "Michael Thompson"],
        ["Spiffy Computer Service", "Christopher Haas"],
    ]
    assert company.count(query.smart(sql)) == 6


@pytest.mark.parametrize("as_", [" as", ""])
def test_self_join_with_aliases(company: tureen.Store, as_: str) -> None:
    sql = (
        "select mgr.{employees:lastName}, e.{employees:lastName} "
        "from {employees}%s mgr, {employees}%s e "
        "where mgr.{employees:employeeId} = e.{employees:managerId} "
        "order by mgr.{employees:lastName}, e.{employees:lastName}" % (as_, as_)
    )
    assert rows(company, sql) == [
        ["Haas", "Kwan"], ["Haas", "Thompson"], ["Kwan", "Pulaski"], ["Kwan", "Stern"], ["Thompson", "Geyer"],
    ]
    # aliases reach non-indexed paths and whole entries too
    got = rows(company, "select mgr.{employees:address.city}, e.{employees:_soup} "
                        "from {employees} mgr join {employees} e on e.{employees:managerId} = mgr.{employees:employeeId} "
                        "where e.{employees:lastName} = 'Geyer'")
    assert len(got) == 1 and got[0][0] == "SF"
    assert got[0][1]["lastName"] == "Geyer" and got[0][1]["address"] == {"zip": "10001", "city": "NY"}


def test_aggregates_and_group_by(company: tureen.Store) -> None:
    sql = (
        "select {employees:deptCode}, count(*), sum({employees:salary}), avg({employees:salary}), "
        "min({employees:salary}), max({employees:salary}) "
        "from {employees} group by {employees:deptCode} order by {employees:deptCode}"
    )
    assert rows(company, sql) == [
        ["A00", 1, 52750.0, 52750.0, 52750.0, 52750.0],
        ["B01", 2, 81425.0, 40712.5, 40175.0, 41250.0],
        ["C01", 3, 106670.0, pytest.approx(106670.0 / 3), 32250.0, 38250.0],
    ]
    assert company.count(query.smart(sql)) == 3
    having = rows(company, "select {employees:deptCode}, count(*) c from {employees} "
                           "group by {employees:deptCode} having count(*) > 1 order by c desc")
    assert having == [["C01", 3], ["B01", 2]]
    assert rows(company, "select count(*), sum({departments:budget}) from {departments}") == [[3, 160000]]
    joined = rows(company, "select {departments:name}, count({employees:_soupEntryId}) "
                           "from {departments} left join {employees} on {employees:deptCode} = {departments:deptCode} "
                           "group by {departments:name} order by 2 desc, 1")
    assert joined == [["Information Center", 3], ["Planning", 2], ["Spiffy Computer Service", 1]]


# ---------------------------------------------------------------------------
# references


def test_whole_entries_as_dicts(company: tureen.Store) -> None:
    got = rows(company, "select {employees:lastName}, {employees:_soup} from {employees} "
                        "order by {employees:_soupEntryId}")
    stored = company.retrieve("employees", list(range(1, 7)))
    assert [r[1] for r in got] == stored
    for (last, entry), original in zip(got, EMPLOYEES):
        assert isinstance(entry, dict) and last == entry["lastName"]
        assert {k: v for k, v in entry.items() if not k.startswith("_soup")} == original
    both = rows(company, "select {departments:_soup}, {employees:_soup} from {employees}, {departments} "
                         "where {departments:deptCode} = {employees:deptCode} and {employees:lastName} = ?", ["Haas"])
    assert both[0][0]["name"] == "Spiffy Computer Service" and both[0][1]["firstName"] == "Christopher"


def test_entry_id_and_dates(company: tureen.Store) -> None:
    got = rows(company, "select {employees:_soupEntryId}, {employees:_soupLastModifiedDate}, "
                        "{employees:_soupCreatedDate}, {employees:_soup} from {employees} order by 1")
    assert [r[0] for r in got] == [1, 2, 3, 4, 5, 6]
    for entry_id, modified, created, entry in got:
        assert entry["_soupEntryId"] == entry_id and entry["_soupLastModifiedDate"] == modified
        assert isinstance(created, int) and created <= modified


def test_non_indexed_paths(company: tureen.Store) -> None:
    # select, where, order by and group by all read paths with no index
    assert rows(company, "select {employees:address.zip}, count(*) from {employees} "
                         "group by {employees:address.zip} order by {employees:address.zip}") == [
        ["10001", 2], ["60601", 2], ["94105", 2]]
    assert rows(company, "select {employees:lastName} from {employees} where {employees:address.city} = ? "
                         "order by {employees:address.zip} desc, {employees:lastName}", ["NY"]) == [["Geyer"], ["Kwan"]]
    assert rows(company, "select {employees:lastName} from {employees} "
                         "order by {employees:address.city}, {employees:lastName} desc") == [
        ["Stern"], ["Pulaski"], ["Kwan"], ["Geyer"], ["Thompson"], ["Haas"]]
    # objects and arrays come back as JSON values, booleans as 1/0, missing as null
    got = rows(company, "select {employees:address}, {employees:tags}, {employees:active}, {employees:nope}, "
                        "{employees:nope.deeper} from {employees} order by {employees:_soupEntryId}")
    assert got[0] == [{"zip": "94105", "city": "SF"}, ["ceo"], 1, None, None]
    assert got[1] == [{"zip": "94105", "city": "SF"}, None, 0, None, None]
    assert got[3][1] == ["a", "b"]
    assert rows(company, "select count(*) from {employees} where {employees:active} = ?", [True]) == [[2]]
    assert rows(company, "select count(*) from {employees} where {employees:active} is null") == [[3]]


def test_indexed_paths_added_by_an_alter(company: tureen.Store) -> None:
    # a computed index (alter with reindex) and a kept one, through Smart SQL
    company.alter_soup("departments", DEPARTMENT_SPECS + [IndexSpec("budget", "string")], reindex=True)
    assert rows(company, "select {departments:deptCode} from {departments} where {departments:budget} > 60000 "
                         "order by 1") == [["A00"], ["C01"]]
    company.alter_soup("employees", EMPLOYEE_SPECS + [IndexSpec("address.zip", "string")], reindex=True)
    assert rows(company, "select {employees:address.zip}, count(*) from {employees} group by 1 order by 1") == [
        ["10001", 2], ["60601", 2], ["94105", 2]]
    company.upsert("employees", {"lastName": "New", "address": {"zip": "00001"}})
    assert rows(company, "select {employees:lastName} from {employees} where {employees:address.zip} = '00001'") == [
        ["New"]]


def test_braces_in_literals_and_comments_are_left_alone(company: tureen.Store) -> None:
    assert rows(company, "select '{employees}', '{nosoup:x}', \"{still}\" /* {nosoup} */ -- {x}\n") == [
        ["{employees}", "{nosoup:x}", "{still}"]]
    assert rows(company, "select 'it''s {employees:lastName}'") == [["it's {employees:lastName}"]]
    assert rows(company, "select count(*) from {employees} where {employees:lastName} != '}{'") == [[6]]


def test_full_text_soups_are_readable(company: tureen.Store) -> None:
    assert rows(company, "select {animals:name}, {animals:id} from {animals} where {animals:color} = 'black' "
                         "order by {animals:id}") == [["cat", 1], ["dog", 3]]


def test_smart_sql_sees_changes(company: tureen.Store) -> None:
    sql = "select count(*) from {employees} where {employees:deptCode} = ?"
    assert rows(company, sql, ["C01"]) == [[3]]
    company.upsert("employees", {"lastName": "Added", "deptCode": "C01"})
    assert rows(company, sql, ["C01"]) == [[4]]
    company.remove_by_query(query.exact("employees", "deptCode", "C01"))
    assert rows(company, sql, ["C01"]) == [[0]]


# ---------------------------------------------------------------------------
# args


def test_args_are_bound_values(company: tureen.Store) -> None:
    got = rows(company, "select ?, ?, ?, ?, ?, ?, ?, typeof(?)",
               ["x' OR '1'='1", 7, 2.5, True, False, None, "", None])
    assert got == [["x' OR '1'='1", 7, 2.5, 1, 0, None, "", "null"]]
    assert rows(company, "select count(*) from {employees} where {employees:lastName} = ?", ["x' OR '1'='1"]) == [[0]]
    assert rows(company, "select {employees:lastName} from {employees} where {employees:salary} > ? "
                         "and {employees:deptCode} in (?, ?) order by 1", [40000, "A00", "B01"]) == [
        ["Geyer"], ["Haas"], ["Thompson"]]
    assert rows(company, "select {employees:lastName} from {employees} where {employees:managerId} is ?", [None]) == [
        ["Haas"]]
    assert rows(company, "select {employees:lastName} from {employees} where {employees:lastName} like ? "
                         "order by 1", ["%a%"]) == [["Haas"], ["Kwan"], ["Pulaski"]]
    assert rows(company, "select ?1 || ?1", ["ab"]) == [["abab"]]
    assert rows(company, "select ?", [2**63 - 1]) == [[2**63 - 1]]
    assert rows(company, "select ?", ["\u00e9\u4e2d\U0001f600"]) == [["\u00e9\u4e2d\U0001f600"]]
    assert rows(company, "select length(?)", ["a\u0000b"]) in ([[3]], [[1]])  # NUL inside a bound string


def test_args_errors(company: tureen.Store) -> None:
    with pytest.raises(tureen.QueryError, match="1 parameter"):
        company.query(query.smart("select ?"))
    with pytest.raises(tureen.QueryError, match="parameter"):
        company.query(query.smart("select ?", [1, 2]))
    with pytest.raises(tureen.QueryError, match="parameter"):
        company.count(query.smart("select 1", [1]))
    for bad in ([[1]], [{"a": 1}]):
        with pytest.raises(tureen.QueryError, match="args"):
            company.query(query.smart("select ?", bad))
    with pytest.raises(tureen.QueryError, match="args"):
        company.query({"queryType": "smart", "smartSql": "select ?", "args": "x"})
    with pytest.raises(tureen.QueryError, match="args"):
        company.query(dict(query.all("employees"), args=[1]))


# ---------------------------------------------------------------------------
# subqueries


def test_subqueries(company: tureen.Store) -> None:
    above_average = rows(company, "select {employees:lastName} from {employees} where {employees:salary} > "
                                  "(select avg({employees:salary}) from {employees}) order by 1")
    assert above_average == [["Geyer"], ["Haas"], ["Thompson"]]
    rich = rows(company, "select {employees:lastName} from {employees} where {employees:deptCode} in "
                         "(select {departments:deptCode} from {departments} where {departments:budget} > ?) "
                         "order by 1", [60000])
    assert rich == [["Haas"], ["Kwan"], ["Pulaski"], ["Stern"]]
    managers = rows(company, "select m.{employees:lastName} from {employees} m where exists "
                             "(select 1 from {employees} e where e.{employees:managerId} = m.{employees:employeeId}) "
                             "order by 1")
    assert managers == [["Haas"], ["Kwan"], ["Thompson"]]
    nested = rows(company, "select d, n from (select {employees:deptCode} d, count(*) n from {employees} group by d) "
                           "where n > 1 order by d")
    assert nested == [["B01", 2], ["C01", 3]]
    assert rows(company, "with recursive c(x) as (select 1 union all select x + 1 from c where x < 3) "
                         "select x, (select count(*) from {departments}) from c") == [[1, 3], [2, 3], [3, 3]]


# ---------------------------------------------------------------------------
# paging and counting


def test_paging_a_smart_query(company: tureen.Store) -> None:
    sql = "select {employees:lastName} from {employees} order by {employees:lastName}"
    everything = rows(company, sql)
    assert len(everything) == 6
    for page_size in (1, 2, 4, 5, 6, 7, 100):
        spec = query.smart(sql, page_size=page_size)
        assert list(company.iter_query(spec)) == everything
        pages = [company.query(spec, p) for p in range(-(-6 // page_size) + 1)]
        assert [r for page in pages for r in page] == everything
        assert pages[-1] == []
        assert company.count(spec) == 6
    assert list(company.query_all(query.smart("select 1 where 0"))) == []
    assert company.count(query.smart("select 1 where 0")) == 0
    with pytest.raises(tureen.QueryError, match="page"):
        company.query(query.smart(sql), -1)


def test_count_of_smart_queries(company: tureen.Store) -> None:
    assert company.count(query.smart("select * from {employees}")) == 6
    assert company.count(query.smart("select * from {employees} where {employees:salary} > ?", [40000])) == 3
    assert company.count(query.smart("select {employees:deptCode} from {employees} group by 1")) == 3
    assert company.count(query.smart("select count(*) from {employees}")) == 1  # one row
    assert company.count(query.smart("select * from {employees}, {departments}")) == 18


def test_smart_queries_are_not_removed_by(company: tureen.Store) -> None:
    with pytest.raises(tureen.QueryError, match="remove_by_query"):
        company.remove_by_query(query.smart("select {employees:_soupEntryId} from {employees}"))
    with pytest.raises(tureen.QueryError, match="selectPaths"):
        company.query(dict(query.smart("select 1"), selectPaths=["lastName"]))
    assert company.count(query.all("employees")) == 6


@pytest.mark.parametrize(
    "sql, message",
    [
        ("select count(*) from {nosoup}", "character 21"),
        ("select {Employees:lastName} from {employees}", "character 7"),
        ("select {employees:} from {employees}", "character 7"),
        ("select {employees:a..b} from {employees}", "character 7"),
        ("select {employees:lastName from {employees}", "character 7"),
        ("select {employees", "character 7"),
        ("select 'unterminated", "character 7"),
        ("select 1 /* unterminated", "character 9"),
        ("select nonsense from", None),
        ("", None),
        ("   ", None),
    ],
)
def test_malformed_smart_sql(company: tureen.Store, sql: str, message: Optional[str]) -> None:
    for call in (company.query, company.count):
        with pytest.raises(tureen.QueryError) as info:
            call(query.smart(sql))
        if message:
            assert message in info.value.message, info.value.message
    with pytest.raises(tureen.QueryError):
        next(company.iter_query(query.smart(sql)))


# ---------------------------------------------------------------------------
# large results


def test_a_large_smart_result_in_one_page(store: tureen.Store) -> None:
    store.register_soup("tiny", [IndexSpec("k", "integer")])
    store.upsert("tiny", {"k": 1})
    sql = ("with recursive c(x) as (select 1 union all select x + 1 from c where x < 100000) "
           "select x, 'row ' || x, (select count(*) from {tiny}) from c")
    page = store.query(query.smart(sql, page_size=100000))
    assert len(page) == 100000
    assert page[0] == [1, "row 1", 1] and page[-1] == [100000, "row 100000", 1]
    assert [r[0] for r in page] == list(range(1, 100001))
    assert store.query(query.smart(sql, page_size=100000), 1) == []
    assert store.count(query.smart(sql)) == 100000
    assert sum(1 for _ in store.iter_query(query.smart(sql, page_size=100000))) == 100000


def test_iter_query_over_ten_thousand_entries(store: tureen.Store) -> None:
    store.register_soup("big", [IndexSpec("k", "integer"), IndexSpec("name", "string")])
    store.upsert("big", [{"k": k, "name": "n%05d" % k} for k in range(10000)], return_result=False)
    entries = list(store.iter_query(query.all("big", "k", page_size=100)))
    assert [e["k"] for e in entries] == list(range(10000))
    assert len({e["_soupEntryId"] for e in entries}) == 10000
    smart_rows = list(store.iter_query(query.smart(
        "select {big:k}, {big:name} from {big} order by {big:k}", page_size=100)))
    assert smart_rows == [[k, "n%05d" % k] for k in range(10000)]
    unordered = list(store.iter_query(query.smart("select {big:_soupEntryId} from {big}", page_size=100)))
    assert sorted(r[0] for r in unordered) == list(range(1, 10001))
    assert store.count(query.smart("select * from {big}")) == 10000


# ---------------------------------------------------------------------------
# safety: every string that reaches SQL

EVIL = [
    "x' OR '1'='1",
    "'); DROP TABLE TABLE_1; --",
    "\"); DELETE FROM TABLE_1; --",
    '"',
    "'",
    "%",
    "_",
    "\\",
    "{employees}",
    "{employees:_soup}",
    "1 OR 1=1",
    "1; DELETE FROM TABLE_1",
    "*/ DELETE FROM TABLE_1 /*",
    "]; DROP TABLE TABLE_1; --",
    "`",
    "?",
    ":x",
    "\u0000' OR 1=1",
]


def snapshot(store: tureen.Store) -> Dict[str, Any]:
    """Everything the public API can see: soups, their index specs, counts
    and entries, and what the full-text index finds."""
    store.check()
    seen: Dict[str, Any] = {
        name: (
            store.index_specs(name),
            store.count(query.all(name)),
            list(store.iter_query(query.all(name, "_soupEntryId", page_size=1000))),
        )
        for name in store.soup_names()
    }
    seen["full text"] = [
        store.count(query.match("animals", None, key)) for key in ("cat", "dog", "black", "white OR dog")
    ]
    return seen


@pytest.fixture
def guarded(company: tureen.Store) -> Iterator[tureen.Store]:
    """The company store, checked unchanged after the test."""
    before = snapshot(company)
    assert sorted(before) == ["animals", "departments", "employees", "full text"]
    assert before["full text"] == [2, 1, 2, 2]
    yield company
    assert snapshot(company) == before


def harmless(call: Any, *args: Any) -> Any:
    """The call's result, or None when it is refused with a clean error."""
    try:
        return call(*args)
    except (tureen.QueryError, tureen.InvalidError):
        return None


@pytest.mark.parametrize("text", EVIL)
def test_evil_keys(guarded: tureen.Store, text: str) -> None:
    s = guarded
    # exact keys: a value, found by nothing (string and floating indexes)
    assert s.query(query.exact("employees", "lastName", text)) == []
    assert s.count(query.exact("employees", "salary", text)) == 0
    assert s.count(query.exact("departments", "budget", text)) == 0
    # range keys
    assert s.count(query.range("employees", "lastName", text, text)) == 0
    assert s.count(query.range("employees", "salary", text, None)) in (0, 6)
    assert s.count(query.range("employees", "salary", None, text)) in (0, 6)
    got = [e["lastName"] for e in s.iter_query(query.range("employees", "lastName", begin=text))]
    assert got == sorted(e["lastName"] for e in EMPLOYEES if e["lastName"] >= text)
    # like keys: a pattern, never SQL
    like = [e["lastName"] for e in s.iter_query(query.like("employees", "lastName", text))]
    if text == "%":
        assert len(like) == 6
    else:
        assert like == []
    # full-text keys: a QueryError, or words no entry holds
    assert harmless(s.query, query.match("animals", None, text)) in (None, [])
    assert harmless(s.count, query.match("animals", "color", text)) in (None, 0)


@pytest.mark.parametrize("text", EVIL)
def test_evil_paths_and_soup_names(guarded: tureen.Store, text: str) -> None:
    s = guarded
    for spec in (
        query.exact("employees", text, "x"),
        query.range("employees", "lastName" + text),
        query.like("employees", text, "%"),
        query.all("employees", order_path=text),
        query.match("animals", text, "cat"),
    ):
        for call in (s.query, s.count, s.remove_by_query):
            with pytest.raises(tureen.QueryError):
                call(spec)
    # selectPaths: a QueryError, or null for a path no entry has
    spec = dict(query.all("employees", "_soupEntryId"), selectPaths=[text, "lastName"])
    got = harmless(s.query, spec)
    assert got is None or [r[0] for r in got] == [None] * 6
    # soup names: not found (or refused), in every call taking one
    for call in (
        lambda: s.query(query.all(text)),
        lambda: s.count(query.exact(text, "lastName", "x")),
        lambda: s.remove_by_query(query.all(text)),
        lambda: s.query(query.match(text, None, "x")),
        lambda: s.upsert(text, {"a": 1}),
        lambda: s.retrieve(text, [1]),
        lambda: s.remove(text, [1]),
        lambda: s.clear_soup(text),
        lambda: s.drop_soup(text),
        lambda: s.index_specs(text),
        lambda: s.alter_soup(text, [("a", "string")]),
        lambda: s.reindex_soup(text, ["a"]),
    ):
        with pytest.raises((tureen.NotFoundError, tureen.InvalidError)):
            call()
    assert harmless(s.soup_exists, text) in (False, None)  # None: a NUL, refused
    # in Smart SQL: a soup reference, a path reference, aliases
    with pytest.raises(tureen.QueryError):
        s.query(query.smart("select count(*) from {%s}" % text))
    got = harmless(s.query, query.smart("select {employees:%s} from {employees}" % text, page_size=100))
    assert got is None or got == [[None]] * 6


@pytest.mark.parametrize("text", EVIL)
def test_evil_external_ids_and_id_lists(guarded: tureen.Store, text: str) -> None:
    s = guarded
    # an external id value is data: the second upsert updates the first
    first = s.upsert("employees", {"employeeId": text, "lastName": "Evil", "v": 1}, "employeeId")
    second = s.upsert("employees", {"employeeId": text, "lastName": "Evil", "v": 2}, "employeeId")
    assert second["_soupEntryId"] == first["_soupEntryId"]
    assert s.query(query.exact("employees", "employeeId", text)) == [second]
    assert s.count(query.all("employees")) == 7
    s.remove("employees", [first["_soupEntryId"]])
    with pytest.raises(tureen.InvalidError):  # a number index cannot take it
        s.upsert("departments", {"deptCode": "Z", "budget": text}, "budget")
    # ids lists: integers only
    for ids in ([text], [1, text], [text, 2]):
        with pytest.raises(tureen.InvalidError):
            s.retrieve("employees", ids)
        with pytest.raises(tureen.InvalidError):
            s.remove("employees", ids)


@pytest.mark.parametrize("text", EVIL)
def test_evil_smart_sql_and_args(guarded: tureen.Store, text: str) -> None:
    s = guarded
    # the text as the whole Smart SQL: never a statement that runs
    for call in (s.query, s.count):
        with pytest.raises(tureen.QueryError):
            call(query.smart(text))
    # as args: values
    assert s.query(query.smart("select ?", [text])) == [[text]]
    assert s.count(query.smart("select * from {employees} where {employees:lastName} = ?", [text])) == 0
    assert s.count(query.smart("select * from {employees} where {employees:address.city} = ?", [text])) == 0
    n = s.count(query.smart("select * from {employees} where {employees:lastName} like ?", [text]))
    assert n == (6 if text == "%" else 0)


REFUSED = [
    "insert into {employees} (soup) values ('{}')",
    "insert into TABLE_1 (soup) values ('{}')",
    "replace into {employees} (id, soup) values (1, '{}')",
    "update {employees} set soup = '{}'",
    "update TABLE_1 set soup = '{}' where 1 = 1",
    "delete from {employees}",
    "delete from TABLE_1",
    "drop table {employees}",
    "drop table TABLE_1",
    "drop table tureen_soups",
    "alter table {employees} rename to gone",
    "create table evil (x)",
    "create temp table evil (x)",
    "create view evil as select 1",
    "create index evil on TABLE_1 (soup)",
    "create trigger evil after insert on TABLE_1 begin delete from TABLE_1; end",
    "attach database ':memory:' as evil",
    "attach ':memory:' as evil",
    "detach database main",
    "pragma user_version",
    "pragma user_version = 7",
    "pragma writable_schema = 1",
    "pragma table_info(TABLE_1)",
    "pragma main.journal_mode = delete",
    "vacuum",
    "reindex",
    "analyze",
    "begin",
    "commit",
    "rollback",
    "savepoint s",
    "release s",
    "select 1; delete from {employees}",
    "select 1; select 2",
    "select * from {employees}; drop table TABLE_1",
    "select * from {employees} where 1 = 1; delete from {employees} --",
    "with t as (select 1) delete from {employees}",
    "with t as (select 1) insert into {employees} (soup) select '{}' from t",
    "with t as (select 1) update {employees} set soup = '{}'",
    "select * from (delete from {employees})",
    "select (select count(*) from (update {employees} set soup = 'x'))",
    "select * from {employees} where {employees:_soupEntryId} in (delete from {employees})",
    "select load_extension('libevil.so')",
    "select fts3_tokenizer('evil', x'0000000000000000')",
    "insert into TABLE_3_fts (TABLE_3_fts) values ('optimize')",
    # what FTS4 asks while it connects a table: allowed there, refused here
    "pragma page_size",
    "pragma main.page_size",
    "update sqlite_master set sql = ''",
    "update sqlite_master set type = 'table' where rowid = 1",
]


@pytest.mark.parametrize("sql", REFUSED)
def test_smart_sql_may_only_read(guarded: tureen.Store, sql: str) -> None:
    s = guarded
    for call in (s.query, s.count, s.remove_by_query):
        with pytest.raises(tureen.QueryError):
            call(query.smart(sql))
    with pytest.raises(tureen.QueryError):
        list(s.iter_query(query.smart(sql)))


@pytest.mark.parametrize(
    "sql, word",
    [
        ("pragma page_size", "PRAGMA"),
        ("  /* a comment */ -- and another\n\tPRAGMA main.page_size", "PRAGMA"),
        ("explain select 1", "EXPLAIN"),
        ("delete from {employees}", "DELETE"),
        ("vacuum", "VACUUM"),
    ],
)
def test_smart_sql_that_is_no_select_says_so(guarded: tureen.Store, sql: str, word: str) -> None:
    """Before, "pragma page_size" failed with "no such table: pragma"."""
    for call in (guarded.query, guarded.count):
        with pytest.raises(tureen.QueryError) as info:
            call(query.smart(sql))
        assert "must be a single SELECT" in info.value.message and word in info.value.message, info.value.message


def test_a_long_first_word_is_named_in_32_letters(guarded: tureen.Store) -> None:
    """The refusal names the first word, cut at 32 letters (no keyword is
    longer): a caller's 100,000-letter word does not come back whole."""
    sql = " /* c */ " + "x" * 100_000 + " from {employees}"
    for call in (guarded.query, guarded.count):
        with pytest.raises(tureen.QueryError) as info:
            call(query.smart(sql))
        m = info.value.message
        assert "must be a single SELECT" in m and "X" * 32 in m and "X" * 33 not in m and len(m) < 300, m[:400]


def test_smart_sql_may_start_with_comments_with_or_values(guarded: tureen.Store) -> None:
    assert guarded.query(query.smart(" -- why\n /* how */ select 1")) == [[1]]
    assert guarded.query(query.smart("with t(x) as (select 2) select x from t")) == [[2]]
    assert guarded.query(query.smart("values (3)")) == [[3]]
    assert guarded.query(query.smart("SeLeCt 4")) == [[4]]


@pytest.mark.parametrize(
    "sql",
    [
        "select * from {employees} where 1=1; --",
        "select * from {employees} where 1=1;",
        "select * from {employees} -- ; delete from {employees}",
        "select 1 /* ; delete from {employees} */",
        "select '; delete from {employees}; --'",
        "select \"; drop table TABLE_1\"",
        "select * from {employees} where {employees:lastName} = 'x' or '1'='1'",
        "select count(*) from TABLE_1",
        "select name from sqlite_master",
        "select * from {employees} -- {employees:_soup}\n where 0",
    ],
)
def test_odd_smart_sql_is_refused_or_harmless(guarded: tureen.Store, sql: str) -> None:
    harmless(guarded.query, query.smart(sql, page_size=100))
    harmless(guarded.count, query.smart(sql))


def test_a_soups_full_text_table_reads_in_smart_sql(tmp_path: Path) -> None:
    """FTS4 connects its table inside the first statement naming it on a
    connection. Before, the read-only guard refused what it asks then, so
    this failed ("vtable constructor failed") unless a match query had run
    on that connection first."""
    path = tmp_path / "fts.db"
    with tureen.Store.open(path, raw_key=RAW) as s:
        s.register_soup("animals", ANIMAL_SPECS)
        s.upsert("animals", ANIMALS)
    black = ("select {animals:id} from {animals}, {animals}_fts where {animals}_fts.docid = {animals:_soupEntryId}"
             " and {animals}_fts match 'black' order by {animals:id}")
    with tureen.Store.open(path, raw_key=RAW) as s:
        assert rows(s, black) == [[1], [3]]
        assert s.count(query.smart("select * from {animals}_fts")) == 3
        assert rows(s, "select docid from TABLE_1_fts where TABLE_1_fts match 'white'") == [[2]]
        # A schema change makes each connection read the schema again, and
        # connect the table again inside a statement's re-prepare.
        s.register_soup("more", [IndexSpec("k", "string")])
        assert rows(s, black) == [[1], [3]]
        assert rows(s, "select docid from {animals}_fts where {animals}_fts match 'dog'") == [[3]]


def test_blobs_that_are_not_json_become_hex(company: tureen.Store) -> None:
    assert rows(company, "select x'0102ff', zeroblob(2)") == [["0102ff", "0000"]]


@pytest.mark.parametrize(
    "sql, args",
    [
        ("select x'00544A534F4E00015D5D'", None),
        ("select x'00544A534F4E0001ff'", None),
        ("select cast(? as blob)", ["\u0000TJSON\u0000\u0001]]"]),
        ("select tureen_entry('}}}', 1, 1)", None),
        ("select tureen_entry(?, 1, 1)", ['{"a":1}]]']),
        ("select tureen_entry({employees:_soup}, 1, 1) from {employees}", None),
    ],
)
def test_results_are_always_json(company: tureen.Store, sql: str, args: Optional[List[Any]]) -> None:
    try:
        got = company.query(query.smart(sql, args, page_size=100))
    except tureen.QueryError:
        return  # refusing is fine; malformed JSON is not
    assert isinstance(got, list) and all(isinstance(r, list) for r in got)


@pytest.mark.parametrize(
    "sql",
    [
        "select {employees:lastName} from {employees} -- a comment",
        "select 1\n-- a comment",
        "select {employees:lastName} from {employees};",
    ],
)
def test_a_trailing_comment_or_semicolon_is_one_select(company: tureen.Store, sql: str) -> None:
    got = company.query(query.smart(sql, page_size=100))
    assert len(got) in (1, 6)
    assert company.count(query.smart(sql)) == len(got)
