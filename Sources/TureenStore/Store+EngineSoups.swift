/// Soups that belong to the library's own engines: the sync engine keeps its
/// states in `syncs_soup` (SmartSync's name, so its users find them). The
/// app may read them like any soup but not write them: a forged or edited
/// state could point a sync elsewhere or make it unreadable, so only the
/// engine writes them, through soup transactions.
extension Store {
    public static let engineSoups: Set<String> = ["syncs_soup"]

    /// Fails when the app asks to change an engine's soup.
    static func refuseEngineSoup(_ name: String?, _ doing: String) throws {
        guard let n = name, engineSoups.contains(n) else { return }
        throw TureenError.invalid("soup '\(n)' belongs to the sync engine: it can be read, but not \(doing) by the app")
    }

    /// Registers one of the engines' soups (the app's own register of it is refused).
    public func registerEngineSoup(_ name: String, specs: [IndexSpec]) throws {
        guard Store.engineSoups.contains(name) else { throw TureenError.invalid("'\(name)' is not an engine soup") }
        try register(name, specs: specs)
    }
}
