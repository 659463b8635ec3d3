import TureenStore
import TureenCore

@_cdecl("tureen_upsert")
public func tureen_upsert(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ entries: UnsafePointer<CChar>?,
                          _ externalIdPath: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    boundary {
        json?.pointee = nil
        let s = try Handles.store(store)
        let name = try inputString(soup, "soup")
        let text = try inputBytes(entries, "entries_json")
        let ext = try inputString(optional: externalIdPath, "external_id_path")
        let result = try s.upsert(soup: name, entries: text, externalIdPath: ext, wantResult: json != nil)
        if let out = json { try deliver(result, to: out) }
    }
}

@_cdecl("tureen_retrieve")
public func tureen_retrieve(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ ids: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        let s = try Handles.store(store)
        let name = try inputString(soup, "soup")
        try deliver(try s.retrieve(soup: name, ids: try EntryIdList.parse(try inputString(ids, "ids_json"))), to: out)
    }
}

@_cdecl("tureen_remove")
public func tureen_remove(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ ids: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let s = try Handles.store(store)
        let name = try inputString(soup, "soup")
        try s.remove(soup: name, ids: try EntryIdList.parse(try inputString(ids, "ids_json")))
    }
}
