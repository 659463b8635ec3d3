@testable import TureenCore

/// Keys for the tests, each built from its hex as a target would give it.
enum TestKeys {
    static let hex1 = String(repeating: "0123456789abcdef", count: 4)
    static let hex2 = String(repeating: "fedcba9876543210", count: 4)
    static let hex3 = String(repeating: "00112233445566778899aabbccddeeff", count: 2)

    static func keys(_ pairs: [(String, String)]) throws -> EnvelopeKeys {
        let list = pairs.map { JSON.object(JSONObject([("id", .string($0.0)), ("key", .string($0.1))])) }
        return try EnvelopeKeys(parsing: .object(JSONObject([("keys", .array(list))])))
    }

    static func key(hex: String) -> SecretKey {
        guard let k = EnvelopeKeys.secret(hex: hex) else { preconditionFailure("bad test key") }
        return k
    }

    static func bytes(hex: String) -> [UInt8] {
        let u = Array(hex.utf8)
        return stride(from: 0, to: u.count, by: 2).map { i in
            UInt8(String(decoding: u[i..<i + 2], as: UTF8.self), radix: 16) ?? 0
        }
    }
}
