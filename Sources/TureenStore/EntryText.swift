/// An entry as stored is its JSON object without `_soupEntryId` and
/// `_soupLastModifiedDate`; those live in columns and are appended when the
/// entry is read, by splicing text, so a read never parses the document.
public enum EntryText {
    public static let idKey = "_soupEntryId"
    public static let modifiedKey = "_soupLastModifiedDate"

    /// Calls `body` with the stored form: the object's members minus the
    /// two generated ones. Written straight from the entry's members, not
    /// from a copy without them, and handed over where it was written.
    static func withStored<T>(_ entry: JSONObject, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let w = JSONWriter(reserving: 2048)
        w.writeObject(members: entry.members.lazy.filter { !isGenerated($0.key) })
        return try withExtendedLifetime(w) { try body(w.buffer) }
    }

    /// Whether `name` is one of the two members the store generates.
    static func isGenerated(_ name: String) -> Bool {
        name.utf8.first == UInt8(ascii: "_") && (name == idKey || name == modifiedKey)
    }

    /// Appends the entry as the host sees it: stored members, then id and date.
    public static func write(stored: UnsafeBufferPointer<UInt8>, id: Int64, modified: Int64, into w: JSONWriter) {
        // stored is "{...}"; drop the closing brace and add two members.
        guard stored.count >= 2 else { w.appendRaw("{}"); return }
        w.appendRaw(bytes: UnsafeBufferPointer(rebasing: stored[0..<(stored.count - 1)]))
        w.appendRaw(stored.count > 2 ? ",\"_soupEntryId\":" : "\"_soupEntryId\":")
        w.writeInt(id)
        w.appendRaw(",\"_soupLastModifiedDate\":")
        w.writeInt(modified)
        w.append(UInt8(ascii: "}"))
    }
}
