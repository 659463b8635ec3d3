import TureenCore

extension CallNames {
    /// The C ABI's spelling of the calls messages send the reader to: the
    /// header's functions.
    static let c = CallNames { call in
        switch call {
        case .soupAlter: return "tureen_soup_alter"
        case .storeInterrupt: return "tureen_store_interrupt"
        case .blobPut: return "tureen_blob_put"
        case .cacheClear: return "tureen_cache_clear"
        case .syncDown: return "tureen_sync_down"
        case .syncUp: return "tureen_sync_up"
        case .resync: return "tureen_resync"
        case .syncUpdate: return "tureen_sync_update"
        case .syncDelete: return "tureen_sync_delete"
        case .syncRepublish: return "tureen_sync_republish"
        case .syncErrorResolve: return "tureen_sync_error_resolve"
        }
    }
}
