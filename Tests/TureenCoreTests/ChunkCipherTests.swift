import XCTest
@testable import TureenCore

/// ChunkCipher writes BlobStream's format: what it seals, BlobOpener opens
/// (every length, a last chunk empty or not), and a chunk opened as
/// another, or as the last when it is not, fails.
final class ChunkCipherTests: XCTestCase {
    private let chunk = 64

    private func sealed(_ data: [UInt8], key: EnvelopeKeys.Key) throws -> [UInt8] {
        let cipher = try ChunkCipher(sealingUnder: key.secret, keyId: key.id, chunkSize: chunk)
        var out = cipher.header
        var buffer = [UInt8](repeating: 0, count: chunk + AESGCM.tagSize)
        var at = 0
        var index: UInt64 = 0
        // Every whole chunk, then the rest (maybe nothing) as the last.
        while true {
            let n = min(chunk, data.count - at)
            let last = n < chunk
            let written = try data[at..<at + n].withUnsafeBytes { plain in
                try buffer.withUnsafeMutableBytes { try cipher.seal(plain, index: index, last: last, into: $0.baseAddress!) }
            }
            out += buffer[0..<written]
            at += n
            index += 1
            if last { return out }
        }
    }

    func testWhatItSealsBlobOpenerOpens() throws {
        let keys = try TestKeys.keys([("k1", TestKeys.hex1)])
        for n in [0, 1, 63, 64, 65, 128, 1000] {
            let data = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
            var opener = BlobOpener(keys: keys)
            let first = try opener.update(try sealed(data, key: keys.sealing))
            let rest = try opener.finish()
            XCTAssertEqual(first + rest.bytes, data, "length \(n)")
            XCTAssertEqual(rest.plaintextDigest, try SHA256.digest(data), "length \(n)")
        }
    }

    func testAChunkOpensOnlyAsItself() throws {
        let keys = try TestKeys.keys([("k1", TestKeys.hex1)])
        let data = [UInt8](repeating: 5, count: 3 * chunk)
        let bytes = try sealed(data, key: keys.sealing)
        let header = Array(bytes[0..<ChunkCipher.headerSize(keyId: "k1")])
        let cipher = try XCTUnwrap(try ChunkCipher(opening: header, under: keys.sealing.secret, keyId: "k1", chunkSize: chunk))
        XCTAssertNil(try ChunkCipher(opening: header, under: keys.sealing.secret, keyId: "k2", chunkSize: chunk))
        let second = Array(bytes[header.count + chunk + AESGCM.tagSize..<header.count + 2 * (chunk + AESGCM.tagSize)])
        var out = [UInt8](repeating: 0, count: chunk)
        func opens(_ index: UInt64, last: Bool) throws -> Bool {
            try second.withUnsafeBytes { s in try out.withUnsafeMutableBytes { try cipher.open(s, index: index, last: last, into: $0.baseAddress!) } }
        }
        XCTAssertTrue(try opens(1, last: false))
        XCTAssertEqual(out, Array(data[chunk..<2 * chunk]))
        XCTAssertFalse(try opens(0, last: false))
        XCTAssertFalse(try opens(1, last: true))
    }
}
