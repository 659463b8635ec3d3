import XCTest
@testable import TureenCore

/// Not a timed assertion: prints what sealing and opening cost, for the
/// ≤ 1.15 sync cost bar of issue 49 (see the test's output).
final class EnvelopeCostTests: XCTestCase {
    func testSealAndOpenTenThousandRecordsOfAboutFiveHundredBytes() throws {
        let keys = try TestKeys.keys([("k1", TestKeys.hex1)])
        var records: [JSONObject] = []
        for i in 0..<10_000 {
            records.append(JSONObject([
                ("id", .string("record-\(i)")), ("last_modified", .int(1_700_000_000_000 + Int64(i))),
                ("title", .string("Title number \(i) of the benchmark set")), ("count", .int(Int64(i))),
                ("done", .bool(i % 2 == 0)), ("body", .string(String(repeating: "lorem ipsum ", count: 34))),
                ("tags", .array([.string("alpha"), .string("beta"), .string("gamma")])),
            ]))
        }
        let size = JSONWriter.string(.object(records[0])).utf8.count
        let t0 = Clock.monotonicNs()
        let sealed = try records.map { try RecordEnvelope.seal(record: $0, id: $0["id"]?.stringValue ?? "", collection: "bench", keys: keys) }
        let t1 = Clock.monotonicNs()
        let opened = try sealed.map { try RecordEnvelope.open(serverRecord: $0, id: $0["id"]?.stringValue ?? "", collection: "bench", keys: keys) }
        let t2 = Clock.monotonicNs()
        XCTAssertEqual(opened, records)
        // For scale: writing and parsing the same records' text, which sync does for each record anyway.
        let tw = Clock.monotonicNs()
        let texts = records.map { JSONWriter.string(.object($0)) }
        let t3 = Clock.monotonicNs()
        let parsed = try texts.map { try JSONParser.parse($0) }
        let t4 = Clock.monotonicNs()
        XCTAssertEqual(parsed.count, records.count)
        print("envelope cost: 10000 records of \(size) bytes: seal \((t1 - t0) / 1_000_000) ms, open \((t2 - t1) / 1_000_000) ms; "
              + "write \((t3 - tw) / 1_000_000) ms, parse \((t4 - t3) / 1_000_000) ms in clear")
    }
}
