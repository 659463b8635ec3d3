extension Store {
    /// Gives the space of deleted entries back to the file system: VACUUM
    /// rewrites the file without free pages, and a truncating checkpoint
    /// empties the write-ahead log it filled.
    public func compact() throws {
        try withConnection { c in
            try c.execute("VACUUM")
            try c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }
}

extension Store {
    /// SQLite's integrity check of the whole file; with SQLCipher every page
    /// is also authenticated as it is read. Returns the problems found.
    public func integrityProblems() throws -> [String] {
        try withReader { c in
            let s = try c.prepare("PRAGMA integrity_check")
            var lines: [String] = []
            while try s.step() { lines.append(s.text(0) ?? "") }
            return lines == ["ok"] ? [] : lines
        }
    }
}
