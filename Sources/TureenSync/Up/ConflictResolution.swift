import TureenCore

/// How the app settles a conflict: its own copy, the server's, or a record
/// it merged from both (SmartSync's conflict resolution, tureen.h
/// "Conflicts").
public enum ConflictResolution: Sendable {
    case yours
    case theirs
    case merged(JSONObject)

    /// A resolution as given: "yours", "theirs", or "merged" with its record
    /// (JSON text), which only "merged" takes.
    public static func parse(_ resolution: String, merged: String?) throws -> ConflictResolution {
        switch (resolution, merged) {
        case ("merged", let m?):
            guard let o = try JSONParser.parse(m).objectValue else { throw TureenError.invalid("the merged record must be a JSON object") }
            return .merged(o)
        case ("merged", nil): throw TureenError.invalid("resolution \"merged\" needs the merged record")
        case ("yours", nil): return .yours
        case ("theirs", nil): return .theirs
        case ("yours", _), ("theirs", _): throw TureenError.invalid("only resolution \"merged\" takes a record")
        default: throw TureenError.invalid("unknown resolution '\(resolution)'; use yours, theirs or merged")
        }
    }

    var mergedRecord: JSONObject? {
        if case .merged(let o) = self { return o }
        return nil
    }

    var isTheirs: Bool {
        if case .theirs = self { return true }
        return false
    }
}
