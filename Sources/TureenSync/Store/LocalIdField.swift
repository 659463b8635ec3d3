import TureenStore
import TureenCore

/// tureen_local_id_fields: per soup, the id field its last
/// tureen_local_upsert named records by. tureen_local_delete takes none, and
/// its events must name a record by the same field as the upsert's did.
/// Keyed by soup id, never reused, like the other sync tables.
extension SyncTables.Table {
    static let localIdFields = KeyedTable("tureen_local_id_fields", key: "soup", columns: [EngineColumn("field", .text)])
}

extension SyncTables {
    static func keepLocalIdField(_ tx: SoupTransaction, _ field: String) throws {
        let table = tx.transaction.keyed(Table.localIdFields)
        try table.create()
        try table.put(tx.soup.id, [("field", .text(field))])
    }

    /// The field kept by `keepLocalIdField`; nil before any.
    static func localIdField(_ tx: SoupTransaction) throws -> String? {
        let table = tx.transaction.keyed(Table.localIdFields)
        guard try table.exists() else { return nil }
        return try table.get(tx.soup.id, ["field"])?[0].stringValue
    }
}
