import TureenCore

/// Soups that belong to an engine above the store, reserved by it at run
/// time. The app may read them like any soup but not write them: the
/// engine's own state, forged or edited, could mislead it, so only the
/// engine writes them, through soup transactions.
extension Store {
    /// Reserves soup `name` for an engine, `owner` naming it in the
    /// refusals the app meets ("the ... engine"). Per store handle, and
    /// idempotent: an engine reserves its soups as the store opens.
    public func reserveEngineSoup(_ name: String, owner: String) {
        engineSoups.withLock { $0[name] = owner }
    }

    /// Fails when the app asks to change an engine's soup.
    public func refuseEngineSoup(_ name: String?, _ doing: String) throws {
        guard let n = name, let owner = engineSoups.withLock({ $0[n] }) else { return }
        throw TureenError.invalid("soup '\(n)' belongs to \(owner): it can be read, but not \(doing) by the app")
    }

    /// Registers one of the engines' soups (the app's own register of it is refused).
    public func registerEngineSoup(_ name: String, specs: [IndexSpec]) throws {
        guard engineSoups.withLock({ $0[name] != nil }) else { throw TureenError.invalid("'\(name)' is not an engine soup") }
        try register(name, specs: specs)
    }
}
