import XCTest
import Glibc
@testable import TureenStore
@testable import TureenCore

/// The reference's Smart SQL examples (employees and departments), and what
/// Tureen adds: non-indexed paths, _soup as an object, args, and refusals.
final class SmartSQLTests: XCTestCase {
    var dir = ""
    var store: Store!

    override func setUpWithError() throws {
        dir = makeTestDirectory()
        store = try Store.open(path: dir + "/e.db", options: try StoreOptions.parseOpen(#"{"unencrypted":true}"#))
        try store.registerSoup("employees", specs: ["firstName", "lastName", "deptCode", "employeeId", "managerId"].map {
            IndexSpec(path: $0, type: .string)
        } + [IndexSpec(path: "salary", type: .integer)])
        try store.registerSoup("departments", specs: [IndexSpec(path: "name", type: .string), IndexSpec(path: "deptCode", type: .string)])
        _ = try store.upsert(soup: "employees", entries: """
            [{"firstName":"Ada","lastName":"Lovelace","deptCode":"ENG","employeeId":"1","salary":300,"address":{"zip":"10001"}},
             {"firstName":"Alan","lastName":"Turing","deptCode":"ENG","employeeId":"2","managerId":"1","salary":200,"address":{"zip":"10002"}},
             {"firstName":"Grace","lastName":"Hopper","deptCode":"OPS","employeeId":"3","managerId":"1","salary":250,"address":{"zip":"10001"}}]
            """, externalIdPath: nil)
        _ = try store.upsert(soup: "departments", entries: #"[{"name":"Engineering","deptCode":"ENG"},{"name":"Operations","deptCode":"OPS"}]"#, externalIdPath: nil)
    }

    override func tearDown() {
        try? store.close()
        removeTestDirectory(dir)
    }

    private func rows(_ sql: String, args: [JSON]? = nil, page: Int = 0, pageSize: Int = 50) throws -> JSON {
        var spec = JSONObject([("queryType", .string("smart")), ("smartSql", .string(sql)), ("pageSize", .int(Int64(pageSize)))])
        if let a = args { spec["args"] = .array(a) }
        let out = try store.query(try QuerySpec.parse(JSONWriter.string(.object(spec))), pageIndex: page)
        return try JSONParser.parse(String(decoding: out, as: UTF8.self))
    }

    private func queryError(_ sql: String, _ needle: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try rows(sql), sql, file: file, line: line) { e in
            XCTAssertEqual((e as? TureenError)?.code, .query, "\(sql): \(e)", file: file, line: line)
            if let n = needle { XCTAssertTrue("\(e)".contains(n), "\(e) lacks \(n)", file: file, line: line) }
        }
    }

    func testReferenceExamples() throws {
        XCTAssertEqual(try rows("select count(*) from {employees}"), try JSONParser.parse("[[3]]"))
        XCTAssertEqual(try rows("select {employees:firstName}, {employees:lastName} from {employees} order by {employees:lastName}"),
                       try JSONParser.parse(#"[["Grace","Hopper"],["Ada","Lovelace"],["Alan","Turing"]]"#))
        XCTAssertEqual(try rows("select {departments:name} from {departments} order by {departments:deptCode}"),
                       try JSONParser.parse(#"[["Engineering"],["Operations"]]"#))
        XCTAssertEqual(try rows("""
            select {departments:name}, {employees:firstName} || ' ' || {employees:lastName}
            from {employees}, {departments}
            where {departments:deptCode} = {employees:deptCode}
            order by {departments:name}, {employees:lastName}
            """), try JSONParser.parse(#"[["Engineering","Ada Lovelace"],["Engineering","Alan Turing"],["Operations","Grace Hopper"]]"#))
        XCTAssertEqual(try rows("""
            select mgr.{employees:lastName}, e.{employees:lastName}
            from {employees} as mgr, {employees} as e
            where mgr.{employees:employeeId} = e.{employees:managerId} order by 2
            """), try JSONParser.parse(#"[["Lovelace","Hopper"],["Lovelace","Turing"]]"#))
        XCTAssertEqual(try rows("""
            select {departments:name}, count({employees:lastName}), sum({employees:salary}), avg({employees:salary})
            from {departments}, {employees} where {departments:deptCode} = {employees:deptCode}
            group by {departments:name} order by 1
            """), try JSONParser.parse(#"[["Engineering",2,500,250.0],["Operations",1,250,250.0]]"#))
    }

    func testEntriesNonIndexedPathsArgsAndPaging() throws {
        let r = try rows("select {employees:_soup}, {employees:_soupEntryId} from {employees} where {employees:employeeId} = ?", args: [.string("2")])
        XCTAssertEqual(r.arrayValue?.first?.arrayValue?.first?["lastName"], .string("Turing"), "_soup is an object")
        XCTAssertEqual(r.arrayValue?.first?.arrayValue?.first?["_soupEntryId"], .int(2))
        XCTAssertEqual(try rows("select {employees:address.zip}, count(*) from {employees} group by 1 order by 1"),
                       try JSONParser.parse(#"[["10001",2],["10002",1]]"#), "a path with no index, in select, group by and order by")
        XCTAssertEqual(try rows("select {employees:lastName} from {employees} where {employees:address.zip} = '10002'"),
                       try JSONParser.parse(#"[["Turing"]]"#), "a path with no index in where")
        XCTAssertEqual(try rows("select {employees:address} from {employees} where {employees:employeeId} = '1'"),
                       try JSONParser.parse(#"[[{"zip":"10001"}]]"#), "an object comes back as JSON")
        XCTAssertEqual(try rows("select '{employees:lastName}', 'it''s {x}' from {employees} limit 1"),
                       try JSONParser.parse(#"[["{employees:lastName}","it's {x}"]]"#), "braces in literals are left alone")
        XCTAssertEqual(try rows("select {employees:lastName} from {employees} order by 1", page: 1, pageSize: 2),
                       try JSONParser.parse(#"[["Turing"]]"#), "second page")
        XCTAssertEqual(try store.count(try QuerySpec.parse(#"{"queryType":"smart","smartSql":"select * from {employees} where {employees:salary} > ?","args":[210]}"#)), 2)
    }

    func testSelectPaths() throws {
        let out = try store.query(try QuerySpec.parse(#"{"queryType":"range","soupName":"employees","indexPath":"salary","beginKey":200,"selectPaths":["lastName","address.zip","_soupEntryId"]}"#), pageIndex: 0)
        XCTAssertEqual(try JSONParser.parse(String(decoding: out, as: UTF8.self)),
                       try JSONParser.parse(#"[["Turing","10002",2],["Hopper","10001",3],["Lovelace","10001",1]]"#))
    }

    func testOnlyReadOnlySingleSelectsRun() throws {
        for sql in ["insert into {employees} (soup, created, lastModified) values ('{}', 0, 0)",
                    "update {employees} set soup = '{}'", "delete from {employees}", "drop table {employees}",
                    "attach database '/tmp/x.db' as x", "pragma journal_mode", "pragma table_info({employees})",
                    "select 1; delete from {employees}", "select 1; select 2",
                    "with t as (select 1) delete from {employees}",
                    "create table x (a)", "select * from {employees} where id in (select id from {employees}) ; drop table {departments}"] {
            queryError(sql)
        }
        XCTAssertEqual(try rows("select count(*) from {employees}"), try JSONParser.parse("[[3]]"), "nothing was changed")
        queryError("select {nobody:name} from {nobody}", "nobody")
        queryError("select {employees:name from {employees}", "character")
        queryError("select {employees:} from {employees}", "empty path")
        queryError("select ? from {employees}", "parameter")
        queryError("select 'unterminated from {employees}")
    }
}
