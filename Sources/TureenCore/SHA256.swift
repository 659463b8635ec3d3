import CSHA256

/// SHA-256 (FIPS 180-4), fed in pieces: blobs are named by the digest of
/// their bytes and are hashed while they stream, never held whole. Whole
/// blocks go through the CPU's SHA extensions where it has them (about
/// eight times the speed of the rounds below, which serve other CPUs).
public struct SHA256: Sendable {
    public static let blockSize = 64
    /// Whether this CPU has the SHA extensions.
    public static let hardware = csha256_hardware() == 1
    private let accelerated: Bool
    private var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    /// Bytes of an unfinished block, kept until the next update fills it.
    private var pending: [UInt8] = []
    private var total: UInt64 = 0

    /// `accelerated: false` uses the portable rounds even where the CPU
    /// could do better (for the tests that compare the two).
    public init(accelerated: Bool = SHA256.hardware) {
        self.accelerated = accelerated && SHA256.hardware
        pending.reserveCapacity(SHA256.blockSize)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0, let base = bytes.baseAddress else { return }
        total &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(SHA256.blockSize - pending.count, bytes.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            offset = take
            guard pending.count == SHA256.blockSize else { return }
            pending.withUnsafeBytes { compress($0.baseAddress!, blocks: 1) }
            pending.removeAll(keepingCapacity: true)
        }
        let blocks = (bytes.count - offset) / SHA256.blockSize
        compress(base + offset, blocks: blocks)
        offset += blocks * SHA256.blockSize
        if offset < bytes.count { pending.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: bytes.count - offset)) }
    }

    public mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The 32-byte digest; the hasher is spent afterwards.
    public mutating func finish() -> [UInt8] {
        let bits = total &* 8
        var tail: [UInt8] = [0x80]
        let used = (pending.count + 1) % SHA256.blockSize
        tail += [UInt8](repeating: 0, count: (SHA256.blockSize - 8 - used + SHA256.blockSize) % SHA256.blockSize)
        for i in (0..<8).reversed() { tail.append(UInt8(truncatingIfNeeded: bits >> (UInt64(i) * 8))) }
        let saved = total
        tail.withUnsafeBytes { update($0) }
        total = saved
        let words = [h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7]
        return words.flatMap { w in (0..<4).map { UInt8(truncatingIfNeeded: w >> (24 - 8 * UInt32($0))) } }
    }

    public static func digest(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var s = SHA256()
        s.update(bytes)
        return s.finish()
    }


    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    private mutating func compress(_ data: UnsafeRawPointer, blocks: Int) {
        guard blocks > 0 else { return }
        if accelerated {
            withUnsafeMutableBytes(of: &h) { state in
                csha256_compress(state.baseAddress!.assumingMemoryBound(to: UInt32.self),
                                 data.assumingMemoryBound(to: UInt8.self), blocks)
            }
        } else {
            for i in 0..<blocks { portableCompress(data + i * SHA256.blockSize) }
        }
    }

    private mutating func portableCompress(_ block: UnsafeRawPointer) {
        // The message schedule lives on the stack: a heap array per block
        // would cost more than the rounds.
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 { w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)) }
            for i in 16..<64 {
                let s0 = SHA256.rotr(w[i - 15], 7) ^ SHA256.rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = SHA256.rotr(w[i - 2], 17) ^ SHA256.rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = h
            withUnsafeBytes(of: csha256_k) { table in
                let k = table.bindMemory(to: UInt32.self)
                for i in 0..<64 {
                    let s1 = SHA256.rotr(e, 6) ^ SHA256.rotr(e, 11) ^ SHA256.rotr(e, 25)
                    let ch = (e & f) ^ (~e & g)
                    let t1 = hh &+ s1 &+ ch &+ k[i] &+ w[i]
                    let s0 = SHA256.rotr(a, 2) ^ SHA256.rotr(a, 13) ^ SHA256.rotr(a, 22)
                    let maj = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ maj
                    hh = g; g = f; f = e; e = d &+ t1
                    d = c; c = b; b = a; a = t1 &+ t2
                }
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
        }
    }
}
