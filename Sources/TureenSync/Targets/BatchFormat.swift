import TureenStore
import TureenCore

/// How an HTTP target sends several changes at once: the shape of its
/// batch request and answer, and what an answer confirms. The target's
/// kind picks it (TargetKinds) when the target declares a batch endpoint.
protocol BatchFormat: Sendable {
    /// Sends `changes` (more than one) through `target`: one outcome each,
    /// in order.
    func push(_ changes: [Change], over target: RestTarget) throws -> [PushOutcome]
}

/// A request per change, one after another: a REST API without a batch
/// endpoint.
struct SingleWrites: BatchFormat {
    func push(_ changes: [Change], over target: RestTarget) throws -> [PushOutcome] {
        try changes.map(target.pushOne)
    }
}
