import TureenCore

/// Soups that belong to the library's own engines: the sync engine keeps its
/// states in `syncs_soup` (SmartSync's name, so its users find them), the
/// cached-fetch layer its answers in `cache_soup`. The app may read them
/// like any soup but not write them: a forged or edited state could point a
/// sync elsewhere or make it unreadable, a forged answer would be served as
/// the server's, so only the engines write them, through soup transactions.
extension Store {
    public static let engineSoups: Set<String> = ["syncs_soup", "cache_soup"]

    /// Fails when the app asks to change an engine's soup.
    public static func refuseEngineSoup(_ name: String?, _ doing: String) throws {
        guard let n = name, engineSoups.contains(n) else { return }
        let owner = n == "cache_soup" ? "the cache (tureen_cache_clear empties it)" : "the sync engine"
        throw TureenError.invalid("soup '\(n)' belongs to \(owner): it can be read, but not \(doing) by the app")
    }

    /// Registers one of the engines' soups (the app's own register of it is refused).
    public func registerEngineSoup(_ name: String, specs: [IndexSpec]) throws {
        guard Store.engineSoups.contains(name) else { throw TureenError.invalid("'\(name)' is not an engine soup") }
        try register(name, specs: specs)
    }
}
