import Glibc
import TureenCore

/// A member a query spec may have, known by its name's UTF-8 bytes: making
/// a String of each name and matching it against thirteen Strings cost some
/// 450 instructions a member, a tenth of a short query's parse.
enum QuerySpecMember {
    case queryType, soupName, indexPath, matchKey, beginKey, endKey, likeKey, smartSql
    case orderPath, order, pageSize, selectPaths, args

    /// nil for a name no spec has.
    init?(_ name: UnsafeBufferPointer<UInt8>) {
        func named(_ s: StaticString) -> Bool {
            s.utf8CodeUnitCount == name.count && memcmp(s.utf8Start, name.baseAddress!, name.count) == 0
        }
        guard let first = name.first else { return nil }
        switch first {
        case UInt8(ascii: "q") where named("queryType"): self = .queryType
        case UInt8(ascii: "s") where named("soupName"): self = .soupName
        case UInt8(ascii: "s") where named("smartSql"): self = .smartSql
        case UInt8(ascii: "s") where named("selectPaths"): self = .selectPaths
        case UInt8(ascii: "i") where named("indexPath"): self = .indexPath
        case UInt8(ascii: "m") where named("matchKey"): self = .matchKey
        case UInt8(ascii: "b") where named("beginKey"): self = .beginKey
        case UInt8(ascii: "e") where named("endKey"): self = .endKey
        case UInt8(ascii: "l") where named("likeKey"): self = .likeKey
        case UInt8(ascii: "o") where named("orderPath"): self = .orderPath
        case UInt8(ascii: "o") where named("order"): self = .order
        case UInt8(ascii: "p") where named("pageSize"): self = .pageSize
        case UInt8(ascii: "a") where named("args"): self = .args
        default: return nil
        }
    }
}
