import TureenCore

/// Translates Smart SQL into SQL over the soups' tables:
///   {soup}                   -> the soup's table
///   {soup:path}              -> the path's index column (or computed index
///                               expression); a path with no index reads the
///                               entry through tureen_path_value
///   {soup:_soup}             -> the whole entry, returned as a JSON object
///   {soup:_soupEntryId}, {soup:_soupLastModifiedDate}, {soup:_soupCreatedDate}
/// A table alias written before a reference (mgr.{employees:lastName}) applies
/// to it. Text inside '...' literals, "..." identifiers and comments is left
/// alone. Soup names and paths never reach the SQL as text except as a quoted
/// path inside a function call, where SQLText.literal escapes it.
struct SmartSQL {
    let sql: String

    init(_ source: String, catalog: (String) throws -> Soup?) throws {
        // SQLite reads SQL up to a NUL: what follows would silently not run.
        if let nul = source.utf8.firstIndex(of: 0) {
            throw TureenError(.query, "Smart SQL holds a NUL character at byte \(source.utf8.distance(from: source.utf8.startIndex, to: nul))")
        }
        let chars = Array(source.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        func append(_ s: String) { out.append(contentsOf: s.unicodeScalars) }
        while i < chars.count {
            let c = chars[i]
            // Quoted text and comments are copied untouched.
            if c == "'" || c == "\"" || c == "`" || c == "[" {
                let close: Unicode.Scalar = c == "[" ? "]" : c
                var j = i + 1
                while j < chars.count {
                    if chars[j] == close {
                        if close != "]" && j + 1 < chars.count && chars[j + 1] == close { j += 2; continue }
                        break
                    }
                    j += 1
                }
                guard j < chars.count else { throw TureenError(.query, "unterminated \(c) at character \(i) of the Smart SQL") }
                // A quoted name is a name: "tureen_entry"(...) is a call.
                if c != "'" && SmartSQL.isInternal(chars[(i + 1)...]) {
                    throw TureenError(.query, "Smart SQL may not name Tureen's internal functions or tables (character \(i))")
                }
                out.append(contentsOf: chars[i...j])
                i = j + 1
                continue
            }
            if let (j, closed) = SmartSQL.comment(chars, at: i) {
                guard closed else { throw TureenError(.query, "unterminated comment at character \(i) of the Smart SQL") }
                out.append(contentsOf: chars[i..<j])
                i = j
                continue
            }
            guard c == "{" else {
                // The functions Tureen's translation calls are not the SQL's to call.
                if (c == "t" || c == "T") && (i == 0 || !SmartSQL.isIdentifier(chars[i - 1])) && SmartSQL.isInternal(chars[i...]) {
                    throw TureenError(.query, "Smart SQL may not call Tureen's internal functions (character \(i))")
                }
                out.append(c)
                i += 1
                continue
            }
            guard let close = chars[i...].firstIndex(of: "}") else {
                throw TureenError(.query, "unclosed '{' at character \(i) of the Smart SQL")
            }
            let inner = String(String.UnicodeScalarView(chars[(i + 1)..<close]))
            let name: String
            let path: String?
            if let colon = inner.firstIndex(of: ":") {
                name = String(inner[..<colon])
                path = String(inner[inner.index(after: colon)...])
            } else {
                name = inner
                path = nil
            }
            guard let soup = try catalog(name) else {
                throw TureenError(.query, "unknown soup '\(name)' in {\(inner)} at character \(i) of the Smart SQL")
            }
            // An alias written just before the reference: "mgr." stays in the
            // output for plain columns and moves inside function calls.
            let alias = SmartSQL.trailingAlias(out)
            guard let p = path else {
                append(soup.table)
                i = close + 1
                continue
            }
            if p.isEmpty { throw TureenError(.query, "empty path in {\(inner)} at character \(i) of the Smart SQL") }
            let expression = try SmartSQL.expression(p, soup: soup, owner: alias ?? soup.table,
                                                     where: "{\(inner)} at character \(i) of the Smart SQL")
            if let a = alias {
                // drop the "alias." already copied; the expression names it
                out.removeLast(a.unicodeScalars.count + 1)
            }
            append(expression)
            i = close + 1
        }
        sql = String(out)
    }

    /// How SQL reads a path of a soup's entries in the table (or alias) `owner`.
    static func expression(_ p: String, soup: Soup, owner: String, where context: String) throws -> String {
        switch p {
        case "_soup": return "\(EntryFunction.name)(\(owner).soup, \(owner).id, \(owner).lastModified)"
        case EntryText.idKey: return "\(owner).id"
        case EntryText.modifiedKey: return "\(owner).lastModified"
        case "_soupCreatedDate": return "\(owner).created"
        default:
            do {
                try IndexSpec.validatePath(p, what: context)
            } catch let e as TureenError {
                throw TureenError(.query, "malformed reference: \(e.message)")
            }
            if let index = soup.index(path: p) { return index.sql(in: owner) }
            return "\(EntryFunction.pathName)(\(owner).soup, \(SQLText.literal(p)))"
        }
    }

    /// The statement's first word, in capitals, after any spaces and
    /// comments; empty when it starts with no letter. At most 32 letters
    /// (no keyword is longer), so that an error naming it stays short.
    static func firstWord(_ sql: String) -> String {
        let chars = Array(sql.unicodeScalars)
        var i = 0
        scan: while i < chars.count {
            switch chars[i] {
            case " ", "\n", "\r", "\t", "\u{0C}":
                i += 1
            default:
                guard let (j, _) = comment(chars, at: i) else { break scan }
                i = j
            }
        }
        var word = String.UnicodeScalarView()
        while i < chars.count, word.count < 32, ("a"..."z").contains(chars[i]) || ("A"..."Z").contains(chars[i]) {
            word.append(Unicode.Scalar(UInt8(chars[i].value) & ~0x20))
            i += 1
        }
        return String(word)
    }

    /// When a comment starts at `i`: the index just past it (a "--" comment
    /// ends with its line) and whether it was closed (a "/*" may run to the
    /// end of the text unclosed). nil when none starts there.
    static func comment(_ chars: [Unicode.Scalar], at i: Int) -> (end: Int, closed: Bool)? {
        guard i + 1 < chars.count else { return nil }
        if chars[i] == "-" && chars[i + 1] == "-" { return (chars[i...].firstIndex(of: "\n") ?? chars.count, true) }
        guard chars[i] == "/" && chars[i + 1] == "*" else { return nil }
        var j = i + 2
        while j + 1 < chars.count && !(chars[j] == "*" && chars[j + 1] == "/") { j += 1 }
        return j + 1 < chars.count ? (j + 2, true) : (chars.count, false)
    }

    /// Whether `text` starts with "tureen_", in any case: the prefix of
    /// Tureen's functions and tables.
    private static func isInternal(_ text: ArraySlice<Unicode.Scalar>) -> Bool {
        String(String.UnicodeScalarView(text.prefix(7))).lowercased() == "tureen_"
    }

    static func isIdentifier(_ c: Unicode.Scalar) -> Bool {
        c.properties.isAlphabetic || c.properties.numericType != nil || c == "_" || c == "$"
    }

    /// "mgr" when the output ends with "mgr." (an identifier and a dot).
    private static func trailingAlias(_ out: String.UnicodeScalarView) -> String? {
        guard out.last == "." else { return nil }
        var start = out.index(before: out.endIndex)
        while start > out.startIndex {
            let prev = out.index(before: start)
            let c = out[prev]
            if c.properties.isAlphabetic || c.properties.numericType != nil || c == "_" { start = prev } else { break }
        }
        let name = String(out[start..<out.index(before: out.endIndex)])
        return name.isEmpty ? nil : name
    }
}
