/// An entry as stored is its JSON object without `_soupEntryId` and
/// `_soupLastModifiedDate`; those live in columns and are appended when the
/// entry is read, by splicing text, so a read never parses the document.
public enum EntryText {
    public static let idKey = "_soupEntryId"
    public static let modifiedKey = "_soupLastModifiedDate"

    /// The stored form: the object's members minus the two generated ones.
    static func stored(_ entry: JSONObject) -> [UInt8] {
        var o = entry
        o[idKey] = nil
        o[modifiedKey] = nil
        let w = JSONWriter(reserving: 1024)
        w.write(.object(o))
        return w.bytes
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
