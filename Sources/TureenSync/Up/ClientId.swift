import TureenStore
import TureenCore

/// Client-generated record ids: random UUIDs (version 4), drawn from the
/// system's CSPRNG, so two devices never pick the same id for new records.
enum ClientId {
    static func make() -> String {
        var g = SystemRandomNumberGenerator()
        var b = (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        return [b[0..<4], b[4..<6], b[6..<8], b[8..<10], b[10..<16]].map(Hex.string).joined(separator: "-")
    }

    /// Whether `id` has the shape of a random UUID (version 4, RFC 4122
    /// variant), in either case: the ids `make` draws and those most apps
    /// draw the same way. Such an id on the server that this device sent
    /// in a create came from that create: no other device picks it, where
    /// a name an app chose ("settings") may be chosen on two.
    static func isRandom(_ id: String) -> Bool {
        let u = Array(id.utf8)
        guard u.count == 36 else { return false }
        for (i, c) in u.enumerated() {
            switch i {
            case 8, 13, 18, 23: if c != UInt8(ascii: "-") { return false }
            case 14: if c != UInt8(ascii: "4") { return false }
            case 19: if !"89abAB".utf8.contains(c) { return false }
            default: if !isHexDigit(c) { return false }
            }
        }
        return true
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }
}
