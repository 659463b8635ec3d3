import TureenCore

/// A host's transformer: two functions taking {"record": {...}} and giving a
/// status and {"record": {...}}. The C layer wraps the host's function
/// pointers in these closures; `release` runs when the last sync using the
/// transformer lets go of it, which is when the host may free its context.
public final class HostTransformer: RecordTransformer, @unchecked Sendable {
    // Unchecked: immutable; the header tells the host its functions run on the sync's thread.
    public typealias Call = (String) -> (status: Int32, response: String?)
    private let encodeCall: Call
    private let decodeCall: Call
    private let release: () -> Void

    public init(encode: @escaping Call, decode: @escaping Call, release: @escaping () -> Void) {
        encodeCall = encode
        decodeCall = decode
        self.release = release
    }

    deinit { release() }

    var anyThread: Bool { false }

    func encode(_ record: JSONObject) throws -> JSONObject { try call(encodeCall, "encode", record) }

    func decode(_ record: JSONObject) throws -> JSONObject { try call(decodeCall, "decode", record) }

    /// The host's status becomes the error's code (TUREEN_E_NETWORK is
    /// retried by the pipeline); its {"error": "..."} the message.
    private func call(_ fn: Call, _ what: String, _ record: JSONObject) throws -> JSONObject {
        let request = JSON.object(JSONObject([("record", .object(record))]))
        let (status, text) = fn(request.text)
        let body = (try? text.map { try JSONParser.parse($0) }) ?? nil
        guard status == 0 else {
            let code = TureenCode(rawValue: status) ?? .internal
            let said = body?["error"]?.stringValue ?? "status \(status)"
            throw TureenError(code, "\(what): \(said)")
        }
        guard let out = body?["record"]?.objectValue else {
            throw TureenError.invalid("\(what) gave no {\"record\": {...}} object")
        }
        return out
    }
}

extension SyncManager {
    /// One of the calls close waits for, as `registerTarget` is.
    public func registerTransformer(_ name: String, _ transformer: @autoclosure () -> HostTransformer) throws {
        try serverCalls.run { try transformers.register(name, kind: "transformer", transformer) }
    }

    public func removeTransformer(_ name: String) throws {
        try serverCalls.run { try transformers.unregister(name, what: "transformer") }
    }
}
