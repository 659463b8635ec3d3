import TureenStore
import TureenCore

/// SmartSync's record flags, kept inside each entry so that an app can set
/// them itself, plus the conversions between entries and server records.
enum LocalFlags {
    static let local = "__local__"
    static let created = "__locally_created__"
    static let updated = "__locally_updated__"
    static let deleted = "__locally_deleted__"
    static let lastError = "__last_error__"
    /// Beside SmartSync's message: the HTTP status of the refusal (null when
    /// none came), the operation refused, and how many syncs in a row have
    /// sent the change without success (the sync option maxAttempts caps it).
    static let lastErrorStatus = "__last_error_status__"
    static let lastErrorOperation = "__last_error_op__"
    static let attempts = "__sync_attempts__"
    static let all = [local, created, updated, deleted]
    static let errorFields = [lastError, lastErrorStatus, lastErrorOperation, attempts]

    static func isSet(_ o: JSONObject, _ flag: String) -> Bool { o[flag] == .bool(true) }
    static func isLocal(_ o: JSONObject) -> Bool { isSet(o, local) }

    /// Marks an entry as in step with the server.
    static func markClean(_ o: inout JSONObject) {
        for f in all { o[f] = .bool(false) }
        clearError(&o)
    }

    static func clearError(_ o: inout JSONObject) {
        for f in errorFields { o[f] = nil }
    }

    /// How many syncs in a row have failed to send this entry's change.
    /// Read back from the entry, which the app may write: kept in a range
    /// where counting one more cannot overflow.
    static func attemptCount(_ o: JSONObject) -> Int { Int(min(max(o[attempts]?.int64Value ?? 0, 0), 1 << 40)) }

    /// The fields a server receives: no soup bookkeeping, no flags, and not
    /// the server-managed modification stamp.
    static func serverFields(_ entry: JSONObject, idField: String, modifiedField: String, fieldlist: [String]?) -> JSONObject {
        var out = JSONObject()
        if let f = fieldlist {
            if let id = entry[idField] { out[idField] = id }
            for k in f where !k.hasSameBytes(as: modifiedField) { if let v = entry[k] { out[k] = v } }
            return out
        }
        for m in entry.members where !isLocalOnly(m.key) && !m.key.hasSameBytes(as: modifiedField) {
            out.appendUnchecked(m.key, m.value)
        }
        return out
    }

    /// An entry without the fields that only exist locally: the server
    /// record it holds.
    static func withoutLocalFields(_ entry: JSONObject) -> JSONObject {
        var out = JSONObject()
        for m in entry.members where !isLocalOnly(m.key) { out.appendUnchecked(m.key, m.value) }
        return out
    }

    /// Whether `entry` holds exactly `record` besides its local fields
    /// (withoutLocalFields(entry) == record, without building the copy:
    /// sync down asks this of every record it already has).
    static func holds(_ entry: JSONObject, exactly record: JSONObject) -> Bool {
        var n = 0
        let index = record.indexForLookups()
        for m in entry.members where !isLocalOnly(m.key) {
            guard record.value(m.key, index: index) == m.value else { return false }
            n += 1
        }
        return n == record.count
    }

    /// Whether `record`, as a server sends it, is `sent` (serverFields of an
    /// entry) besides its modification stamp: no member more, none less.
    static func isCopy(_ record: JSONObject, of sent: JSONObject, modifiedField: String) -> Bool {
        var n = 0
        let index = sent.indexForLookups()
        for m in record.members where !m.key.hasSameBytes(as: modifiedField) {
            guard sent.value(m.key, index: index) == m.value else { return false }
            n += 1
        }
        return n == sent.count
    }

    /// Whether `record` is a copy (see above) of one of `sent`.
    static func isCopy(_ record: JSONObject, ofAny sent: [JSONObject], modifiedField: String) -> Bool {
        sent.contains { isCopy(record, of: $0, modifiedField: modifiedField) }
    }

    /// By bytes: String == normalises a name that is a long run of
    /// combining marks, at a cost that grows with its square, and sync
    /// asks this of every name of every record.
    static func isLocalOnly(_ key: String) -> Bool {
        localOnly.contains { $0.hasSameBytes(as: key) }
    }

    private static let localOnly = [EntryText.idKey, EntryText.modifiedKey] + errorFields + all

    /// The text `entry(from: record, ...)` is stored as, made from `text`,
    /// the record as the server sent it: its members as they came, then the
    /// flags, false. That is the entry when none of the record's names
    /// starts with "_" (no flag, error field or `_soup` member to replace or
    /// leave out); otherwise nil.
    static func cleanText(of record: JSONObject, text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard !record.members.contains(where: { $0.key.utf8.first == UInt8(ascii: "_") }),
              let (open, hasMembers) = EntryText.opened(text) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count + cleanEnd.count)
        out.append(contentsOf: open)
        out.append(contentsOf: hasMembers ? cleanEnd[...] : cleanEnd.dropFirst())
        return out
    }

    /// What `cleanText` puts in place of the record's closing brace.
    private static let cleanEnd = Array(("," + all.map { "\"\($0)\":false" }.joined(separator: ",") + "}").utf8)

    /// A server record as an entry: clean, keeping the local entry id. The
    /// same members, in the same order, as `markClean` and then setting the
    /// id would give, but in one pass: setting nine names one by one scanned
    /// the record nine times, which was a tenth of sync down's work.
    static func entry(from record: JSONObject, entryId: Int64?) -> JSONObject {
        var o = JSONObject()
        o.reserveCapacity(record.count + all.count + 1)
        var flagsSeen: UInt8 = 0  // bit i: all[i] was in the record
        var idSeen = false
        for m in record.members {
            // Every name handled here starts with "_"; a record's own rarely do.
            guard m.key.utf8.first == UInt8(ascii: "_") else {
                o.appendUnchecked(m.key, m.value)
                continue
            }
            if let f = all.firstIndex(where: { $0.hasSameBytes(as: m.key) }) {
                flagsSeen |= 1 << f
                o.appendUnchecked(m.key, .bool(false))
            } else if m.key.hasSameBytes(as: EntryText.idKey) {
                // A `_soupEntryId` the server sent would name another entry.
                idSeen = true
                if let id = entryId { o.appendUnchecked(m.key, .int(id)) }
            } else if !errorFields.contains(m.key) {
                o.appendUnchecked(m.key, m.value)
            }
        }
        for (f, flag) in all.enumerated() where flagsSeen & (1 << f) == 0 { o.appendUnchecked(flag, .bool(false)) }
        if !idSeen, let id = entryId { o.appendUnchecked(EntryText.idKey, .int(id)) }
        return o
    }
}
