import TureenStore
import TureenCore

/// A target's credentials, kept apart from its sync state.
///
/// States live in `syncs_soup`, which the app reads with queries and Smart
/// SQL, and they reach progress callbacks and logs. So a state shows its
/// target with every secret (a bearer token, a password, every extra header's
/// value, which is where API keys go, every encryption key) replaced by
/// "<redacted>", and the whole
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
        if let k = secrets.keyring, let ring = t[k] { t[k] = redactKeyring(ring) }
        return .object(t)
    }

    /// Each key's "key" redacted, its "id" kept; a keyring of another shape
    /// (one a parse would refuse) redacted whole.
    private static func redactKeyring(_ ring: JSON) -> JSON {
        guard var o = ring.objectValue, o.count == 1, let list = o["keys"]?.arrayValue,
              list.allSatisfy({ $0.objectValue?["id"]?.stringValue != nil })
        else { return redacted }
        o["keys"] = .array(list.map { entry in
            var e = JSONObject()
            for m in entry.objectValue?.members ?? [] where m.key == "id" { e.appendUnchecked(m.key, m.value) }
            e["key"] = redacted
            return .object(e)
        })
        return .object(o)
    }

    /// Whether a state read from `syncs_soup` still holds its secrets (saved
    /// before they were kept apart): they must move to the table.
    static func needsMoving(_ state: SyncState, kept: JSON?) -> Bool {
        kept == nil && redact(state.target) != state.target
    }
}
