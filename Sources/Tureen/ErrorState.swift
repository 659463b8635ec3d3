import Glibc
import TureenCore

/// The thread-local message behind `tureen_errmsg`. Each thread owns one
/// malloc'd string, replaced on its next call and freed when the thread ends.
enum ErrorState {
    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { free($0) }
        return k
    }()

    private static let empty: StaticString = ""

    static func set(_ message: String) {
        let old = pthread_getspecific(key)
        pthread_setspecific(key, strdup(message))
        free(old)
    }

    static func clear() {
        if let old = pthread_getspecific(key) {
            pthread_setspecific(key, nil)
            free(old)
        }
    }

    static var current: UnsafePointer<CChar> {
        if let p = pthread_getspecific(key) { return UnsafePointer(p.assumingMemoryBound(to: CChar.self)) }
        return UnsafeRawPointer(empty.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
