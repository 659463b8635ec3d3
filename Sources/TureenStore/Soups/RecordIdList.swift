import TureenCore

/// Parses a JSON array of record ids: the values a sync's id field holds,
/// by which $fh.sync, RhoConnect and C8o name records.
public enum RecordIdList {
    public static func parse(_ text: String) throws -> [JSON] {
        guard case .array(let items) = try JSONParser.parse(text) else {
            throw TureenError.invalid("record ids must be a JSON array of strings or numbers")
        }
        for (i, v) in items.enumerated() {
            switch v {
            case .string, .int, .double: continue
            default: throw TureenError.invalid("record id \(i) is \(v.typeName), not a string or a number")
            }
        }
        return items
    }
}

extension Store {
    /// The entries whose `idField` (a string, integer or floating index of
    /// the soup) holds these record ids, as `retrieve` answers: in the order
    /// asked for, ids with no entry skipped.
    public func retrieve(soup name: String, idField: String, recordIds: [JSON]) throws -> JSONWriter {
        try retrieve(soup: name, count: recordIds.count) { c, soup in
            let lookup = try KeyLookup(c, soup, path: idField, role: "id field")
            return { try lookup.id(key: recordIds[$0]) }
        }
    }
}
