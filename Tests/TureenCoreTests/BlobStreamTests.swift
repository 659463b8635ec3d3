import XCTest
@testable import TureenCore

final class BlobStreamTests: XCTestCase {
    private var keys: EnvelopeKeys!
    private let chunk = 64

    override func setUpWithError() throws {
        keys = try TestKeys.keys([("k1", TestKeys.hex1)])
    }

    private func plaintext(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    /// `data` sealed, fed in pieces of `piece` bytes.
    private func seal(_ data: [UInt8], piece: Int = 17, keys: EnvelopeKeys? = nil) throws -> (bytes: [UInt8], digest: [UInt8]) {
        var sealer = try BlobSealer(keys: keys ?? self.keys, chunkSize: chunk)
        var out: [UInt8] = []
        var i = 0
        while i < data.count {
            out += try sealer.update(Array(data[i..<min(i + piece, data.count)]))
            i += piece
        }
        let last = try sealer.finish()
        XCTAssertEqual(sealer.plaintextCount, data.count)
        return (out + last.bytes, last.plaintextDigest)
    }

    private func open(_ sealed: [UInt8], piece: Int = 23, keys: EnvelopeKeys? = nil) throws -> (bytes: [UInt8], digest: [UInt8]) {
        var opener = BlobOpener(keys: keys ?? self.keys)
        var out: [UInt8] = []
        var i = 0
        while i < sealed.count {
            out += try opener.update(Array(sealed[i..<min(i + piece, sealed.count)]))
            i += piece
        }
        let last = try opener.finish()
        return (out + last.bytes, last.plaintextDigest)
    }

    private func assertFails(_ code: TureenCode, _ sealed: [UInt8], _ note: String, keys: EnvelopeKeys? = nil,
                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try open(sealed, keys: keys), note, file: file, line: line) { error in
            XCTAssertEqual((error as? TureenError)?.code, code, "\(note): \(error)", file: file, line: line)
        }
    }

    private var headerSize: Int { BlobStream.fixedHeaderSize + 2 + BlobStream.saltSize }
    private var sealedChunk: Int { chunk + AESGCM.tagSize }

    func testEverySizeComesBackWithItsDigest() throws {
        for n in [0, 1, chunk - 1, chunk, chunk + 1, 2 * chunk, 3 * chunk + 5, 1000] {
            let data = plaintext(n)
            for (inPiece, outPiece) in [(1, 1), (17, 23), (n + 1, 10_000)] {
                let s = try seal(data, piece: inPiece)
                XCTAssertEqual(s.bytes.count, BlobStream.sealedCount(plaintextCount: n, keyId: "k1", chunkSize: chunk), "size \(n)")
                XCTAssertEqual(s.digest, try SHA256.digest(data), "size \(n)")
                let o = try open(s.bytes, piece: outPiece)
                XCTAssertEqual(o.bytes, data, "size \(n)")
                XCTAssertEqual(o.digest, s.digest)
            }
        }
    }

    func testTheDefaultChunkSizeRoundTrips() throws {
        let data = plaintext(200_000)
        var sealer = try BlobSealer(keys: keys)
        let sealed = try sealer.update(data) + sealer.finish().bytes
        XCTAssertEqual(sealed.count, BlobStream.sealedCount(plaintextCount: data.count, keyId: "k1"))
        var opener = BlobOpener(keys: keys)
        XCTAssertEqual(try opener.update(sealed) + opener.finish().bytes, data)
    }

    func testTheBytesHoldNoPlaintextAndDifferEachTime() throws {
        let data = Array(String(repeating: "a known file ", count: 20).utf8)
        let a = try seal(data).bytes, b = try seal(data).bytes
        XCTAssertNotEqual(a, b)
        XCTAssertNil(String(decoding: a, as: UTF8.self).range(of: "known"))
    }

    func testReorderedDroppedOrCutChunksAreCorrupt() throws {
        let s = try seal(plaintext(3 * chunk + 5)).bytes
        let header = Array(s[..<headerSize])
        let chunks = stride(from: headerSize, to: s.count, by: sealedChunk).map { Array(s[$0..<min($0 + sealedChunk, s.count)]) }
        XCTAssertEqual(chunks.count, 4)
        assertFails(.corrupt, header + chunks[1] + chunks[0] + chunks[2] + chunks[3], "first two swapped")
        assertFails(.corrupt, header + chunks[0] + chunks[2] + chunks[3], "middle chunk dropped")
        assertFails(.corrupt, header + chunks[0] + chunks[1] + chunks[2], "last chunk dropped")
        assertFails(.corrupt, header + chunks[0] + chunks[1] + chunks[3], "last moved up")
        assertFails(.corrupt, Array(s.dropLast()), "one byte short")
        assertFails(.corrupt, s + [0], "one byte appended")
        assertFails(.corrupt, s + chunks[3], "last chunk twice")
        assertFails(.corrupt, header, "no chunk")
        assertFails(.corrupt, Array(header.dropLast()), "header cut")
        assertFails(.corrupt, [], "nothing")
        // A whole second blob's chunk under the first one's header.
        let other = try seal(plaintext(3 * chunk + 5)).bytes
        assertFails(.corrupt, header + Array(other[headerSize...]), "another blob's chunks")
    }

    func testAnAlteredByteAnywhereIsCorrupt() throws {
        let s = try seal(plaintext(2 * chunk + 3)).bytes
        for i in s.indices where i < 4 || i >= BlobStream.fixedHeaderSize + 2 {
            var bad = s
            bad[i] ^= 0x04
            assertFails(.corrupt, bad, "byte \(i)")
        }
        var hugeChunks = s
        hugeChunks[4] = 0x7F
        assertFails(.corrupt, hugeChunks, "chunk size beyond the limit")
    }

    func testAnUnlistedKeyIsAKeyErrorAndRotationOpens() throws {
        let s = try seal(plaintext(100)).bytes
        assertFails(.key, s, "unknown key", keys: try TestKeys.keys([("k2", TestKeys.hex2)]))
        assertFails(.corrupt, s, "another key under the same id", keys: try TestKeys.keys([("k1", TestKeys.hex2)]))
        let rotated = try TestKeys.keys([("k2", TestKeys.hex2), ("k1", TestKeys.hex1)])
        XCTAssertEqual(try open(s, keys: rotated).bytes, plaintext(100))
        let again = try seal(plaintext(100), keys: rotated).bytes
        XCTAssertEqual(try open(again, keys: rotated).bytes, plaintext(100))
        assertFails(.key, again, "the old list lacks the new key")
    }

    func testFeedingAfterFinishIsMisuse() throws {
        var sealer = try BlobSealer(keys: keys, chunkSize: chunk)
        _ = try sealer.finish()
        XCTAssertThrowsError(try sealer.update([1]))
        XCTAssertThrowsError(try BlobSealer(keys: keys, chunkSize: 0))
        XCTAssertThrowsError(try BlobSealer(keys: keys, chunkSize: BlobStream.maxChunkSize + 1))
    }

    /// A known answer: HMAC-SHA256(key, "tureen blob name v1" | digest),
    /// as Python's hmac module gives it; the same for every device holding
    /// the key, another under another key, and never the digest itself.
    func testServerNameIsAKeyedHashOfTheDigest() throws {
        let digest = "sha256-" + String(repeating: "ab", count: 32)
        let name = try BlobStream.serverName(digest: digest, key: TestKeys.key(hex: TestKeys.hex1))
        XCTAssertEqual(name, "06a639e4d1d8e5ae0f199aa3b267369ba83b21da1bea2dcca5216a8041013172")
        XCTAssertEqual(try BlobStream.serverName(digest: digest, key: TestKeys.key(hex: TestKeys.hex1)), name)
        XCTAssertNotEqual(try BlobStream.serverName(digest: digest, key: TestKeys.key(hex: TestKeys.hex2)), name)
        XCTAssertFalse(digest.contains(name))
    }
}
