/// A call of Tureen's API that a message sends its reader to ("change them
/// with <alter a soup>"). The logic names the call; the face the reader
/// called through (the C ABI, or Swift for code that calls the engine
/// directly) says how it is spelled there, so a message never names a
/// function its reader did not call. Bindings over the C ABI respell the
/// C names in turn (the Python binding's _python_names.py).
public enum APICall: Sendable, CaseIterable {
    case soupAlter
    case storeInterrupt
    case blobPut
    case cacheClear
    case syncDown
    case syncUp
    case resync
    case syncUpdate
    case syncDelete
    case syncRepublish
    case syncErrorResolve
}

/// How one face spells the calls of its API in messages.
public struct CallNames: Sendable {
    private let spell: @Sendable (APICall) -> String

    public init(_ spell: @escaping @Sendable (APICall) -> String) { self.spell = spell }

    public subscript(_ call: APICall) -> String { spell(call) }

    /// The Swift API's own names, for a caller of the Swift modules.
    public static let swift = CallNames { call in
        switch call {
        case .soupAlter: return "Store.alterSoup"
        case .storeInterrupt: return "Store.interruptQueries"
        case .blobPut: return "Store.putBlob"
        case .cacheClear: return "SyncManager.clearCache"
        case .syncDown: return "SyncManager.syncDown"
        case .syncUp: return "SyncManager.syncUp"
        case .resync: return "SyncManager.resync"
        case .syncUpdate: return "SyncManager.update"
        case .syncDelete: return "SyncManager.delete"
        case .syncRepublish: return "SyncManager.republish"
        case .syncErrorResolve: return "SyncManager.resolveError"
        }
    }
}
