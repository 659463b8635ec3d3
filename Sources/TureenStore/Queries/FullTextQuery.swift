import TureenCore

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
    /// `column`: the one full_text index the match is restricted to, if any.
    static func translate(_ key: String, soup: Soup, column: SoupIndex? = nil) throws -> String {
        let tokens = try tokenize(key)
        if tokens.isEmpty { throw TureenError(.query, "the match key has no terms") }
        var out: [String] = []
        for (n, t) in tokens.enumerated() {
            let previous = n > 0 ? tokens[n - 1].kind : nil
            let next = n + 1 < tokens.count ? tokens[n + 1] : nil
            func fail(_ why: String) -> TureenError { TureenError(.query, "\(why) at character \(t.position) of the match key") }
            switch t.kind {
            case .not:
                guard previous == .term || previous == .phrase else { throw fail("NOT needs a term before it") }
                guard let term = next else { throw fail("NOT needs a term after it") }
                // This SQLite's FTS4 (standard syntax) negates single words only.
                guard term.kind == .term, term.qualifier == nil else {
                    throw TureenError(.query, "NOT takes a single word, not a phrase, operator or {soup:path} qualifier, "
                        + "at character \(term.position) of the match key")
                }
            case .or:
                guard previous == .term || previous == .phrase else { throw fail("OR needs a term before it") }
                guard let term = next else { throw fail("OR needs a term after it") }
                guard term.kind == .term || term.kind == .phrase else {
                    throw TureenError(.query, "OR needs a term after it, at character \(term.position) of the match key")
                }
                out.append("OR")
            case .term, .phrase:
                var text = t.text
                if let ref = t.qualifier {
                    guard t.kind == .term else { throw fail("a {soup:path} qualifier takes one word; search a phrase in one path with indexPath") }
                    guard ref.soup == soup.name,
                          let index = soup.indexes.first(where: { $0.spec.path.hasSameBytes(as: ref.path) && $0.spec.type == .fullText }) else {
                        throw fail("{\(ref.soup):\(ref.path)} is not a full_text path of soup '\(soup.name)'")
                    }
                    if let only = column {
                        guard only.column == index.column else {
                            throw fail("{\(ref.soup):\(ref.path)} names another path than indexPath '\(only.spec.path)'")
                        }
                    } else {
                        text = "\(index.column):\(text)"
                    }
                }
                out.append((previous == .not ? "-" : "") + text)
            }
        }
        return out.joined(separator: " ")
    }

    struct Token {
        enum Kind: Equatable { case term, phrase, or, not }
        var kind: Kind
        var text: String
        var position: Int
        var qualifier: (soup: String, path: String)?
    }

    static func asciiLowercased(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }))
    }

    /// Words are letters and digits (and '_'), optionally ending in '*';
    /// other characters separate words, as FTS4's tokenizer does. FTS4 also
    /// separates at '_', so a word needs a letter or a digit: one of
    /// underscores alone would reach FTS as an empty term, which it refuses
    /// as a malformed expression ("cat OR _").
    static func tokenize(_ key: String) throws -> [Token] {
        let chars = Array(key.unicodeScalars)
        var tokens: [Token] = []
        var i = 0
        func isWord(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c.properties.numericType != nil || c == "_" }
        func hasTerm<S: Sequence>(_ word: S) -> Bool where S.Element == Unicode.Scalar { word.contains { $0 != "_" } }
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
                    .unicodeScalars.split(whereSeparator: { !isWord($0) }).filter(hasTerm).map { String(String.UnicodeScalarView($0)) }
                i = close + 1
                if words.isEmpty { continue }
                tokens.append(Token(kind: .phrase, text: "\"" + asciiLowercased(words.joined(separator: " ")) + "\"", position: start, qualifier: qualifier))
                continue
            }
            if isWord(chars[i]) {
                var j = i
                while j < chars.count && isWord(chars[j]) { j += 1 }
                if !hasTerm(chars[i..<j]) {
                    if qualifier != nil { throw TureenError(.query, "field reference at character \(start) has no term") }
                    i = j  // underscores alone: a separator, as for FTS
                    continue
                }
                var word = String(String.UnicodeScalarView(chars[i..<j]))
                if j < chars.count && chars[j] == "*" { word += "*"; j += 1 }
                i = j
                if qualifier == nil && word == "OR" { tokens.append(Token(kind: .or, text: word, position: start)); continue }
                if qualifier == nil && word == "NOT" { tokens.append(Token(kind: .not, text: word, position: start)); continue }
                // Lower case, which the tokenizer folds to anyway, keeps words
                // such as NEAR from reaching FTS as operators.
                tokens.append(Token(kind: .term, text: asciiLowercased(word), position: start, qualifier: qualifier))
                continue
            }
            if qualifier != nil { throw TureenError(.query, "field reference at character \(start) has no term") }
            i += 1  // a separator
        }
        return tokens
    }
}
