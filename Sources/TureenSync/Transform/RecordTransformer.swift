import TureenCore

/// One step of a target's "transformers" (kinto.js's remote transformers):
/// turns a record as Tureen keeps it into the form the server holds
/// (`encode`), and back (`decode`). A host's functions are one kind; a
/// transformer built into the library can be another, and join the same
/// pipeline.
protocol RecordTransformer: AnyObject {
    /// Encodes one record, a tombstone ({"id", "deleted": true}) included.
    func encode(_ record: JSONObject) throws -> JSONObject
    /// Decodes one record as the server sent it, tombstones included.
    func decode(_ record: JSONObject) throws -> JSONObject
    /// Whether it may run on any of the sync's threads (a feed fetching
    /// ahead, parallel uploads); a host's functions run on the sync's own.
    var anyThread: Bool { get }
}
