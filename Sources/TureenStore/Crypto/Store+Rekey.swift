import Glibc
import TureenCore

extension Store {
    /// Re-encrypts the store with a new key (or encrypts or decrypts it).
    ///
    /// The data is exported into a new file under the new key, which then
    /// replaces the store by an atomic rename. Whenever the process dies, the
    /// path holds a complete store that opens with exactly one of the two keys;
    /// a leftover copy is deleted on the next open.
    public func rekey(_ newOptions: StoreOptions) throws {
        try refuseInTransaction("rekey")
        try lock.withLock {
            guard let conn = writerForRekey() else { throw TureenError.misuse("the store '\(path)' is closed") }
            if OpenStores.count(canonicalPath) > 1 {
                throw TureenError.misuse("the store '\(path)' is open more than once in this process; close the other handles before rekeying")
            }
            // The store's own readers finish first and new ones wait: the
            // file must be ours alone to leave WAL mode and be replaced.
            pauseReaders()
            defer { resumeReaders(options: options) }
            let tmp = absolutePath + StoreFile.rekeySuffix
            for f in StoreFile.rekeyLeftovers(of: absolutePath) { try StoreFile.unlinkIfPresent(f) }
            do {
                try export(conn, to: tmp, options: newOptions)
                // The copy must be readable with the new key before it replaces anything.
                var check = newOptions
                check.create = false
                _ = try Store.connect(path: tmp, api: api, options: check, existed: true)
                try conn.execute("PRAGMA journal_mode = DELETE")
                StoreFile.fsync(path: tmp)
            } catch {
                _ = try? conn.execute("PRAGMA journal_mode = WAL")
                for f in StoreFile.rekeyLeftovers(of: absolutePath) { try? StoreFile.unlinkIfPresent(f) }
                throw error
            }
            // From here on the old file is complete without its WAL (journal
            // mode DELETE checkpointed and removed it), so dropping the
            // connection and renaming loses nothing.
            replaceWriter(with: nil)
            for s in StoreFile.suffixes {
                try? StoreFile.unlinkIfPresent(tmp + s)
                try? StoreFile.unlinkIfPresent(absolutePath + s)
            }
            if rename(tmp, absolutePath) != 0 {
                let why = StoreFile.lastErrno
                replaceWriter(with: try? Store.connect(path: absolutePath, api: api, options: options, existed: true))
                throw TureenError(.io, "cannot replace '\(path)' with its re-encrypted copy: \(why)")
            }
            StoreFile.fsync(path: StoreFile.directory(of: absolutePath), directory: true)
            var reopened = newOptions.derivingKey(for: absolutePath, api: api)
            reopened.busyTimeoutMs = options.busyTimeoutMs
            reopened.queryTimeoutMs = options.queryTimeoutMs
            reopened.queryMemoryMb = options.queryMemoryMb
            options = reopened
            replaceWriter(with: try Store.connect(path: absolutePath, api: api, options: options, existed: true))
        }
    }

    private func export(_ conn: Connection, to tmp: String, options newOptions: StoreOptions) throws {
        // ATTACH opens with the store's own flags: a store opened with
        // "create": false could not make the copy. The copy is made here,
        // empty and readable by the owner alone.
        let fd = Glibc.open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TureenError(.io, "cannot create '\(tmp)' for the re-encrypted copy: \(StoreFile.lastErrno)") }
        Glibc.close(fd)
        let attach = try conn.prepare("ATTACH DATABASE ? AS tureen_rekey KEY ?")
        attach.bind(1, tmp)
        attach.bind(2, newOptions.keyBytes.map { String(decoding: $0, as: UTF8.self) } ?? "")
        try attach.step()
        defer { _ = try? conn.execute("DETACH DATABASE tureen_rekey") }
        if let n = newOptions.effectiveKdfIter { try conn.execute("PRAGMA tureen_rekey.kdf_iter = \(n)") }
        if newOptions.isEncrypted { try conn.execute("PRAGMA tureen_rekey.cipher_page_size = \(StoreFile.cipherPageSize)") }
        _ = try conn.scalarText("SELECT sqlcipher_export('tureen_rekey')")
    }
}
