import TureenStore

/// The soups this engine keeps its own data in, reserved in the store so
/// the app may read but not write them: the sync engine keeps its states
/// in `syncs_soup` (SmartSync's name, so its users find them), the
/// cached-fetch layer its answers in `cache_soup`. A forged or edited state
/// could point a sync elsewhere or make it unreadable, a forged answer would
/// be served as the server's.
public enum EngineSoups {
    /// Reserves them in `store`; its session does, as it opens.
    static func reserve(in store: Store) {
        store.reserveEngineSoup(SyncState.soup, owner: "the sync engine")
        store.reserveEngineSoup(CacheShelf.soup, owner: "the cache (\(store.callNames[.cacheClear]) empties it)")
    }
}
