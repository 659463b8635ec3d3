import Glibc
@testable import TureenSync
@testable import TureenCore

/// A server in memory speaking the callback target's protocol (tureen.h,
/// "Callback targets"): records by id, a stamp that rises with every write,
/// tombstones, pages behind a cursor, and faults scripted per operation.
/// Its calls run on the thread that runs the sync, one at a time.
final class FakeServer {
    enum Operation: String { case fetch, create, update, remove }

    /// What the next call of an operation meets instead of a plain answer.
    enum Fault {
        /// The write is committed, then its answer is lost (TUREEN_E_NETWORK).
        case lostAnswer
        /// Refused with this status and {"error": message}; nothing applied.
        case refuse(TureenCode, String)
        /// Unreachable (TUREEN_E_NETWORK); nothing applied.
        case unreachable
        /// Answered normally, this many milliseconds late.
        case delay(Int)
    }

    let idField: String
    let modifiedField: String
    var pageSize: Int
    /// Whether fetch answers say how many records the whole feed holds.
    var reportsTotal = false
    private(set) var records: [String: JSONObject] = [:]
    private(set) var tombstones: [String: JSONObject] = [:]
    private(set) var clock: Int64 = 1_700_000_000_000
    /// Every request received, in order.
    var calls: [(op: Operation, request: JSON)] = []
    private(set) var releases = 0
    private var faults: [Operation: [Fault?]] = [:]
    /// Runs as each call arrives, before its fault: a test's hook into the
    /// middle of a sync (a cancel, a write by another device).
    var onCall: ((Operation, JSON) -> Void)?

    init(idField: String = "id", modifiedField: String = "last_modified", pageSize: Int = 10) {
        self.idField = idField
        self.modifiedField = modifiedField
        self.pageSize = pageSize
    }

    // MARK: the server's own writes (another device's)

    @discardableResult
    func put(_ text: String) -> JSONObject {
        guard case .object(let o)? = try? JSONParser.parse(text) else { preconditionFailure("not an object: \(text)") }
        return store(o)
    }

    @discardableResult
    func patch(_ id: String, _ text: String) -> JSONObject {
        guard var o = records[id], case .object(let fields)? = try? JSONParser.parse(text) else {
            preconditionFailure("no record \(id), or not an object: \(text)")
        }
        for m in fields.members { o[m.key] = m.value }
        return store(o)
    }

    /// Deletes a record, leaving a tombstone.
    func delete(_ id: String) {
        records[id] = nil
        tombstones[id] = JSONObject([(idField, .string(id)), ("deleted", .bool(true)), (modifiedField, .int(tick()))])
    }

    /// Forgets a record without a tombstone, as a purge would.
    func purge(_ id: String) { records[id] = nil }

    /// Queues faults for the next calls of `op`; nil lets a call through.
    func fail(_ op: Operation, _ queued: Fault?...) { faults[op, default: []].append(contentsOf: queued) }

    func requests(_ op: Operation) -> [JSON] { calls.filter { $0.op == op }.map { $0.request } }

    // MARK: plugging in

    /// Registers the server as callback target `name`; returns the target JSON.
    func register(on manager: SyncManager, as name: String = "fake", writes: Bool = true) throws -> String {
        func call(_ op: Operation) -> HostTarget.Call { { self.answer(op, $0) } }
        try manager.registerTarget(name, HostTarget(fetch: call(.fetch), create: writes ? call(.create) : nil,
                                                    update: writes ? call(.update) : nil, remove: writes ? call(.remove) : nil,
                                                    release: { self.releases += 1 }))
        var target = #"{"type":"callback","name":"\#(name)""#
        if idField != "id" { target += #","idField":"\#(idField)""# }
        if modifiedField != "last_modified" { target += #","modifiedField":"\#(modifiedField)""# }
        return target + "}"
    }

    // MARK: answering

    typealias Answer = (status: Int32, response: String?)

    /// One call of the callback protocol: its request in, its status and response out.
    func answer(_ op: Operation, _ text: String) -> Answer {
        let request = (try? JSONParser.parse(text)) ?? .null
        calls.append((op, request))
        onCall?(op, request)
        var fault: Fault?
        if var queue = faults[op], !queue.isEmpty {
            fault = queue.removeFirst()
            faults[op] = queue
        }
        switch fault {
        case .refuse(let code, let message)?:
            return (code.rawValue, JSON.object(JSONObject([("error", .string(message))])).text)
        case .unreachable?:
            return (TureenCode.network.rawValue, nil)
        case .delay(let ms)?:
            usleep(UInt32(ms) * 1000)
        case .lostAnswer?, nil:
            break
        }
        let result: Answer
        switch op {
        case .fetch: result = fetch(request)
        case .create: result = create(request)
        case .update: result = update(request)
        case .remove: result = remove(request)
        }
        if case .lostAnswer? = fault { return (TureenCode.network.rawValue, nil) }
        return result
    }

    /// Live records, and from a position on the tombstones too, modified at
    /// or after "since", in stamp order; the cursor is the offset of the next page.
    private func fetch(_ request: JSON) -> Answer {
        var items = Array(records.values)
        if let since = request["since"]?.int64Value {
            items += tombstones.values
            items = items.filter { stamp($0) >= since }
        }
        items.sort { (stamp($0), id($0)) < (stamp($1), id($1)) }
        let start = request["cursor"]?.stringValue.flatMap { Int($0.dropFirst("page-".count)) } ?? 0
        let end = min(start + pageSize, items.count)
        var body = JSONObject([("records", .array(items[min(start, end)..<end].map { .object($0) })),
                               ("cursor", end < items.count ? .string("page-\(end)") : .null)])
        if reportsTotal { body["total"] = .int(Int64(items.count)) }
        return ok(body)
    }

    /// A create of an id the server holds is refused with the current copy,
    /// as Kinto's If-None-Match: * refuses it.
    private func create(_ request: JSON) -> Answer {
        guard let record = request["record"]?.objectValue, let rid = record[idField]?.stringValue else {
            return (TureenCode.invalid.rawValue, #"{"error":"create without a record id"}"#)
        }
        if let current = records[rid] { return conflict(current) }
        return ok(JSONObject([("record", .object(store(record)))]))
    }

    private func update(_ request: JSON) -> Answer {
        guard let record = request["record"]?.objectValue, let rid = record[idField]?.stringValue else {
            return (TureenCode.invalid.rawValue, #"{"error":"update without a record id"}"#)
        }
        guard let current = records[rid] else { return conflict(nil) }
        if let refused = precondition(request, current) { return refused }
        return ok(JSONObject([("record", .object(store(record)))]))
    }

    private func remove(_ request: JSON) -> Answer {
        guard let rid = request["id"]?.stringValue, let current = records[rid] else {
            return (TureenCode.notFound.rawValue, #"{"error":"already gone"}"#)
        }
        if let refused = precondition(request, current) { return refused }
        delete(rid)
        return ok(JSONObject())
    }

    /// "ifMatch" names the version the change was made against: another
    /// version here is a conflict.
    private func precondition(_ request: JSON, _ current: JSONObject) -> Answer? {
        guard let version = request["ifMatch"]?.stringValue else { return nil }
        return version == String(stamp(current)) ? nil : conflict(current)
    }

    private func conflict(_ current: JSONObject?) -> Answer {
        (TureenCode.conflict.rawValue, JSON.object(JSONObject([("record", current.map { .object($0) } ?? .null)])).text)
    }

    private func ok(_ body: JSONObject) -> Answer { (0, JSON.object(body).text) }

    // MARK: records

    private func store(_ record: JSONObject) -> JSONObject {
        var o = record
        o[modifiedField] = .int(tick())
        let rid = id(o)
        records[rid] = o
        tombstones[rid] = nil
        return o
    }

    private func tick() -> Int64 {
        clock += 1
        return clock
    }

    func stamp(_ o: JSONObject) -> Int64 { o[modifiedField]?.int64Value ?? -1 }
    private func id(_ o: JSONObject) -> String { o[idField]?.stringValue ?? "" }
}
