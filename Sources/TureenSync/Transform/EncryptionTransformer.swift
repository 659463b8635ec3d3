import TureenCore

/// A target's "encryption" as a step of its pipeline, the last to encode
/// and so the first to decode: the host's transformers see records in
/// clear, the server sees only envelopes (RecordEnvelope). Tombstones pass
/// through; a record that does not open fails alone, TUREEN_E_CORRUPT or
/// TUREEN_E_KEY.
final class EncryptionTransformer: TextDecodingTransformer {
    static let stepName = "encryption"
    let keys: EnvelopeKeys
    let collection: String

    init(keys: EnvelopeKeys, collection: String) {
        self.keys = keys
        self.collection = collection
    }

    /// Sealing and opening touch nothing shared.
    var anyThread: Bool { true }

    func encode(_ record: JSONObject) throws -> JSONObject {
        try RecordEnvelope.seal(record: record, id: try id(of: record), collection: collection, keys: keys)
    }

    func decode(_ record: JSONObject) throws -> JSONObject {
        try RecordEnvelope.open(serverRecord: record, id: try id(of: record), collection: collection, keys: keys)
    }

    func decode(_ record: JSONObject, textTo text: JSONWriter) throws -> (record: JSONObject, text: Range<Int>?) {
        try RecordEnvelope.open(serverRecord: record, id: try id(of: record), collection: collection, keys: keys, textTo: text)
    }

    private func id(of record: JSONObject) throws -> String {
        guard let id = record["id"]?.stringValue else { throw TureenError(.corrupt, "a record of collection \(collection) has no string id") }
        return id
    }
}
