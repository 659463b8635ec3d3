// swift-tools-version:6.0
import PackageDescription

// The library links nothing outside the Swift toolchain at build time except
// libcurl. SQLCipher is loaded at run time (see SQLCipherLibrary.swift) so that
// a host which also loaded the system libsqlite3 can never bind our calls to it.
let package = Package(
    name: "Tureen",
    products: [
        .library(name: "tureen", type: .dynamic, targets: ["Tureen"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLCipher", path: "Sources/CSQLCipher"),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        // A per-query memory budget in SQLCipher's allocator, installed
        // through the variadic sqlite3_config, which Swift cannot call.
        .target(name: "CQueryMemory"),
        // The JSON parser's string scan: in SSE2 registers, which Swift's SIMD
        // types did not compile to, or a 64-bit word at a time elsewhere.
        .target(name: "CJSONScan"),
        // JSON, errors, locks and threads, log, clock, hashing: what every
        // layer uses, with no storage and no network.
        .target(name: "TureenCore", dependencies: ["CJSONScan"]),
        .target(name: "TureenStore", dependencies: ["TureenCore", "CSQLCipher", "CQueryMemory"]),
        .target(name: "TureenSync", dependencies: ["TureenCore", "TureenStore", "CCurl"]),
        .target(name: "Tureen", dependencies: ["TureenCore", "TureenSync", "TureenStore"]),
        // The core's parts that stand alone: base64, the libcrypto binding,
        // encrypted records and blobs.
        .testTarget(name: "TureenCoreTests", dependencies: ["TureenCore"]),
        .testTarget(name: "TureenStoreTests", dependencies: ["TureenCore", "TureenStore", "CJSONScan"]),
        // The sync engine over an in-memory server plugged in as a callback target.
        .testTarget(name: "TureenSyncTests", dependencies: ["TureenCore", "TureenStore", "TureenSync"]),
    ],
    swiftLanguageModes: [.v6]
)
