import TureenCore

extension StoreTransaction {
    /// Creates `tables` (and their indexes) where the store lacks them,
    /// without attaching them to any soup.
    public func create(_ tables: [SideTable]) throws {
        for t in tables {
            try requireWrite(t.name)
            guard t.isPlain else { throw TureenError(.internal, "side table \(t.name): a name that is not plain") }
            for sql in t.createSQL { try connection.execute(sql) }
        }
    }
}

extension SoupTransaction {
    /// Creates `tables` where missing and installs their triggers on this
    /// soup (once per soup; they go with the soup's table when it is
    /// dropped). Only declared names and the soup's integer id reach the SQL.
    public func attach(_ tables: [SideTable]) throws {
        // The tables first: SQLite accepts a trigger naming a missing
        // table, then fails every write of the soup.
        try transaction.create(tables)
        let t = soup.table, id = soup.id
        for side in tables {
            guard let snap = side.snapshot else { continue }
            try connection.execute("""
                CREATE TRIGGER IF NOT EXISTS \(t)_\(snap.trigger) BEFORE UPDATE OF soup ON \(t)
                BEGIN UPDATE \(side.name) SET \(snap.column) = old.soup WHERE \(side.triggerCondition(id)) AND \(snap.column) IS NULL; END
                """)
        }
        var triggers: [String] = []
        for side in tables where !triggers.contains(side.forgetTrigger) { triggers.append(side.forgetTrigger) }
        for trigger in triggers {
            let deletes = tables.filter { $0.forgetTrigger == trigger }
                .map { "DELETE FROM \($0.name) WHERE \($0.triggerCondition(id));" }
            try connection.execute("""
                CREATE TRIGGER IF NOT EXISTS \(t)_\(trigger) AFTER DELETE ON \(t)
                BEGIN \(deletes.joined(separator: "\n      ")) END
                """)
        }
    }

    /// This soup's side records in `table`.
    public func side(_ table: SideTable) -> SideRecords {
        SideRecords(connection: connection, table: table, soupId: soup.id, writes: writes)
    }
}
