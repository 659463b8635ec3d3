/// A record's id as a key, equal to another only when their UTF-8 bytes
/// are. Swift's String `==` is canonical equivalence: "café" with a
/// precomposed "é" and "café" spelled "e" and U+0301 are equal Strings,
/// but two records to a server, and two entries to the soup, whose id
/// index SQLite compares by bytes. Keyed by String, one of two such
/// records in a page was dropped as the other's repeat.
struct RecordKey: Hashable {
    let id: String

    init(_ id: String) { self.id = id }

    static func == (a: RecordKey, b: RecordKey) -> Bool { a.id.utf8.elementsEqual(b.id.utf8) }

    /// String's hash: equal bytes make equal Strings, so equal keys hash
    /// alike (canonically equivalent ones collide, which costs one compare).
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
