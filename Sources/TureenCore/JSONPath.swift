/// Projection of a dotted path through an entry for index values: each
/// segment selects an object member; an array on the way is crossed element
/// by element, so the path yields every match, flattened. Results (selectPaths,
/// Smart SQL) keep the nesting instead: `JSONScanner.nested`.
public enum JSONPath {
    /// The values at `path`: empty when it leads nowhere, several when it
    /// crossed an array. `wasArray` tells a one-element array from a scalar.
    public static func project(_ value: JSON, _ segments: [Substring]) -> (values: [JSON], crossedArray: Bool) {
        var out: [JSON] = []
        var crossed = false
        walk(value, segments[...], &out, &crossed)
        return (out, crossed)
    }

    /// The value at the end of a path: an array yields its elements.
    static func collect(_ v: JSON, _ out: inout [JSON], _ crossed: inout Bool) {
        if case .array(let items) = v {
            crossed = true
            out.append(contentsOf: items)
        } else {
            out.append(v)
        }
    }

    private static func walk(_ v: JSON, _ rest: ArraySlice<Substring>, _ out: inout [JSON], _ crossed: inout Bool) {
        guard let head = rest.first else { return collect(v, &out, &crossed) }
        switch v {
        case .object(let o):
            if let child = o[String(head)] { walk(child, rest.dropFirst(), &out, &crossed) }
        case .array(let items):
            crossed = true
            for item in items { walk(item, rest, &out, &crossed) }
        default:
            return
        }
    }
}
