import TureenCore

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

    /// `object`, the text of a JSON object, without its closing brace, ready
    /// for more members, and whether it has members already (which the next
    /// one then follows with a comma); nil when it is no "{...}".
    public static func opened(_ object: UnsafeBufferPointer<UInt8>) -> (UnsafeBufferPointer<UInt8>, hasMembers: Bool)? {
        guard object.count >= 2, object.first == UInt8(ascii: "{"), object.last == UInt8(ascii: "}") else { return nil }
        let open = UnsafeBufferPointer(rebasing: object[..<(object.count - 1)])
        var p = JSONParser(open)
        p.pos = 1
        p.skipSpace()
        return (open, p.pos < open.count)
    }

    /// Appends the entry as the host sees it: stored members, then id and date.
    public static func write(stored: UnsafeBufferPointer<UInt8>, id: Int64, modified: Int64, into w: JSONWriter) {
        guard stored.count >= 2 else { w.appendRaw("{}"); return }
        // Text that is no object (a soup's table shadowed in Smart SQL) is
        // spliced as it is: what comes out is no JSON, so the row writer
        // hands it over as bytes, never as an entry.
        let (open, hasMembers) = opened(stored) ?? (UnsafeBufferPointer(rebasing: stored[..<(stored.count - 1)]), true)
        w.appendRaw(bytes: open)
        w.appendRaw(hasMembers ? ",\"_soupEntryId\":" : "\"_soupEntryId\":")
        w.writeInt(id)
        w.appendRaw(",\"_soupLastModifiedDate\":")
        w.writeInt(modified)
        w.append(UInt8(ascii: "}"))
    }
}
