import TureenCore

/// One write transaction on one soup, for callers that must change entries
/// and their own side records atomically (an engine marks an entry in the
/// same commit as the copy it keeps beside it).
public final class SoupTransaction {
    let connection: Connection
    public let soup: Soup
    let writer: EntryWriter
    let keyIndex: SoupIndex?
    /// False inside a read transaction (see StoreTransaction).
    let writes: Bool

    init(_ c: Connection, _ soup: Soup, keyPath: String?, writes: Bool = true) throws {
        connection = c
        self.writes = writes
        self.soup = soup
        writer = try EntryWriter(c, soup, externalIdPath: keyPath)
        keyIndex = writer.externalIndex
    }

    /// The transaction this one runs in, for the engine's other tables.
    public var transaction: StoreTransaction { StoreTransaction(connection: connection, writes: writes) }

    /// The entry whose key path holds `key`, if any.
    public func entryId(key: JSON) throws -> Int64? {
        try writer.external?.id(key: key)
    }

    /// The entries whose `idField` holds these record ids (nil where none
    /// does), whatever key path the transaction writes by.
    public func entryIds(recordIds: [JSON], idField: String) throws -> [Int64?] {
        let lookup = try KeyLookup(connection, soup, path: idField, role: "id field")
        return try recordIds.map { try lookup.id(key: $0) }
    }

    /// The entry as the host sees it (with `_soupEntryId`), or nil.
    public func entry(id: Int64) throws -> JSONObject? {
        let s = try connection.cached("SELECT soup, lastModified FROM \(soup.table) WHERE id = ?")
        defer { s.reset() }
        s.bind(1, id)
        guard try s.step() else { return nil }
        guard case .object(var o) = try JSONParser.parse(bytes: s.textBytes(0)) else {
            throw TureenError(.corrupt, "entry \(id) of soup '\(soup.name)' is not a JSON object")
        }
        o[EntryText.idKey] = .int(id)
        o[EntryText.modifiedKey] = .int(s.int64(1))
        return o
    }

    /// Inserts or updates the entry (by `_soupEntryId`, else by the key path)
    /// and returns its id. `new`: `entryId(key:)` found none for its key in
    /// this transaction, so it is inserted without looking again.
    @discardableResult
    public func save(_ entry: JSONObject, new: Bool = false) throws -> Int64 {
        try writer.save(entry, new: new)
    }

    /// `save`, also writing the entry as stored (with `_soupEntryId` and
    /// `_soupLastModifiedDate`) into `out`, as tureen_upsert answers.
    @discardableResult
    public func save(_ entry: JSONObject, into out: JSONWriter) throws -> Int64 {
        try EntryText.withStored(entry) { stored in
            let id = try writer.write(entry, stored: stored)
            EntryText.write(stored: stored, id: id, modified: writer.now, into: out)
            return id
        }
    }

    /// `save`, with the text to store given: the entry's members but the two
    /// the store generates (`EntryText`), in any spacing. For a caller that
    /// has that text already, and then saves writing it again.
    public func save(_ entry: JSONObject, stored: UnsafeBufferPointer<UInt8>, new: Bool = false) throws -> Int64 {
        try writer.write(entry, stored: stored, new: new)
    }

    public func delete(id: Int64) throws {
        try Store.deleteEntries(connection, soup, [id])
    }

    /// Calls `body` with every entry whose top-level `flag` is true, in id order.
    public func entries(flagged flag: String, _ body: (JSONObject) throws -> Void) throws {
        let s = try connection.prepare("SELECT id FROM \(soup.table) WHERE \(EntryFunction.pathName)(soup, ?) = 1 ORDER BY id")
        s.bind(1, flag)
        var ids: [Int64] = []
        while try s.step() { ids.append(s.int64(0)) }
        s.reset()
        for id in ids { if let e = try entry(id: id) { try body(e) } }
    }

    /// Every entry id with its key, for sweeps over the whole soup.
    public func keys() throws -> [(id: Int64, key: String?, entry: JSONObject)] {
        let s = try connection.prepare("SELECT id FROM \(soup.table) ORDER BY id")
        var ids: [Int64] = []
        while try s.step() { ids.append(s.int64(0)) }
        s.reset()
        var out: [(Int64, String?, JSONObject)] = []
        for id in ids {
            guard let e = try entry(id: id) else { continue }
            out.append((id, keyIndex.flatMap { e[$0.spec.path].flatMap(SoupTransaction.keyText) }, e))
        }
        return out
    }

    /// A record key as text: strings as they are, integers in decimal.
    public static func keyText(_ v: JSON) -> String? {
        switch v {
        case .string(let s): return s
        case .int(let i): return String(i)
        default: return nil
        }
    }
}

extension Store {
    /// Runs `body` inside one immediate transaction of the writer, on `soup`,
    /// with entries keyed by `keyPath` (an index of the soup, or nil). For the
    /// app's writes: an engine's soup is refused.
    public func withSoupTransaction<T>(_ soupName: String, keyPath: String?, _ body: (SoupTransaction) throws -> T) throws -> T {
        try refuseEngineSoup(soupName, "written")
        return try withConnection { c in
            try c.transaction {
                try body(try SoupTransaction(c, try catalog.soup(soupName, c), keyPath: keyPath))
            }
        }
    }
}
