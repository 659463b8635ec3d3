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
public enum SyncRunners {
    /// A claim on one sync; `end` it once the row is gone or given up.
    public struct Claim: Equatable {
        fileprivate let owner: LiveOwner

        /// Ends the claim for this process, whether or not its row could be
        /// deleted: a row left behind names an owner that is no longer alive.
        public func end() { owner.release() }
    }

    /// What a claim found.
    public enum Outcome {
        case claimed(Claim)
        /// A live run holds this very sync.
        case syncHeld
        /// A live run of another sync, `syncId`, holds the soup.
        case soupHeld(syncId: Int64)
    }

    private static let table = """
        CREATE TABLE IF NOT EXISTS tureen_sync_runners (sync_id INTEGER PRIMARY KEY, soup TEXT NOT NULL,
          owner TEXT NOT NULL)
        """

    /// Claims sync `syncId` of `soup` inside the caller's write transaction,
    /// unless a live run holds the sync or another sync of the soup (then
    /// nothing is written).
    public static func claim(_ c: Connection, syncId: Int64, soup: String) throws -> Outcome {
        try c.execute(table)
        if let held = try liveHolder(c, syncId: syncId, soup: soup) { return held }
        let owner = LiveOwner.make()
        let s = try c.cached("INSERT OR REPLACE INTO tureen_sync_runners (sync_id, soup, owner) VALUES (?, ?, ?)")
        defer { s.reset() }
        s.bind(1, syncId)
        s.bind(2, soup)
        s.bind(3, owner.text)
        do { _ = try s.step() } catch {
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
    public static func holder(_ c: Connection, syncId: Int64, soup: String) throws -> Outcome? {
        guard try c.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'tureen_sync_runners'") == 1 else { return nil }
        return try liveHolder(c, syncId: syncId, soup: soup)
    }

    private static func liveHolder(_ c: Connection, syncId: Int64, soup: String) throws -> Outcome? {
        let found = try c.cached("SELECT sync_id, owner FROM tureen_sync_runners WHERE sync_id = ? OR soup = ?")
        defer { found.reset() }
        found.bind(1, syncId)
        found.bind(2, soup)
        while try found.step() {
            guard let text = found.text(1), let owner = LiveOwner(text: text), owner.isAlive else { continue }
            let holder = found.int64(0)
            return holder == syncId ? .syncHeld : .soupHeld(syncId: holder)
        }
        return nil
    }

    /// Deletes the claim's row, inside the caller's write transaction, if
    /// it still names the claim.
    public static func release(_ c: Connection, syncId: Int64, _ claim: Claim) throws {
        try c.execute(table)
        let s = try c.cached("DELETE FROM tureen_sync_runners WHERE sync_id = ? AND owner = ?")
        defer { s.reset() }
        s.bind(1, syncId)
        s.bind(2, claim.owner.text)
        _ = try s.step()
    }

    /// Whether sync `syncId`'s row still names `claim`: no run has claimed
    /// the sync since (a handle of this process may, once `claim` ended).
    public static func names(_ c: Connection, syncId: Int64, _ claim: Claim) throws -> Bool {
        try c.execute(table)
        let s = try c.cached("SELECT 1 FROM tureen_sync_runners WHERE sync_id = ? AND owner = ?")
        defer { s.reset() }
        s.bind(1, syncId)
        s.bind(2, claim.owner.text)
        return try s.step()
    }

    /// Whether a live run holds sync `syncId`. Only reads, so it may run in
    /// a read transaction.
    public static func isHeld(_ c: Connection, syncId: Int64) throws -> Bool {
        guard try c.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'tureen_sync_runners'") == 1 else { return false }
        let s = try c.cached("SELECT owner FROM tureen_sync_runners WHERE sync_id = ?")
        defer { s.reset() }
        s.bind(1, syncId)
        guard try s.step(), let text = s.text(0), let owner = LiveOwner(text: text) else { return false }
        return owner.isAlive
    }
}
