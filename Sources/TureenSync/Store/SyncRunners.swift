import TureenStore
import TureenCore

/// Which run holds each sync, and so its soup, across every handle and
/// process of the store.
///
/// - tureen_sync_runners: one row per sync being run (or changed) now: its
///   soup and the LiveOwner text of the run.
///
/// Syncs of one soup running at once lose data. Two runs of a sync up send
/// the same change, and the later answer, written over an edit the earlier
/// one already synced, leaves the server with the stale copy and the entry
/// clean. A sync down running beside a sync up takes the device's own
/// change, on the server but not yet recorded here, for the server's, and
/// writes it over a newer edit. A handle's own claims are in memory
/// (SyncManager); these rows make them hold for other handles and
/// processes too. A row whose owner is gone (a killed process) is nobody's:
/// the next run takes the sync over, which is how a crashed sync up is sent
/// again.
enum SyncRunners {
    /// A claim on one sync; `end` it once the row is gone or given up.
    struct Claim: Equatable {
        fileprivate let owner: LiveOwner

        /// Ends the claim for this process, whether or not its row could be
        /// deleted: a row left behind names an owner that is no longer alive.
        func end() { owner.release() }
    }

    /// What a claim found.
    enum Outcome {
        case claimed(Claim)
        /// A live run holds this very sync.
        case syncHeld
        /// A live run of another sync, `syncId`, holds the soup.
        case soupHeld(syncId: Int64)
    }

    private static let table = KeyedTable("tureen_sync_runners", key: "sync_id",
                                          columns: [EngineColumn("soup", .text), EngineColumn("owner", .text)])

    /// Claims sync `syncId` of `soup` inside the caller's write transaction,
    /// unless a live run holds the sync or another sync of the soup (then
    /// nothing is written).
    static func claim(_ t: StoreTransaction, syncId: Int64, soup: String) throws -> Outcome {
        let rows = t.keyed(table)
        try rows.create()
        if let held = try liveHolder(rows, syncId: syncId, soup: soup) { return held }
        let owner = LiveOwner.make()
        do { try rows.put(syncId, [("soup", .text(soup)), ("owner", .text(owner.text))]) } catch {
            owner.release()
            throw error
        }
        return .claimed(Claim(owner: owner))
    }

    /// What a claim of sync `syncId` of `soup` would find now: `syncHeld`,
    /// `soupHeld`, or nil when both are free (never `claimed`). Only reads,
    /// so it may run in a read transaction: a wait for a soup polls with it
    /// and takes no write lock, which a long run elsewhere may need. What
    /// it saw can be stale by the time a claim is written, so `claim`
    /// checks again.
    static func holder(_ t: StoreTransaction, syncId: Int64, soup: String) throws -> Outcome? {
        let rows = t.keyed(table)
        guard try rows.exists() else { return nil }
        return try liveHolder(rows, syncId: syncId, soup: soup)
    }

    private static func liveHolder(_ rows: KeyedRecords, syncId: Int64, soup: String) throws -> Outcome? {
        for row in try rows.rows(["owner"], whereAnyOf: [("sync_id", .integer(syncId)), ("soup", .text(soup))]) {
            guard let text = row.values[0].stringValue, let owner = LiveOwner(text: text), owner.isAlive else { continue }
            return row.key == syncId ? .syncHeld : .soupHeld(syncId: row.key)
        }
        return nil
    }

    /// Deletes the claim's row, inside the caller's write transaction, if
    /// it still names the claim.
    static func release(_ t: StoreTransaction, syncId: Int64, _ claim: Claim) throws {
        let rows = t.keyed(table)
        try rows.create()
        try rows.delete(syncId, matching: [("owner", .text(claim.owner.text))])
    }

    /// Whether sync `syncId`'s row still names `claim`: no run has claimed
    /// the sync since (a handle of this process may, once `claim` ended).
    static func names(_ t: StoreTransaction, syncId: Int64, _ claim: Claim) throws -> Bool {
        let rows = t.keyed(table)
        try rows.create()
        return try rows.get(syncId, ["owner"])?[0].stringValue == claim.owner.text
    }

    /// Whether a live run holds sync `syncId`. Only reads, so it may run in
    /// a read transaction.
    static func isHeld(_ t: StoreTransaction, syncId: Int64) throws -> Bool {
        let rows = t.keyed(table)
        guard try rows.exists(), let text = try rows.get(syncId, ["owner"])?[0].stringValue,
              let owner = LiveOwner(text: text) else { return false }
        return owner.isAlive
    }
}
