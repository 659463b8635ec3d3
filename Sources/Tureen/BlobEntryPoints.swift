import Glibc
import TureenStore
import TureenSync
import TureenCore

// Blobs: tureen.h, "Blobs". Lookups by digest go through the sync
// manager, which fetches a blob that a lazy sync awaits.

/// The host's bytes, checked: NULL is allowed only for none.
private func inputBytes(_ data: UnsafeRawPointer?, _ len: Int) throws -> UnsafeRawBufferPointer {
    // NULL first: a NULL pointer is misuse whatever length comes with it.
    guard let d = data else {
        guard len == 0 else { throw TureenError.misuse("data is NULL but len is \(UInt(bitPattern: len))") }
        return UnsafeRawBufferPointer(start: nil, count: 0)
    }
    guard len >= 0 else { throw TureenError.invalid("len \(UInt(bitPattern: len)) is larger than any buffer") }
    return UnsafeRawBufferPointer(start: d, count: len)
}

@_cdecl("tureen_blob_put")
public func tureen_blob_put(_ store: OpaquePointer?, _ data: UnsafeRawPointer?, _ len: Int, _ contentType: UnsafePointer<CChar>?,
                            _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "blob_json")
        out.pointee = nil
        let s = try Handles.store(store)
        let bytes = try inputBytes(data, len)
        try deliver(try s.putBlob(bytes, contentType: try inputString(optional: contentType, "content_type")).text, to: out)
    }
}

@_cdecl("tureen_blob_get")
public func tureen_blob_get(_ store: OpaquePointer?, _ digest: UnsafePointer<CChar>?, _ data: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                            _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    boundary {
        let outData = try outPointer(data, "data")
        let outLen = try outPointer(len, "len")
        outData.pointee = nil
        outLen.pointee = 0
        let r = try Handles.serving(store) { m in try m.blobReader(try inputString(digest, "digest")) }
        guard let n = Int(exactly: r.length), let p = malloc(max(n, 1)) else {
            throw TureenError(.io, "cannot allocate \(r.length) bytes for blob \(r.ref.digest); export it or read it by ranges")
        }
        var at = 0
        do {
            try r.stream { piece in
                guard at + piece.count <= n else { throw TureenError(.corrupt, "blob \(r.ref.digest) holds more than its length") }
                (p + at).copyMemory(from: piece.baseAddress ?? UnsafeRawPointer(p), byteCount: piece.count)
                at += piece.count
            }
        } catch {
            free(p)
            throw error
        }
        outData.pointee = p
        outLen.pointee = n
    }
}

@_cdecl("tureen_blob_import")
public func tureen_blob_import(_ store: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ contentType: UnsafePointer<CChar>?,
                               _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "blob_json")
        out.pointee = nil
        let s = try Handles.store(store)
        let ref = try s.importBlob(path: try inputString(path, "path"), contentType: try inputString(optional: contentType, "content_type"))
        try deliver(ref.text, to: out)
    }
}

@_cdecl("tureen_blob_export")
public func tureen_blob_export(_ store: OpaquePointer?, _ digest: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        try Handles.serving(store) { m in
            let d = try inputString(digest, "digest")
            let p = try inputString(path, "path")
            try m.exportBlob(d, path: p)
        }
    }
}

@_cdecl("tureen_blob_fetch")
public func tureen_blob_fetch(_ store: OpaquePointer?, _ digest: UnsafePointer<CChar>?, _ fetched: UnsafeMutablePointer<Int32>?) -> Int32 {
    boundary {
        fetched?.pointee = 0
        // Evaluated apart: `fetched?.pointee = try ...` skips the call when
        // fetched is NULL (optional chaining), and the header allows NULL.
        let got = try Handles.serving(store) { m in try m.fetchBlob(try inputString(digest, "digest")) }
        fetched?.pointee = got ? 1 : 0
    }
}

@_cdecl("tureen_blob_info")
public func tureen_blob_info(_ store: OpaquePointer?, _ digest: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "blob_json")
        out.pointee = nil
        let s = try Handles.store(store)
        let d = try inputString(digest, "digest")
        guard let ref = try s.blob(d) else { throw TureenError(.notFound, "no blob \(d) in '\(s.path)'") }
        try deliver(ref.text, to: out)
    }
}

@_cdecl("tureen_blob_collect")
public func tureen_blob_collect(_ store: OpaquePointer?, _ options: UnsafePointer<CChar>?, _ removed: UnsafeMutablePointer<Int64>?) -> Int32 {
    boundary {
        removed?.pointee = 0
        let s = try Handles.store(store)
        let minAge = try Store.blobCollectAge(options: try inputString(optional: options, "options_json"))
        let n = try s.collectBlobs(minAgeMs: minAge)  // not in the optional chain: it must run
        removed?.pointee = n
    }
}

@_cdecl("tureen_blob_writer_open")
public func tureen_blob_writer_open(_ store: OpaquePointer?, _ contentType: UnsafePointer<CChar>?,
                                    _ writer: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    boundary {
        let out = try outPointer(writer, "writer")
        out.pointee = nil
        let s = try Handles.store(store)
        out.pointee = Handles.blobWriters.register(try s.blobWriter(contentType: try inputString(optional: contentType, "content_type")))
    }
}

@_cdecl("tureen_blob_writer_write")
public func tureen_blob_writer_write(_ writer: OpaquePointer?, _ data: UnsafeRawPointer?, _ len: Int) -> Int32 {
    boundary { try Handles.blobWriters.get(writer).write(try inputBytes(data, len)) }
}

@_cdecl("tureen_blob_writer_finish")
public func tureen_blob_writer_finish(_ writer: OpaquePointer?, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "blob_json")
        out.pointee = nil
        let w = try Handles.blobWriters.get(writer)
        Handles.blobWriters.unregister(writer)
        do {
            try deliver(try w.finish().text, to: out)
        } catch {
            try? w.cancel()
            throw error
        }
    }
}

@_cdecl("tureen_blob_writer_cancel")
public func tureen_blob_writer_cancel(_ writer: OpaquePointer?) -> Int32 {
    boundary {
        let w = try Handles.blobWriters.get(writer)
        Handles.blobWriters.unregister(writer)
        try w.cancel()
    }
}

@_cdecl("tureen_blob_reader_open")
public func tureen_blob_reader_open(_ store: OpaquePointer?, _ digest: UnsafePointer<CChar>?,
                                    _ reader: UnsafeMutablePointer<OpaquePointer?>?, _ length: UnsafeMutablePointer<Int64>?) -> Int32 {
    boundary {
        let out = try outPointer(reader, "reader")
        out.pointee = nil
        length?.pointee = 0
        let r = try Handles.serving(store) { m in try m.blobReader(try inputString(digest, "digest")) }
        out.pointee = Handles.blobReaders.register(r)
        length?.pointee = r.length
    }
}

@_cdecl("tureen_blob_reader_read")
public func tureen_blob_reader_read(_ reader: OpaquePointer?, _ offset: Int64, _ buffer: UnsafeMutableRawPointer?, _ capacity: Int,
                                    _ read: UnsafeMutablePointer<Int>?) -> Int32 {
    boundary {
        let n = try outPointer(read, "read")
        n.pointee = 0
        let r = try Handles.blobReaders.get(reader)
        guard let b = buffer else { throw TureenError.misuse("buffer is NULL") }
        guard capacity >= 0 else { throw TureenError.invalid("capacity \(UInt(bitPattern: capacity)) is larger than any buffer") }
        n.pointee = try r.read(at: offset, into: UnsafeMutableRawBufferPointer(start: b, count: capacity))
    }
}

@_cdecl("tureen_blob_reader_close")
public func tureen_blob_reader_close(_ reader: OpaquePointer?) -> Int32 {
    boundary {
        _ = try Handles.blobReaders.get(reader)
        Handles.blobReaders.unregister(reader)
    }
}
