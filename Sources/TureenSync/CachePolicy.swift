import TureenStore

/// How a cached fetch weighs the server against the cache: SmartSync's cache
/// policies and Convertigo C8o's local-cache priorities, by their own names.
enum CachePolicy: String, CaseIterable {
    case ignoreCacheData = "IgnoreCacheData"
    case reloadAndReturnCacheOnError = "ReloadAndReturnCacheOnError"
    case returnCacheDataDontReload = "ReturnCacheDataDontReload"
    case returnCacheDataAndReload = "ReturnCacheDataAndReload"
    case reloadIfExpiredAndReturnCacheData = "ReloadIfExpiredAndReturnCacheData"
    case invalidateCacheDontReload = "InvalidateCacheDontReload"
    case invalidateCacheAndReload = "InvalidateCacheAndReload"
    case server = "SERVER"
    case local = "LOCAL"

    /// SmartSync's iOS guide spells one policy differently; both are taken.
    private static let aliases = ["ReloadAndReturnCacheOnFailure": CachePolicy.reloadAndReturnCacheOnError]

    static func named(_ name: String) throws -> CachePolicy {
        if let p = CachePolicy(rawValue: name) ?? aliases[name] { return p }
        let known = allCases.map(\.rawValue).joined(separator: ", ")
        throw TureenError.invalid("unknown cache policy '\(HeaderText.printable(String(name.prefix(80))))'; known: \(known)")
    }

    /// Whether a cached answer may stand in when the server cannot be used,
    /// and which: SmartSync's fallbacks take any age, C8o's SERVER priority
    /// only an answer still within its time to live.
    enum Fallback { case none, any, fresh }

    var fallback: Fallback {
        switch self {
        case .reloadAndReturnCacheOnError, .returnCacheDataAndReload, .reloadIfExpiredAndReturnCacheData: return .any
        case .server: return .fresh
        default: return .none
        }
    }
}
