/// Translates SmartStore's full-text query syntax into the FTS4 "standard"
/// syntax that the system SQLCipher understands (it is built without the
/// enhanced syntax, so NOT would be read as a word and parentheses fail):
///
///   terms side by side   -> AND (FTS4's implicit AND)
///   a OR b               -> a OR b
///   a NOT b              -> a -b
///   prefix*              -> prefix*
///   "a phrase"           -> "a phrase"
///   {soup:path}:term     -> <path's FTS column>:term
///
/// Only these tokens reach FTS: every term is re-spelled from its letters and
/// digits, so stray quotes or operators in a match key are a QUERY error or
/// plain words, never a change to the statement (the key is also bound).
enum FullTextQuery {
    static func translate(_ key: String, soup: Soup) throws -> String {
        var out: [String] = []
        var negateNext = false
        let tokens = try tokenize(key)
        if tokens.isEmpty { throw TureenError(.query, "the match key has no terms") }
        var i = 0
        while i < tokens.count {
            var t = tokens[i]
            i += 1
            switch t.kind {
            case .not:
                if out.isEmpty { throw TureenError(.query, "NOT at character \(t.position) needs a term before it") }
                negateNext = true
                continue
            case .or:
                if out.isEmpty || i >= tokens.count { throw TureenError(.query, "OR at character \(t.position) needs a term on each side") }
                if negateNext { throw TureenError(.query, "NOT before OR at character \(t.position)") }
                out.append("OR")
                continue
            case .term, .phrase:
                if let ref = t.qualifier {
                    guard let index = soup.indexes.first(where: { $0.spec.path == ref.path && $0.spec.type == .fullText }),
                          ref.soup == soup.name else {
                        throw TureenError(.query, "{\(ref.soup):\(ref.path)} at character \(t.position) is not a full_text path of soup '\(soup.name)'")
                    }
                    t.text = "\(index.column):\(t.text)"
                }
                out.append((negateNext ? "-" : "") + t.text)
                negateNext = false
            }
        }
        if negateNext { throw TureenError(.query, "the match key ends with NOT") }
        return out.joined(separator: " ")
    }

    struct Token {
        enum Kind { case term, phrase, or, not }
        var kind: Kind
        var text: String
        var position: Int
        var qualifier: (soup: String, path: String)?
    }

    /// Words are letters and digits (and '_'), optionally ending in '*';
    /// other characters separate words, as FTS4's tokenizer does.
    static func tokenize(_ key: String) throws -> [Token] {
        let chars = Array(key.unicodeScalars)
        var tokens: [Token] = []
        var i = 0
        func isWord(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c.properties.numericType != nil || c == "_" }
        while i < chars.count {
            let start = i
            var qualifier: (soup: String, path: String)?
            if chars[i] == "{" {
                guard let close = chars[i...].firstIndex(of: "}") else {
                    throw TureenError(.query, "unclosed '{' at character \(i) of the match key")
                }
                let inner = String(String.UnicodeScalarView(chars[(i + 1)..<close]))
                guard let colon = inner.firstIndex(of: ":"), close + 1 < chars.count, chars[close + 1] == ":" else {
                    throw TureenError(.query, "malformed field reference at character \(i): use {soup:path}:term")
                }
                qualifier = (String(inner[..<colon]), String(inner[inner.index(after: colon)...]))
                i = close + 2
            }
            guard i < chars.count else {
                if qualifier != nil { throw TureenError(.query, "field reference at character \(start) has no term") }
                break
            }
            if chars[i] == "\"" {
                guard let close = chars[(i + 1)...].firstIndex(of: "\"") else {
                    throw TureenError(.query, "unclosed phrase at character \(i) of the match key")
                }
                let words = String(String.UnicodeScalarView(chars[(i + 1)..<close]))
                    .unicodeScalars.split(whereSeparator: { !isWord($0) }).map { String(String.UnicodeScalarView($0)) }
                i = close + 1
                if words.isEmpty { continue }
                tokens.append(Token(kind: .phrase, text: "\"" + words.joined(separator: " ") + "\"", position: start, qualifier: qualifier))
                continue
            }
            if isWord(chars[i]) {
                var j = i
                while j < chars.count && isWord(chars[j]) { j += 1 }
                var word = String(String.UnicodeScalarView(chars[i..<j]))
                if j < chars.count && chars[j] == "*" { word += "*"; j += 1 }
                i = j
                if qualifier == nil && word == "OR" { tokens.append(Token(kind: .or, text: word, position: start)); continue }
                if qualifier == nil && word == "NOT" { tokens.append(Token(kind: .not, text: word, position: start)); continue }
                tokens.append(Token(kind: .term, text: word, position: start, qualifier: qualifier))
                continue
            }
            if qualifier != nil { throw TureenError(.query, "field reference at character \(start) has no term") }
            i += 1  // a separator
        }
        return tokens
    }
}
