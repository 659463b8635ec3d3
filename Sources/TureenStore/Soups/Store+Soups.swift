import TureenCore

/// Soup management: register, look up, clear and drop.
extension Store {
    public func registerSoup(_ name: String, specs: [IndexSpec]) throws {
        try refuseEngineSoup(name, "registered")
        try register(name, specs: specs)
    }

    func register(_ name: String, specs: [IndexSpec]) throws {
        try SoupCatalog.validateName(name)
        try IndexSpec.validateCount(specs)
        try withConnection { c in
            try c.transaction {
                if let existing = try catalog.find(name, c) {
                    if Set(existing.specs) == Set(specs) { return }
                    throw TureenError.invalid("soup '\(name)' is already registered with other index specs; change them with \(callNames[.soupAlter])")
                }
                let ins = try c.prepare("INSERT INTO tureen_soups (name) VALUES (?)")
                ins.bind(1, name)
                try ins.step()
                let soup = Soup.make(id: c.lastInsertRowid, name: name, specs: specs)
                try SoupSchema.create(c, soup)
                try SoupSchema.createIndexes(c, soup)
                try SoupCatalog.writeSpecs(c, soup)
            }
        }
    }

    public func soupExists(_ name: String) throws -> Bool {
        try withReader { try catalog.find(name, $0) != nil }
    }

    public func soupNames() throws -> [String] {
        try withReader { try catalog.names($0) }
    }

    public func indexSpecs(_ name: String) throws -> [IndexSpec] {
        try withReader { try catalog.soup(name, $0).specs }
    }

    /// Removes every entry; ids are not reused afterwards.
    public func clearSoup(_ name: String) throws {
        try refuseEngineSoup(name, "cleared")
        return try withConnection { c in
            try c.transaction { try clearSoup(c, name) }
        }
    }

    /// Removes every entry inside the caller's write transaction on `c`.
    func clearSoup(_ c: Connection, _ name: String) throws {
        try refuseEngineSoup(name, "cleared")
        let soup = try catalog.soup(name, c)
        capture.markCleared(soup.id)  // SQLite empties the table without visiting rows
        try capture.deleting(c, soup, ids: nil) {
            try c.execute("DELETE FROM \(soup.table)")
            if let fts = soup.ftsTable { try c.execute("DELETE FROM \(fts)") }
        }
    }

    public func dropSoup(_ name: String) throws {
        try refuseEngineSoup(name, "dropped")
        return try withConnection { c in
            try c.transaction {
                let soup = try catalog.soup(name, c)
                capture.markDropped(soup.id, name: name)
                try capture.deleting(c, soup, ids: nil) { try SoupSchema.drop(c, soup) }
                let d1 = try c.prepare("DELETE FROM tureen_soup_indexes WHERE soup_id = ?")
                d1.bind(1, soup.id)
                try d1.step()
                let d2 = try c.prepare("DELETE FROM tureen_soups WHERE id = ?")
                d2.bind(1, soup.id)
                try d2.step()
                let d3 = try c.prepare("DELETE FROM tureen_long_ops WHERE soup = ?")
                d3.bind(1, name)
                try d3.step()
                try SoupCatalog.bump(c)
            }
        }
    }
}
