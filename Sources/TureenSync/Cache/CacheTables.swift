import TureenStore
import TureenCore

/// The cached-fetch layer's bookkeeping beside its soup (`cache_soup`, whose
/// entries hold the answers): tureen_cache_use keeps, per cached entry, when
/// it was last read and how many bytes its answer takes. It is a table of its
/// own, not a member of the entry, so that a cache hit (which moves the
/// entry up the least-recently-used order) writes no soup entry and sends no
/// change event: only new answers do. Side records of the one soup, so an
/// entry removed by any path takes its bookkeeping with it.
enum CacheTables {
    static let table = SideTable("tureen_cache_use", key: .entry,
                                 columns: [EngineColumn("used_at", .integer), EngineColumn("bytes", .integer)],
                                 indexes: [.init("tureen_cache_use_lru", ["used_at", "entry_id"])], forgetTrigger: "forget_use")

    /// Installs the table and the soup's trigger.
    static func watch(_ tx: SoupTransaction) throws {
        try tx.attach([table])
    }

    /// Records that entry `entryId` (taking `bytes`, when it was just
    /// written) is the most recently used. The order is a counter, not a
    /// clock: two uses in one millisecond, or a clock set back, still rank.
    static func use(_ tx: SoupTransaction, _ entryId: Int64, bytes: Int64? = nil) throws {
        if let b = bytes {
            try tx.side(table).insert(entryId, [("bytes", .integer(b)), ("used_at", .next)], existing: .replace)
        } else {
            try tx.side(table).update(entryId, [("used_at", .next)])
        }
    }

    /// The bytes every cached answer takes together.
    static func totalBytes(_ tx: SoupTransaction) throws -> Int64 {
        try tx.side(table).sum("bytes")
    }

    /// Entries with their sizes, least recently used first, sparing `keep`.
    static func leastRecentlyUsed(_ tx: SoupTransaction, sparing keep: Int64?, limit: Int) throws -> [(id: Int64, bytes: Int64)] {
        try tx.side(table).rows(["bytes"], orderedBy: ["used_at", "entry_id"], limit: limit, excluding: keep)
            .map { (id: $0.key, bytes: $0.values[0].int64Value ?? 0) }
    }
}
