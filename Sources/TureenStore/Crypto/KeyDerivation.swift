import TureenCore

extension StoreOptions {
    /// The passphrase replaced by the key SQLCipher would derive from it,
    /// given to SQLCipher as a raw key with the file's salt (its documented
    /// "x'key salt'" form). The file and the key are the same, byte for byte;
    /// what changes is that the store derives once per open, where SQLCipher
    /// derived again for every connection (each reader cost another quarter
    /// of a second at 256,000 rounds, measured by bench/sync_bench.c).
    ///
    /// The salt is the file's first 16 bytes; a new store gets a random one,
    /// as SQLCipher would give it. When the file's state is unusual (shorter
    /// than a salt, or only a WAL), SQLCipher derives as before.
    func derivingKey(for path: String, api: SQLiteAPI) -> StoreOptions {
        guard case .passphrase(let passphrase) = keying, let rounds = effectiveKdfIter else { return self }
        let salt: [UInt8]
        if let header = Connection.fileHeader(path: path, api: api) {
            salt = header
        } else if (StoreFile.size(path) ?? 0) == 0 && !StoreFile.exists(path + "-wal") {
            var rng = SystemRandomNumberGenerator()
            salt = (0..<StoreOptions.saltLength).map { _ in UInt8.random(in: 0...255, using: &rng) }
        } else {
            return self
        }
        // Should libcrypto fail, SQLCipher derives the same key itself.
        guard let key = try? PBKDF2.sha1(password: Array(passphrase.utf8), salt: salt, iterations: rounds,
                                         keyLength: StoreOptions.keyLength) else { return self }
        var derived = self
        derived.keying = .derived(Hex.string(key) + Hex.string(salt))
        derived.kdfIter = nil
        return derived
    }

    /// SQLCipher 3's AES-256 key and KDF salt sizes.
    static let keyLength = 32
    static let saltLength = 16
}
