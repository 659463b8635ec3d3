import TureenCore

/// A blob whose bytes, as the server holds them, cannot be kept: sealed
/// ones that do not open under the target's keys, open to other bytes
/// than the record refers to, or sit under no listed key's name. Fetching
/// again would not mend it, so sync down fails the records referring to
/// it and goes on. Thrown apart from TureenError because the same codes
/// (TUREEN_E_CORRUPT, TUREEN_E_KEY) also come from this device, such as
/// the store's own blob key missing or damaged, and those must fail the
/// sync, not skip records.
struct ServedBlobFault: Error {
    let error: TureenError

    init(_ code: TureenCode, _ message: String) {
        error = TureenError(code, message)
    }
}
