import TureenStore

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
}
