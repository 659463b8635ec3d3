import TureenStore
import TureenCore

/// A target's credentials, kept apart from its sync state.
///
/// States live in `syncs_soup`, which the app reads with queries and Smart
/// SQL, and they reach progress callbacks and logs. So a state shows its
/// target with every secret (a bearer token, a password, every extra header's
/// value, which is where API keys go) replaced by "<redacted>", and the whole
/// target is kept in `tureen_sync_secrets` (SyncTables.keepTarget), a table
/// of the encrypted store that Smart SQL may not read (its authorizer refuses
/// tureen_* tables) and that no query names.
enum TargetSecrets {
    static let redacted = JSON.string("<redacted>")

    /// The target as states show it.
    static func redact(_ target: JSON) -> JSON {
        guard var t = target.objectValue else { return target }
        let secrets = TargetKinds.secrets(of: target)
        if var auth = t["auth"]?.objectValue {
            for k in secrets.auth where auth[k] != nil { auth[k] = redacted }
            t["auth"] = .object(auth)
        }
        for m in secrets.maps {
            guard var map = t[m]?.objectValue else { continue }
            for k in map.keys { map[k] = redacted }
            t[m] = .object(map)
        }
        return .object(t)
    }

    /// Whether a state read from `syncs_soup` still holds its secrets (saved
    /// before they were kept apart): they must move to the table.
    static func needsMoving(_ state: SyncState, kept: JSON?) -> Bool {
        kept == nil && redact(state.target) != state.target
    }
}
