@testable import TureenCore
@testable import TureenStore

// The JSON parser over raw bytes (every entry, spec, option and server
// answer goes through it), and the scanner that reads paths out of stored
// JSON without parsing it. Invariants: parse -> write -> parse gives the
// same value; parse and parseEach agree; on text without repeated names,
// the scanner finds what JSONPath finds in the parsed tree; the skim
// upsert uses never accepts what the parser refuses, nor an object with a
// repeated or reserved name, and ends where the parser ends.

/// Paths the scanner is asked for, as stored entries are: a member, a
/// nested member, and a path through arrays.
private let paths: [[UInt8]] = ["a", "a.b", "b.c.d", "0"].map { Array($0.utf8) }

/// What JSONScanner.nested promises, over the parsed tree.
private func nestedReference(_ v: JSON, _ rest: ArraySlice<[UInt8]>) -> JSON? {
    guard let head = rest.first else { return v }
    switch v {
    case .object(let o):
        guard let child = o[String(decoding: head, as: UTF8.self)] else { return nil }
        return nestedReference(child, rest.dropFirst())
    case .array(let items):
        let found = items.compactMap { nestedReference($0, rest) }
        return found.isEmpty ? nil : .array(found)
    default:
        return nil
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let parsed: JSON?
    do { parsed = try JSONParser.parse(bytes: bytes) } catch { refused(error); parsed = nil }

    // parseEach: the same verdict, the same values, element texts that parse alone.
    var elements: [JSON] = []
    var duplicates = false
    var wasArray = false
    do {
        wasArray = try JSONParser.parseEach(bytes: bytes) { _, v, element in
            elements.append(v)
            duplicates = duplicates || element.hadDuplicateNames
            require((try? JSONParser.parse(bytes: element.text)) == v, "an element's text does not parse to the element")
        }
        require(parsed != nil, "parseEach accepted what parse refused")
    } catch {
        refused(error)
        require(parsed == nil, "parseEach refused what parse accepted")
    }

    // The skim: sound against the parser, and the same split of a batch.
    var skimmed: [JSON] = []
    do {
        try JSONParser.parseEach(bytes: bytes, skimmingObjectsWithout: [Array("a".utf8)], noting: Array("id".utf8)) { _, item in
            switch item {
            case .parsed(let v, _):
                skimmed.append(v)
            case .plain(let text, let noted):
                let v = try? JSONParser.parse(bytes: text)
                // Where the skim saw "id" is where that member's value starts.
                if let n = noted {
                    require(n >= 0 && n < text.count, "the skim noted a place outside the element")
                    var q = JSONParser(UnsafeBufferPointer(rebasing: text[n...]))
                    require((try? q.value(depth: 1)) == v?.objectValue?["id"], "the skim noted another value than the member's")
                } else {
                    require(v?.objectValue?["id"] == nil, "the skim missed the member it was to note")
                }
                require(v != nil, "the skim accepted an element the parser refuses")
                var p = JSONParser(text)
                _ = try? p.value(depth: 1)
                require(!p.duplicates, "the skim accepted an element with a repeated member name")
                require(v?.objectValue.map { $0.count > 0 && $0["a"] == nil } == true, "the skim accepted an empty object or a reserved name")
                skimmed.append(v ?? .null)
            }
        }
        require(parsed != nil, "parseEach with the skim accepted what parse refused")
        require(skimmed == (wasArray ? elements : parsed.map { [$0] } ?? []), "the skim split the input differently")
    } catch {
        refused(error)
        require(parsed == nil, "parseEach with the skim refused what parse accepted")
    }

    // The scanner must never read outside the input, whatever it is given.
    for path in paths {
        let segments = path.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { Array($0) }
        let projected: (values: [JSON], crossedArray: Bool)?
        do { projected = try JSONScanner.project(bytes, segments) } catch { refused(error); projected = nil }
        let nested: JSON??
        do { nested = .some(try JSONScanner.nested(bytes, segments)) } catch { refused(error); nested = nil }
        guard let v = parsed, !duplicates else { continue }
        let reference = JSONPath.project(v, segments.map { Substring(String(decoding: $0, as: UTF8.self)) })
        require(projected?.values == reference.values && projected?.crossedArray == reference.crossedArray,
                "JSONScanner.project differs from JSONPath.project at \(String(decoding: path, as: UTF8.self))")
        require(nested == .some(nestedReference(v, segments[...])),
                "JSONScanner.nested differs from the tree at \(String(decoding: path, as: UTF8.self))")
    }

    // All paths at once must give what each gives alone.
    let allSegments = paths.map { $0.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { Array($0) } }
    let together: [JSONScanner.Projected]?
    do { together = try JSONScanner.project(bytes, paths: allSegments) } catch { refused(error); together = nil }
    if parsed != nil && !duplicates {
        for (i, segments) in allSegments.enumerated() {
            let alone = try? JSONScanner.project(bytes, segments)
            require(together?[i].values == alone?.values && together?[i].crossedArray == alone?.crossedArray,
                    "JSONScanner.project(paths:) differs from project at \(String(decoding: paths[i], as: UTF8.self))")
        }
    }

    guard let value = parsed else { return 0 }
    if wasArray { require(value == .array(elements), "parseEach's elements differ from parse's array") }
    let written = JSONWriter.string(value)
    let again: JSON
    do { again = try JSONParser.parse(written) } catch { fatalError("the writer's output does not parse: \(error)") }
    require(again == value, "parse -> write -> parse changed the value")
    require(JSONWriter.string(again) == written, "writing is not stable")
    return 0
}
