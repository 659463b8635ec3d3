import TureenStore
import TureenCore

/// A target's transformers in the order its "transformers" lists them:
/// records are encoded through them in that order on the way to the
/// server, and decoded through them in reverse on the way back (kinto.js's
/// remote transformers). Everything Tureen keeps locally is decoded.
final class TransformPipeline {
    let steps: [(name: String, transformer: RecordTransformer)]
    let idField: String
    let modifiedField: String
    let cancel: CancelFlag
    /// Retries of a step's TUREEN_E_NETWORK, as many as the target's requests get.
    let networkRetries: Int

    init(_ steps: [(name: String, transformer: RecordTransformer)], idField: String, modifiedField: String,
         cancel: CancelFlag, networkRetries: Int) {
        self.steps = steps
        self.idField = idField
        self.modifiedField = modifiedField
        self.cancel = cancel
        self.networkRetries = networkRetries
        textStep = steps.count == 1 ? steps[0].transformer as? TextDecodingTransformer : nil
    }

    /// The lone step, when it gives the text of what it decodes.
    private let textStep: TextDecodingTransformer?

    /// Whether `decode(_:textTo:)` gives records' text.
    var givesText: Bool { textStep != nil }

    /// Whether every step may run on any of the sync's threads.
    var anyThread: Bool { steps.allSatisfy { $0.transformer.anyThread } }

    /// `record` as the server is to hold it.
    func encode(_ record: JSONObject) throws -> JSONObject {
        var r = record
        for s in steps { r = try run(s, "encode", r) { try s.transformer.encode($0) } }
        return r
    }

    /// `record` as the server sent it, as Tureen keeps it. A step that
    /// drops the modification stamp gets the server's back: preconditions
    /// and the sync's position are read from it.
    func decode(_ record: JSONObject) throws -> JSONObject {
        var r = record
        for s in steps.reversed() { r = try run(s, "decode", r) { try s.transformer.decode($0) } }
        if r[modifiedField] == nil, let m = record[modifiedField] { r[modifiedField] = m }
        return r
    }

    /// `decode`, also appending the decoded record's text to `text` where
    /// the pipeline gives it (`givesText`), and saying where it lies.
    func decode(_ record: JSONObject, textTo text: JSONWriter) throws -> (record: JSONObject, text: Range<Int>?) {
        guard let step = textStep else { return (try decode(record), nil) }
        var (r, span) = try run(steps[0], "decode", record, { try step.decode($0, textTo: text) }, record: { $0.record })
        // The stamp put back is not in the text.
        if r[modifiedField] == nil, let m = record[modifiedField] { (r[modifiedField], span) = (m, nil) }
        return (r, span)
    }

    /// One step on one record, retrying TUREEN_E_NETWORK with backoff; a
    /// failure of the record throws TransformFailure, one that ends the
    /// call as a request's would (the network still failing after the
    /// retries, a cancel) throws TureenError. The
    /// record keeps its id: the server's record and the local entry are
    /// found by it, so a step may not move a record to another.
    private func run(_ s: (name: String, transformer: RecordTransformer), _ what: String, _ record: JSONObject,
                     _ body: (JSONObject) throws -> JSONObject) throws -> JSONObject {
        try run(s, what, record, body, record: { $0 })
    }

    /// `run` for a step that gives more than the record (`record` finds it in what it gives).
    private func run<Out>(_ s: (name: String, transformer: RecordTransformer), _ what: String, _ record: JSONObject,
                          _ body: (JSONObject) throws -> Out, record recordOf: (Out) -> JSONObject) throws -> Out {
        let id = record[idField]
        // Only a failure names the record: this runs for every record of a page.
        func shown() -> String { id.flatMap(SoupTransaction.keyText).map { HeaderText.printable(String($0.prefix(100))) } ?? "?" }
        var attempt = 0
        while true {
            try cancel.check()
            let out: Out
            do {
                out = try body(record)
            } catch let e as TureenError where e.code == .network && attempt < networkRetries {
                try cancel.sleep(ms: Int.random(in: 100...(200 << min(attempt, 8))))
                attempt += 1
                continue
            } catch let e as TureenError where e.code == .network || e.code == .cancelled {
                throw e
            } catch let e as TureenError {
                throw TransformFailure(TureenError(e.code, "transformer '\(s.name)' could not \(what) record '\(shown())': \(e.message)"))
            } catch {
                throw TransformFailure(TureenError(.internal, "transformer '\(s.name)' could not \(what) record '\(shown())': \(error)"))
            }
            guard recordOf(out)[idField] == id else {
                throw TransformFailure(.invalid("transformer '\(s.name)' changed the \(idField) of record '\(shown())' on \(what)"))
            }
            return out
        }
    }
}

/// A record a transformer failed on: that record fails, the others go on.
struct TransformFailure: Error {
    let error: TureenError
    init(_ error: TureenError) { self.error = error }
}
