import TureenStore
import TureenCore

extension SyncTables {
    /// The server record entry `entryId` was last synced from, or nil: the
    /// kept copy without the fields that only exist locally (a base that is
    /// the entry itself carries its flags and soup bookkeeping).
    static func base(_ tx: SoupTransaction, _ entryId: Int64) throws -> JSONObject? {
        try storedBase(tx, entryId).map(LocalFlags.withoutLocalFields)
    }
}
