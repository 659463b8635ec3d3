/// Serialises JSON into a byte buffer. Values are appended to one growing
/// buffer so that a large result is written once, never concatenated.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(reserving n: Int = 256) { bytes.reserveCapacity(n) }

    public static func string(_ v: JSON) -> String {
        var w = JSONWriter()
        w.write(v)
        return w.string
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func appendRaw(_ s: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    public mutating func appendRaw(bytes b: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: b)
    }

    public mutating func write(_ v: JSON) {
        switch v {
        case .null: appendRaw("null")
        case .bool(let b): b ? appendRaw("true") : appendRaw("false")
        case .int(let i): writeInt(i)
        case .double(let d): writeDouble(d)
        case .string(let s): writeString(s)
        case .array(let a):
            bytes.append(UInt8(ascii: "["))
            for (i, e) in a.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                write(e)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let o):
            bytes.append(UInt8(ascii: "{"))
            for (i, m) in o.members.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(m.key)
                bytes.append(UInt8(ascii: ":"))
                write(m.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    public mutating func writeInt(_ i: Int64) {
        bytes.append(contentsOf: String(i).utf8)
    }

    /// JSON has no NaN or infinity: they are written as null.
    public mutating func writeDouble(_ d: Double) {
        if d.isFinite { bytes.append(contentsOf: d.description.utf8) } else { appendRaw("null") }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    public mutating func writeString(_ s: String) {
        var s = s
        // Most strings need no escaping: copy them in one go.
        let plain = s.withUTF8 { b -> Bool in
            if b.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) { return false }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: b)
            bytes.append(UInt8(ascii: "\""))
            return true
        }
        if plain { return }
        bytes.append(UInt8(ascii: "\""))
        for c in s.utf8 {
            switch c {
            case 0x22: appendRaw("\\\"")
            case 0x5C: appendRaw("\\\\")
            case 0x0A: appendRaw("\\n")
            case 0x0D: appendRaw("\\r")
            case 0x09: appendRaw("\\t")
            case 0x00..<0x20:
                appendRaw("\\u00")
                bytes.append(JSONWriter.hexDigits[Int(c >> 4)])
                bytes.append(JSONWriter.hexDigits[Int(c & 0xF)])
            default: bytes.append(c)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
