import TureenCore

/// Where a reader finds a blob's chunks: its sealed file, or, for a blob a
/// store written before kept inside itself, the rows of tureen_blob_chunks.
protocol BlobChunks: AnyObject {
    var chunkSize: Int { get }
    func chunkCount(_ length: Int64) -> Int
    /// Copies chunk `index`, which must hold `count` bytes, into `buffer`.
    func read(_ index: Int, count: Int, last: Bool, into buffer: UnsafeMutableRawBufferPointer) throws
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
        let file = try input ?? opened()
        var none: UInt8 = 0
        let ok = try withUnsafeMutableBytes(of: &none) { spare in
            // An empty chunk is opened into nothing: any address will do.
            guard let base = buffer.baseAddress ?? spare.baseAddress else { return false }
            return try file.read(Int64(index), count: count, last: last, into: base)
        }
        guard ok else { throw ChunkFault.unauthentic }
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
