import TureenStore
import TureenCore

public typealias OutString = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

/// A JSON value written out for the host.
private func written(_ v: JSON) -> JSONWriter {
    let w = JSONWriter()
    w.write(v)
    return w
}

@_cdecl("tureen_soup_register")
public func tureen_soup_register(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ specs: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let s = try Handles.store(store)
        let name = try inputString(soup, "soup")
        try s.registerSoup(name, specs: try IndexSpec.parseList(try inputString(specs, "index_specs_json")))
    }
}

@_cdecl("tureen_soup_exists")
public func tureen_soup_exists(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ exists: UnsafeMutablePointer<Int32>?) -> Int32 {
    boundary {
        let out = try outPointer(exists, "exists")
        out.pointee = try Handles.store(store).soupExists(try inputString(soup, "soup")) ? 1 : 0
    }
}

@_cdecl("tureen_soup_names")
public func tureen_soup_names(_ store: OpaquePointer?, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        let names = try Handles.store(store).soupNames()
        try deliver(written(.array(names.map { .string($0) })), to: out)
    }
}

@_cdecl("tureen_soup_index_specs")
public func tureen_soup_index_specs(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        try deliver(written(.array(try Handles.store(store).indexSpecs(try inputString(soup, "soup")).map { $0.json })), to: out)
    }
}

@_cdecl("tureen_soup_alter")
public func tureen_soup_alter(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ specs: UnsafePointer<CChar>?, _ reindex: Int32) -> Int32 {
    boundary {
        let s = try Handles.store(store)
        let name = try inputString(soup, "soup")
        try s.alterSoup(name, specs: try IndexSpec.parseList(try inputString(specs, "index_specs_json")), reindex: reindex != 0)
    }
}

@_cdecl("tureen_soup_reindex")
public func tureen_soup_reindex(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ paths: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let s = try Handles.store(store)
        let name = try inputString(soup, "soup")
        guard case .array(let items) = try JSONParser.parse(try inputString(paths, "paths_json")) else {
            throw TureenError.invalid("paths_json must be a JSON array of index paths")
        }
        let list = try items.map { v -> String in
            guard let p = v.stringValue else { throw TureenError.invalid("paths_json holds a \(v.typeName), not a path string") }
            return p
        }
        try s.reindexSoup(name, paths: list)
    }
}

@_cdecl("tureen_soup_clear")
public func tureen_soup_clear(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?) -> Int32 {
    boundary { try Handles.store(store).clearSoup(try inputString(soup, "soup")) }
}

@_cdecl("tureen_soup_drop")
public func tureen_soup_drop(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?) -> Int32 {
    boundary { try Handles.store(store).dropSoup(try inputString(soup, "soup")) }
}

@_cdecl("tureen_store_compact")
public func tureen_store_compact(_ store: OpaquePointer?) -> Int32 {
    boundary { try Handles.store(store).compact() }
}

@_cdecl("tureen_store_check")
public func tureen_store_check(_ store: OpaquePointer?) -> Int32 {
    boundary {
        let problems = try Handles.store(store).integrityProblems()
        if !problems.isEmpty {
            throw TureenError(.corrupt, "integrity check failed: " + problems.prefix(10).joined(separator: "; "))
        }
    }
}
