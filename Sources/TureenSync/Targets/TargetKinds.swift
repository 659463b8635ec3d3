import TureenStore
import TureenCore

/// What a target's JSON describes, once its kind has read it.
enum TargetDescription {
    /// A server spoken to over HTTP.
    case http(RestConfig)
    /// A host's functions, registered on the store handle under `name`.
    case callback(name: String, idField: String, modifiedField: String)
}

/// One kind of target (a target's "type"): how its JSON reads, and what the
/// rest of sync needs to know of it without reading it whole.
struct TargetKind: Sendable {
    let type: String
    /// Kinto's shape: fixed id and modification fields (others name theirs
    /// with "idField" and "modifiedField"), a /batch endpoint.
    let kintoShaped: Bool
    /// Read over HTTP, so a cached fetch can read it too.
    let overHTTP: Bool
    let defaultIdField: String
    let defaultModifiedField: String
    /// The members holding credentials: under "auth", and objects every
    /// value of which is one (headers carry API keys).
    let secretAuthMembers: [String]
    let secretMaps: [String]
    /// The member holding encryption keys ({"keys": [{"id", "key"}]}):
    /// states show each key's id, which every envelope names in clear
    /// anyway, and never its key.
    let secretKeyring: String?
    /// How a batch endpoint the target declares (its URL given) is spoken.
    let batchFormat: (@Sendable (String) -> BatchFormat)?
    /// Reads the members of the kind (given as the first argument); the
    /// registry reads "type" before and refuses unknown members after.
    let read: @Sendable (TargetKind, inout ConfigReader) throws -> TargetDescription
}

/// The kinds of target Tureen speaks, by type.
enum TargetKinds {
    static let kinto = TargetKind(
        type: "kinto", kintoShaped: true, overHTTP: true, defaultIdField: idDefault, defaultModifiedField: modifiedDefault,
        secretAuthMembers: httpSecretAuth, secretMaps: httpSecretMaps, secretKeyring: keyring,
        batchFormat: KintoBatch.init, read: { _, r in .http(try RestConfig.kinto(&r)) })

    static let rest = TargetKind(
        type: "rest", kintoShaped: false, overHTTP: true, defaultIdField: idDefault, defaultModifiedField: modifiedDefault,
        secretAuthMembers: httpSecretAuth, secretMaps: httpSecretMaps, secretKeyring: keyring,
        batchFormat: KintoBatch.init, read: { _, r in .http(try RestConfig.rest(&r)) })

    static let callback = TargetKind(
        type: "callback", kintoShaped: false, overHTTP: false, defaultIdField: idDefault, defaultModifiedField: modifiedDefault,
        secretAuthMembers: [], secretMaps: [], secretKeyring: nil, batchFormat: nil,
        read: { k, r in
            .callback(name: try r.requiredString("name"), idField: try r.string("idField") ?? k.defaultIdField,
                      modifiedField: try r.string("modifiedField") ?? k.defaultModifiedField)
        })

    static let all = [kinto, rest, callback]

    private static let idDefault = "id"
    private static let modifiedDefault = "last_modified"
    private static let httpSecretAuth = ["bearer", "password"]
    private static let httpSecretMaps = ["headers"]
    private static let keyring = "encryption"

    static func kind(_ type: String) -> TargetKind? { all.first { $0.type == type } }

    /// The kind a target's JSON names, if it names a known one.
    static func kind(of target: JSON) -> TargetKind? { target["type"]?.stringValue.flatMap(kind) }

    /// Reads a target's JSON whole.
    static func parse(_ target: JSON) throws -> TargetDescription {
        var r = try ConfigReader(target, "target")
        let type = try r.requiredString("type")
        guard let kind = kind(type) else {
            throw TureenError.invalid("unknown target type '\(type)'; known: \(all.map(\.type).joined(separator: ", "))")
        }
        var spec = try kind.read(kind, &r)
        if case .http(var c) = spec {
            try RestConfig.common(&r, &c)
            if let u = c.batchURL, let format = kind.batchFormat { c.batchFormat = format(u) }
            spec = .http(c)
        }
        try r.finish()
        return spec
    }

    /// The modification field of a target, read from its JSON alone.
    static func modifiedField(of target: JSON?) -> String {
        let k = target.flatMap(kind(of:)) ?? rest
        if k.kintoShaped { return k.defaultModifiedField }
        return target?["modifiedField"]?.stringValue ?? k.defaultModifiedField
    }

    /// The members of a target's "auth" that hold secrets, its objects
    /// that hold nothing else, and its keyring (of an unknown type: those
    /// of an HTTP target).
    static func secrets(of target: JSON) -> (auth: [String], maps: [String], keyring: String?) {
        let k = kind(of: target) ?? rest
        return (k.secretAuthMembers, k.secretMaps, k.secretKeyring)
    }
}
