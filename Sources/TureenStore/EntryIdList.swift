/// Parses a JSON array of entry ids, as retrieve and remove take them.
public enum EntryIdList {
    /// Ids per statement, below SQLite's limit of 999 bound parameters.
    static let chunk = 500

    public static func parse(_ text: String) throws -> [Int64] {
        guard case .array(let items) = try JSONParser.parse(text) else {
            throw TureenError.invalid("ids must be a JSON array of integers")
        }
        return try items.enumerated().map { i, v in
            guard let id = v.int64Value else { throw TureenError.invalid("id \(i) is \(v.typeName), not an integer") }
            return id
        }
    }

    static func placeholders(_ n: Int) -> String {
        Array(repeating: "?", count: n).joined(separator: ",")
    }
}

extension Store {
    /// The entries with these ids, in the order asked for; missing ids are skipped.
    public func retrieve(soup name: String, ids: [Int64]) throws -> JSONWriter {
        try withReader { c in
            try c.transaction(immediate: false) {
                let soup = try catalog.soup(name, c)
                // Rows land in one buffer; the map keeps where each one is,
                // so no row gets an allocation of its own.
                var texts: [UInt8] = []
                var found: [Int64: (start: Int, count: Int, modified: Int64)] = [:]
                found.reserveCapacity(ids.count)
                var start = 0
                while start < ids.count {
                    let part = ids[start..<min(start + EntryIdList.chunk, ids.count)]
                    let s = try c.cached("SELECT id, soup, lastModified FROM \(soup.table) WHERE id IN (\(EntryIdList.placeholders(part.count)))")
                    defer { s.reset() }
                    for (n, id) in part.enumerated() { s.bind(n + 1, id) }
                    while try s.step() {
                        let text = s.textBytes(1)
                        found[s.int64(0)] = (texts.count, text.count, s.int64(2))
                        texts.append(contentsOf: text)
                    }
                    start += part.count
                }
                let out = JSONWriter(reserving: texts.count + found.count * 64 + 2)
                out.appendRaw("[")
                var first = true
                texts.withUnsafeBufferPointer { all in
                    for id in ids {
                        guard let e = found[id] else { continue }
                        if first { first = false } else { out.appendRaw(",") }
                        EntryText.write(stored: UnsafeBufferPointer(rebasing: all[e.start..<(e.start + e.count)]), id: id, modified: e.modified, into: out)
                    }
                }
                out.appendRaw("]")
                return out
            }
        }
    }

    /// Removes the entries with these ids in one transaction; unknown ids are ignored.
    public func remove(soup name: String, ids: [Int64]) throws {
        try Store.refuseEngineSoup(name, "written")
        return try withConnection { c in
            try c.transaction { try Store.deleteEntries(c, try catalog.soup(name, c), ids) }
        }
    }

    /// Deletes entries and their full-text rows; the caller holds a transaction.
    static func deleteEntries(_ c: Connection, _ soup: Soup, _ ids: [Int64]) throws {
        var start = 0
        while start < ids.count {
            let part = ids[start..<min(start + EntryIdList.chunk, ids.count)]
            for table in [soup.table] + (soup.ftsTable.map { [$0] } ?? []) {
                let key = table == soup.table ? "id" : "docid"
                let s = try c.cached("DELETE FROM \(table) WHERE \(key) IN (\(EntryIdList.placeholders(part.count)))")
                defer { s.reset() }
                for (n, id) in part.enumerated() { s.bind(n + 1, id) }
                try s.step()
            }
            start += part.count
        }
    }
}
