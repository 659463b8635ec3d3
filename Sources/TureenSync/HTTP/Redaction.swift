import TureenCore

/// Takes a target's secrets out of text a server wrote. Servers' error
/// pages and proxies often repeat the request's Authorization or API key;
/// that text becomes an error, a sync state, an entry's __last_error__ and
/// a log line, none of which may hold a secret.
enum Redaction {
    static let mark = "<redacted>"

    /// Secrets shorter than this are left in place: replacing every "2" or
    /// "en" of a message would make it unreadable, and such a value hides
    /// nothing anyway.
    static let shortest = 3

    /// What of `settings` a server could echo: every header value the target
    /// sends (API keys; a bearer token with and without its scheme) and the
    /// basic credentials' password, as given and as they travel (base64 of
    /// "user:password").
    static func secrets(of settings: HTTPSettings) -> [String] {
        var out: [String] = []
        for (_, value) in settings.headers {
            out.append(value)
            if let space = value.firstIndex(of: " ") { out.append(String(value[value.index(after: space)...])) }
        }
        if let p = settings.password, !p.isEmpty {
            out.append(p)
            out.append(Base64.encode(Array("\(settings.user ?? ""):\(p)".utf8)))
        }
        // Longest first, so a token is not half replaced by a shorter secret inside it.
        return out.filter { $0.utf8.count >= shortest }.sorted { $0.utf8.count > $1.utf8.count }
    }

    /// `text` with every occurrence of each secret replaced by the mark.
    static func scrub(_ text: String, _ secrets: [String]) -> String {
        var bytes = Array(text.utf8)
        for secret in secrets {
            let s = Array(secret.utf8)
            guard !s.isEmpty, bytes.count >= s.count else { continue }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            var i = 0
            var found = false
            while i < bytes.count {
                if i + s.count <= bytes.count && bytes[i] == s[0] && bytes[i..<(i + s.count)].elementsEqual(s) {
                    out.append(contentsOf: mark.utf8)
                    i += s.count
                    found = true
                } else {
                    out.append(bytes[i])
                    i += 1
                }
            }
            if found { bytes = out }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
