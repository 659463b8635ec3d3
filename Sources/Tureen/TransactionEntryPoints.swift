import TureenStore
import TureenCore

@_cdecl("tureen_transaction_begin")
public func tureen_transaction_begin(_ store: OpaquePointer?) -> Int32 {
    boundary { try Handles.store(store).beginTransaction() }
}

@_cdecl("tureen_transaction_commit")
public func tureen_transaction_commit(_ store: OpaquePointer?) -> Int32 {
    boundary { try Handles.store(store).commitTransaction() }
}

@_cdecl("tureen_transaction_rollback")
public func tureen_transaction_rollback(_ store: OpaquePointer?) -> Int32 {
    boundary { try Handles.store(store).rollbackTransaction() }
}
