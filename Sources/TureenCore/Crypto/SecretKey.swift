import Glibc

/// Key bytes in memory of their own, wiped when the last reference goes.
/// In an Array, Swift may copy them behind our back on any write, leaving
/// copies that nothing wipes; here they are written once, in place.
package final class SecretKey: @unchecked Sendable {
    // Unchecked: the bytes are written only inside init and read after.
    private let storage: UnsafeMutableRawBufferPointer

    package var count: Int { storage.count }

    /// A key of `count` bytes that `fill` writes. If it throws, the object
    /// is already whole, so deinit wipes what it wrote.
    package init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        storage = .allocate(byteCount: count, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        try fill(storage)
    }

    deinit { SecretKey.wipe(storage) }

    package func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try body(UnsafeRawBufferPointer(storage))
    }

    private static func wipe(_ bytes: UnsafeMutableRawBufferPointer) {
        // explicit_bzero, unlike memset, is never optimised away.
        if let base = bytes.baseAddress { explicit_bzero(base, bytes.count) }
        bytes.deallocate()
    }
}
