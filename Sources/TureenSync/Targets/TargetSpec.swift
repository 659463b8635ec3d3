import TureenCore

/// A sync's target as the caller describes it: its JSON object (type, URL,
/// credentials, ...), parsed where it comes in. Kept whole in the sync's
/// state and secrets; the engine makes the target from it at each run.
public struct TargetSpec: Sendable {
    let json: JSON

    public static func parse(_ text: String) throws -> TargetSpec {
        TargetSpec(json: try JSONParser.parse(text))
    }
}
