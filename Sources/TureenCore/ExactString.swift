import Glibc

/// A String as a key that equals another only when their UTF-8 bytes do.
/// Swift's String `==` is canonical equivalence: "café" with a precomposed
/// "é" and "café" spelled "e" and U+0301 are equal Strings. To JSON (RFC
/// 8259 compares names by code units), to servers, and to SQLite, which
/// compares text by bytes, they are two names and two record ids. Keyed by
/// String, an object lost one of two such members and sync down one of two
/// such records.
public struct ExactString: Hashable, Sendable {
    public let text: String

    public init(_ text: String) { self.text = text }

    public static func == (a: ExactString, b: ExactString) -> Bool { a.text.hasSameBytes(as: b.text) }

    /// The bytes' hash. String's own hash is canonical: names spelled in
    /// many byte-different ways of one text (a hostile record's) all fell
    /// in one bucket, and each lookup compared them all.
    public func hash(into hasher: inout Hasher) {
        let hashed: Void? = text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil { for b in text.utf8 { hasher.combine(b) } }
    }
}

extension String {
    /// Whether the two are spelled with the same UTF-8 bytes (see
    /// ExactString). Not by `==` first: for canonically equal Strings in
    /// different bytes it normalises both, microseconds a pair, which a
    /// record made of such names turns into minutes.
    @inlinable
    public func hasSameBytes(as other: String) -> Bool {
        utf8.count == other.utf8.count && sameUTF8(other)
    }

    /// Of two Strings of one length: whether their bytes are the same.
    @usableFromInline
    func sameUTF8(_ other: String) -> Bool {
        // Native Strings are contiguous UTF-8, so this is one memcmp (the
        // generic elementsEqual took a thousand instructions per name).
        let n = utf8.count
        let compared = utf8.withContiguousStorageIfAvailable { a in
            other.utf8.withContiguousStorageIfAvailable { b in n == 0 || memcmp(a.baseAddress!, b.baseAddress!, n) == 0 }
        }
        return (compared ?? nil) ?? utf8.elementsEqual(other.utf8)
    }
}
