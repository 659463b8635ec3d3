import TureenCore

/// Upsert: one entry or an array of them, written in one transaction.
extension Store {
    /// Inserts or updates entries and returns them as stored (with
    /// `_soupEntryId` and `_soupLastModifiedDate`), as one JSON object or an
    /// array matching the input. All entries are written or none.
    public func upsert(soup name: String, entries: String, externalIdPath: String?, wantResult: Bool = true) throws -> JSONWriter {
        var input = entries
        return try input.withUTF8 { try upsert(soup: name, entries: $0, externalIdPath: externalIdPath, wantResult: wantResult) }
    }

    /// The same from the caller's bytes, read in place: the parser checks
    /// them as UTF-8 itself, so they need no copy into a String first.
    public func upsert(soup name: String, entries bytes: UnsafeBufferPointer<UInt8>, externalIdPath: String?,
                       wantResult: Bool = true) throws -> JSONWriter {
        try refuseEngineSoup(name, "written")
        let isArray = bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: "[")
        return try withConnection { c in
            try c.transaction {
                let soup = try catalog.soup(name, c)
                let writer = try EntryWriter(c, soup, externalIdPath: externalIdPath,
                                             requireBlobs: { try self.requireBlobs(of: $0, c) })
                let out = JSONWriter(reserving: wantResult ? bytes.count + 64 : 0)
                if wantResult && isArray { out.appendRaw("[") }
                var first = true
                try JSONParser.parseEach(bytes: bytes, skimmingObjectsWithout: EntryWriter.generatedNames,
                                         noting: RecordIdFunction.member) { i, item in
                    if first { first = false } else if wantResult { out.appendRaw(",") }
                    do {
                        switch item {
                        case .parsed(let entry, let element): try writer.upsert(entry, element, into: out, wantResult: wantResult)
                        case .plain(let text, let noted):
                            try writer.upsert(plain: text, recordIdAt: noted, into: out, wantResult: wantResult)
                        }
                    } catch let e as TureenError {
                        throw TureenError(e.code, "entry \(i): \(e.message); nothing was written")
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
        // Held for the batch: looking them up in the connection's cache per
        // entry hashed and compared the SQL text each time.
        insertStatement = try c.cached("INSERT INTO \(soup.table) (\((["soup", "created", "lastModified"] + columns).joined(separator: ", "))) VALUES (\(marks))")
        // OR FAIL: on a soup sync watches, the UPDATE fires a trigger (its
        // keep_base), and SQLite journals a statement that fires one and
        // may abort on a constraint, SQLCipher encrypting each page it puts
        // there: 40 µs an entry; sync up's commits of 1,000 creates took
        // 0.12 CPU-s against 0.07 without (bench/sync_up_parallel_bench.py,
        // which prints where the CPU went). No constraint can fail here
        // (every NOT NULL column is bound a value, no index is unique), and
        // any other error fails the whole write, as ChangeFeed's insert does.
        // (OR FAIL also overrides an ON CONFLICT clause in the statements
        // of the triggers it fires: keep_base's has none.) Not inside the
        // host's transaction: without the journal, a disk found full there
        // would roll back all of it, not just the call that met it.
        let conflict = c.inHostTransaction ? "" : " OR FAIL"
        updateStatement = try c.cached("UPDATE\(conflict) \(soup.table) SET \((["soup = ?", "lastModified = ?"] + columns.map { "\($0) = ?" }).joined(separator: ", ")) WHERE id = ?")
        if let p = externalIdPath, p != EntryText.idKey {
            external = try KeyLookup(c, soup, path: p, role: "external id path")
        } else {
            external = nil
        }
        pathBytes = soup.indexes.map { $0.segments.map { Array($0.utf8) } }
    }

    /// Member names an entry's stored text never has: an entry with one of
    /// them at its top is stored re-serialised without it.
    static let generatedNames = [Array(EntryText.idKey.utf8), Array(EntryText.modifiedKey.utf8)]

    /// Each index's path as bytes, to read its value from an entry's text.
    let pathBytes: [[[UInt8]]]

    /// Indexes whose values upsert writes; computed ones SQLite maintains.
    let positions: [Int]
    let insertStatement: Statement
    let updateStatement: Statement
    /// Finds an entry by its external id, when there is one.
    let external: KeyLookup?
    var externalIndex: SoupIndex? { external?.index }

    func upsert(_ entry: JSON, _ element: JSONParser.Element, into out: JSONWriter, wantResult: Bool) throws {
        guard case .object(let object) = entry else {
            throw TureenError.invalid("an entry must be a JSON object, not \(entry.typeName)")
        }
        // The text as given is stored when it is exactly what re-serialising
        // would keep: saves writing every entry again.
        let verbatim = object.count > 0 && !element.needsRewriting
            && object[EntryText.idKey] == nil && object[EntryText.modifiedKey] == nil
        func store(_ stored: UnsafeBufferPointer<UInt8>) throws {
            if let require = requireBlobs, BlobRef.mayOccur(in: UnsafeRawBufferPointer(stored)) { try require(entry) }
            let id = try write(object, stored: stored)
            if wantResult { EntryText.write(stored: stored, id: id, modified: now, into: out) }
        }
        if verbatim {
            try store(element.text)
        } else {
            try EntryText.withStored(object) { try store($0) }
        }
    }

    /// Upserts an entry the parser only skimmed (`JSONParser.Item.plain`):
    /// stored as given, its index values read from the text. `recordIdAt`:
    /// where its record id member's value starts, as the skim noted it.
    func upsert(plain text: UnsafeBufferPointer<UInt8>, recordIdAt: Int?, into out: JSONWriter, wantResult: Bool) throws {
        if requireBlobs != nil && BlobRef.mayOccur(in: UnsafeRawBufferPointer(text)) {
            // Blob references are found on the tree.
            return try upsert(try JSONParser.parse(bytes: text), JSONParser.Element(text: text, hadDuplicateNames: false, needsRewriting: false),
                              into: out, wantResult: wantResult)
        }
        let projected = try JSONScanner.project(text, paths: pathBytes)
        let values = soup.indexes.indices.map { i in
            IndexValue.from(projected[i].values, crossed: projected[i].crossedArray, type: soup.indexes[i].spec.type)
        }
        let recordId = recordIdAt.flatMap { RecordIdFunction.recordId(valueIn: UnsafeBufferPointer(rebasing: text[$0...])) }
        let id = try write(values, explicitId: nil, stored: text, recordId: recordId)
        if wantResult { EntryText.write(stored: text, id: id, modified: now, into: out) }
    }

    /// Inserts or updates one entry and returns its id. `new`: the caller
    /// looked its external id up in this transaction and found none, so it
    /// is inserted without looking again.
    func save(_ object: JSONObject, new: Bool = false) throws -> Int64 {
        try EntryText.withStored(object) { try write(object, stored: $0, new: new) }
    }

    func write(_ object: JSONObject, stored: UnsafeBufferPointer<UInt8>, new: Bool = false) throws -> Int64 {
        let entry = JSON.object(object)
        var explicitId: Int64?
        if let idValue = object[EntryText.idKey], idValue != .null {
            guard let id = idValue.int64Value else { throw TureenError.invalid("_soupEntryId must be an integer") }
            explicitId = id
        }
        return try write(soup.indexes.map { $0.value(of: entry) }, explicitId: explicitId, stored: stored,
                         recordId: RecordIdFunction.recordId(in: stored), new: new)
    }

    /// Writes an entry given its index values (in `soup.indexes` order): to
    /// `explicitId`, or the entry its external id finds (unless the caller
    /// knows it is `new`), or a new one. The text is bound, not copied: it
    /// must stay valid for the call. `recordId`: the text's (see
    /// RecordIdFunction), for the change feed.
    private func write(_ values: [SQLValue], explicitId: Int64?, stored: UnsafeBufferPointer<UInt8>, recordId: JSON?,
                       new: Bool = false) throws -> Int64 {
        var target = explicitId
        if target == nil, let ext = external {
            // A new entry still needs a value there: without one, every
            // later write of the same record would insert it again.
            if new {
                try ext.require(values[ext.position])
            } else {
                target = try ext.id(of: values[ext.position])
            }
        }
        var id: Int64
        if let t = target, try update(t, stored, values, recordId) {
            id = t
        } else {
            id = try insert(stored, values, recordId)
        }
        if !ftsIndexes.isEmpty { try writeFullText(id, values, replacing: target != nil) }
        return id
    }

    private func insert(_ stored: UnsafeBufferPointer<UInt8>, _ values: [SQLValue], _ recordId: JSON?) throws -> Int64 {
        let s = insertStatement
        defer { s.reset() }  // while `stored` is valid: it is bound, not copied
        s.bind(1, borrowedText: stored)
        s.bind(2, now)
        s.bind(3, now)
        for (n, i) in positions.enumerated() { values[i].bind(s, n + 4) }
        try step(s, recordId)
        return c.lastInsertRowid
    }

    /// Updates the entry with this id; false when there is none (the reference
    /// behaviour then is to insert it as a new entry).
    private func update(_ id: Int64, _ stored: UnsafeBufferPointer<UInt8>, _ values: [SQLValue], _ recordId: JSON?) throws -> Bool {
        let s = updateStatement
        defer { s.reset() }  // while `stored` is valid: it is bound, not copied
        s.bind(1, borrowedText: stored)
        s.bind(2, now)
        for (n, i) in positions.enumerated() { values[i].bind(s, n + 3) }
        s.bind(positions.count + 3, id)
        try step(s, recordId)
        return c.changes > 0
    }

    /// Steps `s`, which writes the entry, telling the change feed its
    /// record id: reading it back for the feed cost a lookup per entry.
    private func step(_ s: Statement, _ recordId: JSON?) throws {
        guard let capture = c.changeCapture else { return _ = try s.step() }
        try capture.writing(soup: soup.id, recordId: recordId) { _ = try s.step() }
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
