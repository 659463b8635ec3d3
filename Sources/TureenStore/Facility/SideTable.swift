import TureenCore

/// A table of per-entry side records an engine keeps beside soups: rows
/// keyed by soup id and entry id (or by entry id alone, for a table that
/// serves a single soup), that live and die with their entry. The engine
/// declares it once; the store writes the SQL and installs, on each soup
/// the engine attaches it to (`SoupTransaction.attach`), the triggers:
/// - after an entry is deleted, by any path (an engine, the app's remove,
///   clear soup), its rows go too, so nothing is kept for an entry that is
///   gone. Tables that name the same `forgetTrigger` share one trigger.
/// - with a `snapshot` column: before an entry is updated, the old entry
///   is copied into that column of its row where the column is NULL. An
///   engine that keeps a copy of each entry as it was (a base) then writes
///   NULL ("the entry itself") and pays for a copy only once the entry
///   changes.
/// Soup ids and entry ids are never reused (AUTOINCREMENT), so a dropped
/// soup's leftovers cannot be mistaken for those of a new soup of its name.
/// The tables live in the store, so they are encrypted and commit with the
/// entries.
public final class SideTable: Sendable {
    public enum Key: Sendable {
        /// Columns `soup` and `entry_id`.
        case soupAndEntry
        /// Column `entry_id` alone: the table serves one soup.
        case entry
    }

    /// The column the store fills with the old entry, and its trigger's
    /// name (after the soup's table name and an underscore).
    public struct Snapshot: Sendable {
        public let column: String
        public let trigger: String
        public init(column: String, trigger: String) {
            self.column = column
            self.trigger = trigger
        }
    }

    /// An index over some of the table's columns (`soup` and `entry_id`
    /// included), by its name.
    public struct Index: Sendable {
        public let name: String
        public let columns: [String]
        public init(_ name: String, _ columns: [String]) {
            self.name = name
            self.columns = columns
        }
    }

    public let name: String
    public let key: Key
    public let columns: [EngineColumn]
    /// Whether an entry may have several rows (no unique key on it).
    public let manyPerEntry: Bool
    public let indexes: [Index]
    public let snapshot: Snapshot?
    /// The name of the trigger that deletes the rows with their entry
    /// (after the soup's table name and an underscore).
    public let forgetTrigger: String

    public init(_ name: String, key: Key = .soupAndEntry, columns: [EngineColumn], manyPerEntry: Bool = false,
                indexes: [Index] = [], snapshot: Snapshot? = nil, forgetTrigger: String) {
        self.name = name
        self.key = key
        self.columns = columns
        self.manyPerEntry = manyPerEntry
        self.indexes = indexes
        self.snapshot = snapshot
        self.forgetTrigger = forgetTrigger
        let names = [name, forgetTrigger] + columns.map(\.name) + indexes.flatMap { [$0.name] + $0.columns }
            + [snapshot?.column, snapshot?.trigger].compactMap { $0 }
        isPlain = names.allSatisfy(EngineColumn.isPlainName)
    }

    /// Whether every name is plain (see EngineColumn); the facility
    /// refuses to write SQL from a declaration that is not.
    let isPlain: Bool

    var keyColumns: String {
        switch key {
        case .soupAndEntry: return "soup INTEGER NOT NULL, entry_id INTEGER NOT NULL"
        case .entry: return manyPerEntry ? "entry_id INTEGER NOT NULL" : "entry_id INTEGER PRIMARY KEY"
        }
    }

    var createSQL: [String] {
        let unique = key == .soupAndEntry && !manyPerEntry ? ", UNIQUE (soup, entry_id)" : ""
        let values = columns.map { ", " + $0.definition }.joined()
        return ["CREATE TABLE IF NOT EXISTS \(name) (\(keyColumns)\(values)\(unique))"]
            + indexes.map { "CREATE INDEX IF NOT EXISTS \($0.name) ON \(name) (\($0.columns.joined(separator: ", ")))" }
    }

    /// The condition on a row's key; `?1` is the soup, `?2` the entry.
    var rowCondition: String { key == .soupAndEntry ? "soup = ?1 AND entry_id = ?2" : "entry_id = ?2" }

    /// The condition on the soup alone (none for a one-soup table).
    var soupCondition: String { key == .soupAndEntry ? "soup = ?1" : "1" }

    /// The condition in a trigger on soup `soupId`'s table, for the entry `old`.
    func triggerCondition(_ soupId: Int64) -> String {
        key == .soupAndEntry ? "soup = \(soupId) AND entry_id = old.id" : "entry_id = old.id"
    }
}
