import TureenCore

/// Who made a committed change: the app's own calls, or the sync engine
/// applying the server's records and its answers.
public enum ChangeOrigin: String, Sendable {
    case app, sync
    /// Another process wrote the file (its entries read from the change
    /// feed, or none known when the feed no longer holds them).
    case external
}

/// What one commit changed in one soup, as listeners receive it:
/// `{"soup", "created", "updated", "deleted", "origin", "cleared"}`, plus
/// `"altered": true` when its index specs changed and `"dropped": true` when
/// the soup itself went.
public struct SoupChange: Sendable, Equatable {
    public var soup: String
    public var created: [Int64]
    public var updated: [Int64]
    public var deleted: [Int64]
    public var origin: ChangeOrigin
    public var cleared: Bool
    public var altered: Bool
    public var dropped: Bool

    public var json: JSON {
        var o = JSONObject()
        o["soup"] = .string(soup)
        o["created"] = .array(created.map { .int($0) })
        o["updated"] = .array(updated.map { .int($0) })
        o["deleted"] = .array(deleted.map { .int($0) })
        o["origin"] = .string(origin.rawValue)
        o["cleared"] = .bool(cleared)
        if altered { o["altered"] = .bool(true) }
        if dropped { o["dropped"] = .bool(true) }
        return .object(o)
    }

    public var text: String { JSONWriter.string(json) }
}

/// One soup's changes inside the transaction in progress, folded as rows
/// change: a row inserted then deleted in one transaction is no change, one
/// deleted then inserted again (a replace) is an update.
struct SoupDelta {
    var created = Set<Int64>()
    var updated = Set<Int64>()
    var deleted = Set<Int64>()
    var cleared = false
    var altered = false
    var droppedName: String?

    mutating func inserted(_ id: Int64) {
        if deleted.remove(id) != nil { updated.insert(id) } else { created.insert(id) }
    }

    mutating func changed(_ id: Int64) {
        if !created.contains(id) { updated.insert(id) }
    }

    mutating func removed(_ id: Int64) {
        if created.remove(id) != nil { return }
        updated.remove(id)
        deleted.insert(id)
    }

    func change(soup: String, origin: ChangeOrigin) -> SoupChange {
        SoupChange(soup: soup, created: created.sorted(), updated: updated.sorted(), deleted: deleted.sorted(),
                   origin: origin, cleared: cleared, altered: altered, dropped: droppedName != nil)
    }
}
