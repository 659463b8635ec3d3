/// Upsert: one entry or an array of them, written in one transaction.
extension Store {
    /// Inserts or updates entries and returns them as stored (with
    /// `_soupEntryId` and `_soupLastModifiedDate`), as one JSON object or an
    /// array matching the input. All entries are written or none.
    public func upsert(soup name: String, entries: String, externalIdPath: String?, wantResult: Bool = true) throws -> JSONWriter {
        try Store.refuseEngineSoup(name, "written")
        var input = entries
        let isArray = entries.utf8.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: "[")
        return try withConnection { c in
            try c.transaction {
                let soup = try catalog.soup(name, c)
                let writer = try EntryWriter(c, soup, externalIdPath: externalIdPath,
                                             requireBlobs: { try self.requireBlobs(of: $0, c) })
                let out = JSONWriter(reserving: wantResult ? entries.utf8.count + 64 : 0)
                if wantResult && isArray { out.appendRaw("[") }
                var first = true
                _ = try input.withUTF8 { bytes in
                    try JSONParser.parseEach(bytes: bytes) { i, entry, element in
                        if first { first = false } else if wantResult { out.appendRaw(",") }
                        do {
                            try writer.upsert(entry, element, into: out, wantResult: wantResult)
                        } catch let e as TureenError {
                            throw TureenError(e.code, "entry \(i): \(e.message); nothing was written")
                        }
                    }
                }
                if wantResult && isArray { out.appendRaw("]") }
                return out
            }
        }
    }
}

/// Writes entries of one soup with statements prepared once per batch.
struct EntryWriter {
    let c: Connection
    let soup: Soup
    let externalIndex: SoupIndex?
    let now = Clock.nowMs()
    let ftsIndexes: [Int]

    /// Checks the blobs an entry refers to (app writes only).
    let requireBlobs: ((JSON) throws -> Void)?

    init(_ c: Connection, _ soup: Soup, externalIdPath: String?, requireBlobs: ((JSON) throws -> Void)? = nil) throws {
        self.c = c
        self.requireBlobs = requireBlobs
        self.soup = soup
        ftsIndexes = soup.indexes.indices.filter { soup.indexes[$0].spec.type == .fullText }
        // Built once per batch: per entry they showed in profiles.
        positions = soup.indexes.indices.filter { !soup.indexes[$0].computed }
        let columns = positions.map { soup.indexes[$0].column }
        let marks = Array(repeating: "?", count: columns.count + 3).joined(separator: ", ")
        insertSQL = "INSERT INTO \(soup.table) (\((["soup", "created", "lastModified"] + columns).joined(separator: ", "))) VALUES (\(marks))"
        updateSQL = "UPDATE \(soup.table) SET \((["soup = ?", "lastModified = ?"] + columns.map { "\($0) = ?" }).joined(separator: ", ")) WHERE id = ?"
        if let p = externalIdPath, p != EntryText.idKey {
            guard let idx = soup.index(path: p), idx.spec.type != .fullText else {
                throw TureenError.invalid("external id path '\(p)' is not a string, integer or floating index of soup '\(soup.name)'")
            }
            externalIndex = idx
        } else {
            externalIndex = nil
        }
    }

    /// Indexes whose values upsert writes; computed ones SQLite maintains.
    let positions: [Int]
    let insertSQL: String
    let updateSQL: String

    func upsert(_ entry: JSON, _ element: JSONParser.Element, into out: JSONWriter, wantResult: Bool) throws {
        guard case .object(let object) = entry else {
            throw TureenError.invalid("an entry must be a JSON object, not \(entry.typeName)")
        }
        // The text as given is stored when it is exactly what re-serialising
        // would keep: saves writing every entry again.
        let verbatim = object.count > 0 && !element.hadDuplicateNames
            && object[EntryText.idKey] == nil && object[EntryText.modifiedKey] == nil
        let stored = verbatim ? Array(element.text) : EntryText.stored(object)
        if let require = requireBlobs, stored.withUnsafeBytes({ BlobRef.mayOccur(in: $0) }) { try require(entry) }
        let id = try write(object, stored: stored)
        if wantResult {
            stored.withUnsafeBufferPointer { EntryText.write(stored: $0, id: id, modified: now, into: out) }
        }
    }

    /// Inserts or updates one entry and returns its id.
    func save(_ object: JSONObject) throws -> Int64 {
        try write(object, stored: EntryText.stored(object))
    }

    private func write(_ object: JSONObject, stored: [UInt8]) throws -> Int64 {
        let entry = JSON.object(object)
        let values = soup.indexes.map { $0.value(of: entry) }
        var target: Int64?
        if let idValue = object[EntryText.idKey], idValue != .null {
            guard let id = idValue.int64Value else { throw TureenError.invalid("_soupEntryId must be an integer") }
            target = id
        } else if let ext = externalIndex {
            target = try lookup(ext, ext.value(of: entry))
        }
        var id: Int64
        if let t = target, try update(t, stored, values) {
            id = t
        } else {
            id = try insert(stored, values)
        }
        if !ftsIndexes.isEmpty { try writeFullText(id, values, replacing: target != nil) }
        return id
    }

    func lookup(_ ext: SoupIndex, _ value: SQLValue) throws -> Int64? {
        if value == .null {
            throw TureenError.invalid("it has no \(ext.spec.type.rawValue) value at external id path '\(ext.spec.path)'")
        }
        let s = try c.cached("SELECT id FROM \(soup.table) WHERE \(ext.sql) = ? LIMIT 2")
        defer { s.reset() }
        value.bind(s, 1)
        guard try s.step() else { return nil }
        let id = s.int64(0)
        if try s.step() {
            throw TureenError(.constraint, "several entries match external id path '\(ext.spec.path)'")
        }
        return id
    }

    private func insert(_ stored: [UInt8], _ values: [SQLValue]) throws -> Int64 {
        let s = try c.cached(insertSQL)
        defer { s.reset() }
        s.bind(1, bytes: stored)
        s.bind(2, now)
        s.bind(3, now)
        for (n, i) in positions.enumerated() { values[i].bind(s, n + 4) }
        try s.step()
        return c.lastInsertRowid
    }

    /// Updates the entry with this id; false when there is none (the reference
    /// behaviour then is to insert it as a new entry).
    private func update(_ id: Int64, _ stored: [UInt8], _ values: [SQLValue]) throws -> Bool {
        let s = try c.cached(updateSQL)
        defer { s.reset() }
        s.bind(1, bytes: stored)
        s.bind(2, now)
        for (n, i) in positions.enumerated() { values[i].bind(s, n + 3) }
        s.bind(positions.count + 3, id)
        try s.step()
        return c.changes > 0
    }

    private func writeFullText(_ id: Int64, _ values: [SQLValue], replacing: Bool) throws {
        guard let fts = soup.ftsTable else { return }
        if replacing {
            let d = try c.cached("DELETE FROM \(fts) WHERE docid = ?")
            defer { d.reset() }
            d.bind(1, id)
            try d.step()
        }
        let cols = ftsIndexes.map { soup.indexes[$0].column }
        let s = try c.cached("INSERT INTO \(fts) (docid, \(cols.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: cols.count)))")
        defer { s.reset() }
        s.bind(1, id)
        for (n, i) in ftsIndexes.enumerated() { values[i].bind(s, n + 2) }
        try s.step()
    }
}
