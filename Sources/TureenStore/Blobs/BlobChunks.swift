import TureenCore

/// Where a reader finds a blob's chunks: its sealed file, or, for a blob a
/// store written before kept inside itself, the rows of tureen_blob_chunks.
protocol BlobChunks: AnyObject {
    var chunkSize: Int { get }
    func chunkCount(_ length: Int64) -> Int
    /// Copies chunk `index`, which must hold `count` bytes, into `buffer`.
    func read(_ index: Int, count: Int, last: Bool, into buffer: UnsafeMutableRawBufferPointer) throws
    /// Copies `chunks` chunks from `first` into `buffer`, one after the
    /// other: each whole but the last, which must hold `lastCount` bytes
    /// (the blob's last chunk when `last`). A fault is thrown as
    /// ChunkRunFault, which names the chunk.
    func read(_ first: Int, chunks: Int, lastCount: Int, last: Bool, into buffer: UnsafeMutableRawBufferPointer) throws
    /// Runs a pass over many chunks, holding whatever reading them needs open.
    func pass<T>(_ body: () throws -> T) throws -> T
}

/// Why a chunk could not be read; the reader says it of its blob.
enum ChunkFault: Error {
    case missing
    case wrongLength(Int)
    case unauthentic
    case fileMissing
}

/// A fault in a read of several chunks, and which chunk it is in.
struct ChunkRunFault: Error {
    let index: Int
    let fault: ChunkFault
}

extension BlobChunks {
    /// One chunk at a time: the rows of a store written before are read so.
    func read(_ first: Int, chunks: Int, lastCount: Int, last: Bool, into buffer: UnsafeMutableRawBufferPointer) throws {
        for k in 0..<chunks {
            let isLast = k == chunks - 1
            let count = isLast ? lastCount : chunkSize
            let at = k * chunkSize
            do {
                try read(first + k, count: count, last: last && isLast,
                         into: UnsafeMutableRawBufferPointer(rebasing: buffer[at..<(at + count)]))
            } catch let fault as ChunkFault {
                throw ChunkRunFault(index: first + k, fault: fault)
            }
        }
    }
}

/// The chunks of a blob in its sealed file (SealedBlob).
final class FileChunks: BlobChunks {
    private let path: String
    private let id: Int64
    private let length: Int64
    private let key: SecretKey
    /// Open during a pass; else each read opens the file, so that a blob
    /// collected meanwhile is reported as gone.
    private var input: SealedBlobInput?

    init(path: String, id: Int64, length: Int64, key: SecretKey) {
        self.path = path
        self.id = id
        self.length = length
        self.key = key
    }

    var chunkSize: Int { SealedBlob.chunkSize }

    func chunkCount(_ length: Int64) -> Int { Int(SealedBlob.chunkCount(length)) }

    func read(_ index: Int, count: Int, last: Bool, into buffer: UnsafeMutableRawBufferPointer) throws {
        do {
            try read(index, chunks: 1, lastCount: count, last: last, into: buffer)
        } catch let run as ChunkRunFault {
            throw run.fault
        }
    }

    /// With one pread for them all (SealedBlobInput).
    func read(_ first: Int, chunks: Int, lastCount: Int, last: Bool, into buffer: UnsafeMutableRawBufferPointer) throws {
        guard chunks > 0 else { return }
        let file: SealedBlobInput
        do {
            file = try input ?? opened()
        } catch let fault as ChunkFault {
            throw ChunkRunFault(index: first, fault: fault)
        }
        var none: UInt8 = 0
        let opened = try withUnsafeMutableBytes(of: &none) { spare -> Int in
            // Chunks of nothing are opened into nothing: any address will do.
            guard let base = buffer.baseAddress ?? spare.baseAddress else { return 0 }
            return try file.read(Int64(first), chunks: chunks, lastCount: lastCount, last: last, into: base)
        }
        guard opened == chunks else { throw ChunkRunFault(index: first + opened, fault: .unauthentic) }
    }

    func pass<T>(_ body: () throws -> T) throws -> T {
        input = try opened()
        defer { input = nil }
        return try body()
    }

    private func opened() throws -> SealedBlobInput {
        guard let f = try SealedBlobInput(path: path, id: id, key: key, length: length) else { throw ChunkFault.fileMissing }
        return f
    }
}

/// The chunks of a blob a store written before kept in tureen_blob_chunks,
/// 256 KiB each (the last holds the rest; an empty blob has none). Every
/// page is authenticated by SQLCipher as it is read. Read, never written:
/// new blobs go to files.
final class RowChunks: BlobChunks {
    static let size = 256 * 1024
    private let store: Store
    private let blob: Int64

    init(store: Store, blob: Int64) {
        self.store = store
        self.blob = blob
    }

    var chunkSize: Int { RowChunks.size }

    func chunkCount(_ length: Int64) -> Int {
        let size = Int64(RowChunks.size)
        return Int(length / size + (length % size == 0 ? 0 : 1))
    }

    func read(_ index: Int, count: Int, last: Bool, into buffer: UnsafeMutableRawBufferPointer) throws {
        let read = try store.withBlobReader { c in try BlobTables.readChunk(c, blob: blob, seq: index, into: buffer) }
        guard let n = read else { throw ChunkFault.missing }
        guard n == count else { throw ChunkFault.wrongLength(n) }
    }

    func pass<T>(_ body: () throws -> T) throws -> T { try body() }
}
