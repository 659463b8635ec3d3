import TureenCore

/// Writes result rows (smart queries, selectPaths) as JSON arrays, straight
/// from SQLite's column memory into the output: each value is copied once.
enum ResultRows {
    static func write(_ s: Statement, columns: Int, into w: JSONWriter) {
        w.appendRaw("[")
        for col in 0..<columns {
            if col > 0 { w.appendRaw(",") }
            switch s.columnType(col) {
            case 1: w.writeInt(s.int64(col))      // SQLITE_INTEGER
            case 2: w.writeDouble(s.double(col))  // SQLITE_FLOAT
            case 3: w.writeString(String(decoding: s.textBytes(col), as: UTF8.self))  // repairs invalid UTF-8
            case 4: writeBlob(s.blobBytes(col), into: w)
            default: w.appendRaw("null")
            }
        }
        w.appendRaw("]")
    }

    /// JSON made by tureen_entry / tureen_path_value is embedded as it is;
    /// any other BLOB (a literal in the SQL) becomes a hex string. The tag
    /// alone does not make a blob JSON: SQL can read it (`substr`) and put
    /// it before bytes of its own, or hand tureen_entry text that shadows a
    /// soup's. So a tagged blob is embedded only when the rest is one
    /// well-formed JSON value: nothing else could end the row early, cut
    /// the page at a NUL or carry invalid UTF-8.
    private static func writeBlob(_ b: UnsafeRawBufferPointer, into w: JSONWriter) {
        let tag = EntryFunction.tag
        if b.count >= tag.count && zip(b.prefix(tag.count), tag).allSatisfy({ $0 == $1 }) {
            let json = UnsafeBufferPointer(rebasing: b.bindMemory(to: UInt8.self)[tag.count...])
            if JSONParser.isOneValue(json) {
                w.appendRaw(bytes: json)
                return
            }
        }
        w.writeString(Hex.string(b))
    }
}
