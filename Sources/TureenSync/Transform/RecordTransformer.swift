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

/// A step that can also give the JSON text of the record it decodes (the
/// encryption's plaintext), so that sync down stores that text as it is
/// instead of writing the record out again: without it, a page through a
/// transformer cost a tenth more than one without.
protocol TextDecodingTransformer: RecordTransformer {
    /// `decode(record)`, also appending the decoded record's text to
    /// `text` and saying where it lies there; nil when it has none.
    func decode(_ record: JSONObject, textTo text: JSONWriter) throws -> (record: JSONObject, text: Range<Int>?)
}
