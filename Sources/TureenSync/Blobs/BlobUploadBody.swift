import TureenStore
import TureenCore

/// A blob sent as a request body, read from the store as it goes (verified
/// on the way): bare for a PUT of the bytes, or between a multipart part's
/// header and closing line.
final class BlobUploadBody: BodySource {
    private let head: [UInt8]
    private let tail: [UInt8]
    private let reader: BlobReader
    private var at: Int64 = 0
    /// Told as the blob's bytes go (set before the request is sent).
    var progress = BlobProgress(nil)

    init(reader: BlobReader, head: [UInt8] = [], tail: [UInt8] = []) {
        self.head = head
        self.reader = reader
        self.tail = tail
    }

    /// The blob as the only part, named `field`, of a multipart/form-data
    /// body; returns the body and its Content-Type.
    static func multipart(_ reader: BlobReader, field: String, fileName: String, contentType: String) -> (BlobUploadBody, String) {
        // A boundary must not occur in the bytes: bytes that hold 96 bits
        // of their own SHA-256 cannot be made on purpose, and by chance
        // they come once in 2^96.
        let boundary = "tureen-\((try? BlobRef.hex(ofDigest: reader.ref.digest).prefix(24)).map(String.init) ?? "blob")"
        let head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(fileName)\"\r\n"
            + "Content-Type: \(contentType)\r\n\r\n"
        let tail = "\r\n--\(boundary)--\r\n"
        return (BlobUploadBody(reader: reader, head: Array(head.utf8), tail: Array(tail.utf8)),
                "multipart/form-data; boundary=\(boundary)")
    }

    var length: Int64 { Int64(head.count) + reader.length + Int64(tail.count) }

    func restart() throws { at = 0 }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if at > 0 { try Fault.point("blob.upload.piece", failing: .network) }
        var done = 0
        while done < buffer.count && at < length {
            let out = UnsafeMutableRawBufferPointer(rebasing: buffer[done...])
            let n: Int
            if at < Int64(head.count) {
                n = copy(head, from: Int(at), to: out)
            } else if at < Int64(head.count) + reader.length {
                n = try reader.read(at: at - Int64(head.count), into: out)
                if n == 0 { throw TureenError(.internal, "blob \(reader.ref.digest) ended before its length") }
            } else {
                n = copy(tail, from: Int(at - Int64(head.count) - reader.length), to: out)
            }
            done += n
            at += Int64(n)
        }
        progress.moved(min(max(at - Int64(head.count), 0), reader.length))
        return done
    }

    private func copy(_ bytes: [UInt8], from: Int, to out: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(bytes.count - from, out.count)
        bytes.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[from..<(from + n)])) }
        return n
    }
}
