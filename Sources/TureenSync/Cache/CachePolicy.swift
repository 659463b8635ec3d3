import TureenStore
import TureenCore

/// How a cached fetch weighs the server against the cache: SmartSync's cache
/// policies and Convertigo C8o's local-cache priorities, by their own names.
enum CachePolicy: String, CaseIterable {
    case ignoreCacheData = "IgnoreCacheData"
    case reloadAndReturnCacheOnError = "ReloadAndReturnCacheOnError"
    case returnCacheDataDontReload = "ReturnCacheDataDontReload"
    case reloadAndReturnCacheData = "ReloadAndReturnCacheData"
    case returnCacheDataAndReload = "ReturnCacheDataAndReload"
    case reloadIfExpiredAndReturnCacheData = "ReloadIfExpiredAndReturnCacheData"
    case invalidateCacheDontReload = "InvalidateCacheDontReload"
    case invalidateCacheAndReload = "InvalidateCacheAndReload"
    case server = "SERVER"
    case local = "LOCAL"

    /// SmartSync's iOS guide spells one policy differently; both are taken.
    private static let aliases = ["ReloadAndReturnCacheOnFailure": CachePolicy.reloadAndReturnCacheOnError]

    /// Every name taken: the iOS spellings, and Android's (the same words in
    /// capitals joined by "_": RELOAD_AND_RETURN_CACHE_DATA).
    private static let byName: [String: CachePolicy] = {
        var names = aliases
        for p in allCases { names[p.rawValue] = p }
        for (name, p) in names { names[androidSpelling(name)] = p }
        return names
    }()

    private static func androidSpelling(_ name: String) -> String {
        var out = ""
        var afterLower = false
        for c in name {
            if c.isUppercase && afterLower { out.append("_") }
            afterLower = c.isLowercase
            out += c.uppercased()
        }
        return out
    }

    static func named(_ name: String) throws -> CachePolicy {
        if let p = byName[name] { return p }
        let known = allCases.map(\.rawValue).joined(separator: ", ")
        throw TureenError.invalid("unknown cache policy '\(HeaderText.printable(String(name.prefix(80))))'; known: \(known), each also in Android's spelling (IGNORE_CACHE_DATA...)")
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
