import TureenCore

extension Store {
    /// Gives the space of deleted entries back to the file system: blobs
    /// that no entry refers to any more (past their grace period) go first,
    /// then VACUUM rewrites the file without free pages, and a truncating
    /// checkpoint empties the write-ahead log it filled.
    public func compact() throws {
        try refuseInTransaction("compact (VACUUM)")
        _ = try collectBlobs()
        try withConnection { c in
            try c.execute("VACUUM")
            try checkpointer.paused { try c.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        }
    }
}

extension Store {
    /// SQLite's integrity check of the whole file; with SQLCipher every page
    /// is also authenticated as it is read. Returns the problems found.
    ///
    /// A page that fails to decrypt or authenticate makes the check itself
    /// fail; SQLCipher reports that as a generic error ("SQL logic error"),
    /// which here can only mean damage, so it is TUREEN_E_CORRUPT.
    public func integrityProblems() throws -> [String] {
        try withReader { c in
            do {
                let s = try c.prepare("PRAGMA integrity_check")
                var lines: [String] = []
                while try s.step() { lines.append(s.text(0) ?? "") }
                return lines == ["ok"] ? [] : lines
            } catch let e as TureenError where e.code == .internal || e.code == .key {
                throw TureenError(.corrupt, "the store '\(path)' is damaged: reading a page failed during the integrity check (\(e.message))")
            }
        }
    }
}
