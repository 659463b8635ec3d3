import CJSONScan
import Glibc

/// Serialises JSON into one malloc'd buffer that grows in place (realloc,
/// which for large blocks remaps pages instead of copying). A result for the
/// host is written once and handed over as it is (`takeCString`), so a large
/// result costs about its own size in memory, not two or three copies.
///
/// Its state is exempt from Swift's run-time exclusivity checks: a writer
/// is used by one thread and never re-entered, and the checks (two per
/// integer written, one per raw append) cost some 1,100 instructions on a
/// page of ten entries.
public final class JSONWriter {
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<UInt8>?
    @exclusivity(unchecked) public private(set) var count = 0
    @exclusivity(unchecked) private var capacity = 0
    /// Set when memory ran out; the content is then incomplete.
    @exclusivity(unchecked) private var failed = false

    public init(reserving n: Int = 256) { reserve(max(n, 16)) }

    deinit { free(base) }

    public static func string(_ v: JSON) -> String {
        let w = JSONWriter()
        w.write(v)
        return w.string
    }

    public var buffer: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }
    /// False when memory ran out: then something written is missing.
    public var isComplete: Bool { !failed }
    public var bytes: [UInt8] { Array(buffer) }
    public var string: String { String(decoding: buffer, as: UTF8.self) }

    /// The content as a NUL-terminated string the caller must free(); the
    /// writer is empty afterwards.
    public func takeCString() throws -> UnsafeMutablePointer<CChar> {
        append(0)
        guard !failed, let b = base else { throw TureenError(.internal, "out of memory for a \(count)-byte result") }
        base = nil
        count = 0
        capacity = 0
        return UnsafeMutableRawPointer(b).assumingMemoryBound(to: CChar.self)
    }

    private func reserve(_ n: Int) {
        guard n > capacity, !failed else { return }
        guard let p = realloc(base, n) else { failed = true; return }
        base = p.assumingMemoryBound(to: UInt8.self)
        capacity = n
    }

    @inline(__always) private func ensure(_ extra: Int) -> Bool {
        if count + extra > capacity { reserve(max(count + extra, capacity + capacity / 2)) }
        return count + extra <= capacity
    }

    @inline(__always) public func append(_ byte: UInt8) {
        guard ensure(1) else { return }
        base![count] = byte
        count += 1
    }

    public func appendRaw(_ s: StaticString) {
        appendRaw(bytes: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    public func appendRaw(bytes b: UnsafeBufferPointer<UInt8>) {
        guard let src = b.baseAddress, b.count > 0, ensure(b.count) else { return }
        (base! + count).update(from: src, count: b.count)
        count += b.count
    }

    public func write(_ v: JSON) {
        switch v {
        case .null: appendRaw("null")
        case .bool(let b): b ? appendRaw("true") : appendRaw("false")
        case .int(let i): writeInt(i)
        case .double(let d): writeDouble(d)
        case .string(let s): writeString(s)
        case .array(let a):
            append(UInt8(ascii: "["))
            for (i, e) in a.enumerated() {
                if i > 0 { append(UInt8(ascii: ",")) }
                write(e)
            }
            append(UInt8(ascii: "]"))
        case .object(let o): writeObject(members: o.members)
        }
    }

    /// Writes an object of these members, in order.
    public func writeObject<S: Sequence>(members: S) where S.Element == (key: String, value: JSON) {
        append(UInt8(ascii: "{"))
        var first = true
        for m in members {
            if !first { append(UInt8(ascii: ",")) }
            first = false
            writeString(m.key)
            append(UInt8(ascii: ":"))
            write(m.value)
        }
        append(UInt8(ascii: "}"))
    }

    /// Digits straight into the buffer: every entry read back gets two
    /// integers spliced in, and `String(i)` went through the generic
    /// integer printer and a String for each.
    public func writeInt(_ i: Int64) {
        guard ensure(20) else { return }  // "-9223372036854775808"
        let p = base! + count
        var m = i.magnitude
        let sign = i < 0 ? 1 : 0
        if sign == 1 { p[0] = UInt8(ascii: "-") }
        // Two digits per division, written from the last: a date of
        // thirteen digits took one division and a swap per digit, 190
        // instructions, twenty times a page.
        let n = sign &+ JSONWriter.decimalDigits(m)
        let pairs = UnsafeRawPointer(JSONWriter.digitPairs.utf8Start)
        var at = n
        while m >= 10 {
            let r = Int(truncatingIfNeeded: m % 100) &* 2
            m /= 100
            at &-= 2
            UnsafeMutableRawPointer(p + at).storeBytes(of: pairs.loadUnaligned(fromByteOffset: r, as: UInt16.self), as: UInt16.self)
        }
        if at > sign { p[sign] = 0x30 &+ UInt8(truncatingIfNeeded: m) }
        count &+= n
    }

    /// "00" to "99", for `writeInt`.
    private static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// How many decimal digits `m` has (1 for zero).
    private static func decimalDigits(_ m: UInt64) -> Int {
        var n = 1
        var t = m
        while t >= 10_000 { t /= 10_000; n &+= 4 }
        while t >= 10 { t /= 10; n &+= 1 }
        return n
    }

    /// Makes room for `extra` more bytes at once, so that a result whose
    /// size is known early (a page of entries) is not copied as it grows.
    public func reserve(extra: Int) {
        let (want, overflow) = count.addingReportingOverflow(extra)
        if !overflow { reserve(want) }
    }

    /// JSON has no NaN or infinity: they are written as null.
    public func writeDouble(_ d: Double) {
        guard d.isFinite else { return appendRaw("null") }
        var s = d.description
        s.withUTF8 { appendRaw(bytes: $0) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether a byte of `b` is a quote, a backslash or a control character:
    /// the bytes the parser's string scan stops at (CJSONScan), sixteen at a
    /// time. Sync down writes every record it stores, and a byte at a time
    /// this check was most of writing one (perf).
    static func needsEscaping(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let p = b.baseAddress else { return false }
        var high: UInt8 = 0
        return cjsonscan_plain(p, b.count, &high) < b.count
    }

    public func writeString(_ s: String) {
        var s = s
        s.withUTF8 { writeString(utf8: $0) }
    }

    /// Writes UTF-8 text as a JSON string; most strings need no escaping and
    /// are copied in one go.
    public func writeString(utf8 b: UnsafeBufferPointer<UInt8>) {
        append(UInt8(ascii: "\""))
        if !JSONWriter.needsEscaping(b) {
            appendRaw(bytes: b)
            append(UInt8(ascii: "\""))
            return
        }
        for c in b {
            switch c {
            case 0x22: appendRaw("\\\"")
            case 0x5C: appendRaw("\\\\")
            case 0x0A: appendRaw("\\n")
            case 0x0D: appendRaw("\\r")
            case 0x09: appendRaw("\\t")
            case 0x00..<0x20:
                appendRaw("\\u00")
                append(JSONWriter.hexDigits[Int(c >> 4)])
                append(JSONWriter.hexDigits[Int(c & 0xF)])
            default: append(c)
            }
        }
        append(UInt8(ascii: "\""))
    }
}
