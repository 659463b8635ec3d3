//! Raw declarations of libtureen's C interface, as `include/tureen.h` gives
//! them: the status codes and the functions the safe `tureen` crate uses,
//! with the header's rules (ownership, threads, NULL) unchanged. Every
//! function is `unsafe`; the header's doc comment of each one is the
//! contract. Use the `tureen` crate unless a call it lacks is needed; its
//! `Store::as_ptr` hands the raw handle over for that.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

/// TUREEN_VERSION_NUMBER of the header these declarations follow.
pub const TUREEN_VERSION_NUMBER: c_int = 100;

pub const TUREEN_OK: c_int = 0;
pub const TUREEN_E_MISUSE: c_int = 1;
pub const TUREEN_E_INVALID: c_int = 2;
pub const TUREEN_E_NOT_FOUND: c_int = 3;
pub const TUREEN_E_KEY: c_int = 4;
pub const TUREEN_E_CORRUPT: c_int = 5;
pub const TUREEN_E_IO: c_int = 6;
pub const TUREEN_E_BUSY: c_int = 7;
pub const TUREEN_E_CONSTRAINT: c_int = 8;
pub const TUREEN_E_QUERY: c_int = 9;
pub const TUREEN_E_NETWORK: c_int = 10;
pub const TUREEN_E_HTTP: c_int = 11;
pub const TUREEN_E_CONFLICT: c_int = 12;
pub const TUREEN_E_CANCELLED: c_int = 13;
pub const TUREEN_E_INTERNAL: c_int = 99;

/// Every status code but TUREEN_OK, in the header's order.
pub const TUREEN_ERROR_CODES: [c_int; 14] = [
    TUREEN_E_MISUSE,
    TUREEN_E_INVALID,
    TUREEN_E_NOT_FOUND,
    TUREEN_E_KEY,
    TUREEN_E_CORRUPT,
    TUREEN_E_IO,
    TUREEN_E_BUSY,
    TUREEN_E_CONSTRAINT,
    TUREEN_E_QUERY,
    TUREEN_E_NETWORK,
    TUREEN_E_HTTP,
    TUREEN_E_CONFLICT,
    TUREEN_E_CANCELLED,
    TUREEN_E_INTERNAL,
];

/// An open store (opaque).
#[repr(C)]
pub struct tureen_store {
    _opaque: [u8; 0],
}

/// A listener (opaque).
#[repr(C)]
pub struct tureen_listener {
    _opaque: [u8; 0],
}

pub type tureen_event_fn = Option<unsafe extern "C" fn(ctx: *mut c_void, json: *const c_char)>;
pub type tureen_progress_fn = Option<unsafe extern "C" fn(ctx: *mut c_void, state_json: *const c_char)>;
pub type tureen_free_ctx_fn = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

extern "C" {
    pub fn tureen_version() -> *const c_char;
    pub fn tureen_version_number() -> c_int;
    pub fn tureen_errmsg() -> *const c_char;
    pub fn tureen_status_name(status: c_int, name: *mut *const c_char) -> c_int;
    pub fn tureen_free(ptr: *mut c_void);

    pub fn tureen_store_open(path: *const c_char, options_json: *const c_char, out: *mut *mut tureen_store) -> c_int;
    pub fn tureen_store_close(store: *mut tureen_store) -> c_int;
    pub fn tureen_store_remove(path: *const c_char) -> c_int;
    pub fn tureen_store_interrupt(store: *mut tureen_store) -> c_int;

    pub fn tureen_soup_register(store: *mut tureen_store, soup: *const c_char, index_specs_json: *const c_char) -> c_int;
    pub fn tureen_soup_exists(store: *mut tureen_store, soup: *const c_char, exists: *mut c_int) -> c_int;
    pub fn tureen_soup_names(store: *mut tureen_store, json: *mut *mut c_char) -> c_int;

    pub fn tureen_upsert(
        store: *mut tureen_store,
        soup: *const c_char,
        entries_json: *const c_char,
        external_id_path: *const c_char,
        json: *mut *mut c_char,
    ) -> c_int;
    pub fn tureen_retrieve(store: *mut tureen_store, soup: *const c_char, ids_json: *const c_char, json: *mut *mut c_char) -> c_int;
    pub fn tureen_remove(store: *mut tureen_store, soup: *const c_char, ids_json: *const c_char) -> c_int;
    pub fn tureen_query(store: *mut tureen_store, query_spec_json: *const c_char, page_index: c_int, json: *mut *mut c_char) -> c_int;
    pub fn tureen_count(store: *mut tureen_store, query_spec_json: *const c_char, count: *mut i64) -> c_int;
    pub fn tureen_remove_by_query(store: *mut tureen_store, query_spec_json: *const c_char) -> c_int;

    pub fn tureen_sync_down(
        store: *mut tureen_store,
        target_json: *const c_char,
        soup: *const c_char,
        options_json: *const c_char,
        progress: tureen_progress_fn,
        ctx: *mut c_void,
        state_json: *mut *mut c_char,
    ) -> c_int;
    pub fn tureen_sync_up(
        store: *mut tureen_store,
        target_json: *const c_char,
        soup: *const c_char,
        options_json: *const c_char,
        progress: tureen_progress_fn,
        ctx: *mut c_void,
        state_json: *mut *mut c_char,
    ) -> c_int;
    pub fn tureen_local_upsert(
        store: *mut tureen_store,
        soup: *const c_char,
        entries_json: *const c_char,
        id_field: *const c_char,
        json: *mut *mut c_char,
    ) -> c_int;
    pub fn tureen_sync_status(store: *mut tureen_store, sync_id_or_name: *const c_char, state_json: *mut *mut c_char) -> c_int;
    pub fn tureen_sync_cancel(store: *mut tureen_store, sync_id_or_name: *const c_char) -> c_int;

    pub fn tureen_soup_listen(
        store: *mut tureen_store,
        soup_or_null: *const c_char,
        fn_: tureen_event_fn,
        ctx: *mut c_void,
        free_ctx: tureen_free_ctx_fn,
        out: *mut *mut tureen_listener,
    ) -> c_int;
    pub fn tureen_live_query(
        store: *mut tureen_store,
        query_spec_json: *const c_char,
        fn_: tureen_event_fn,
        ctx: *mut c_void,
        free_ctx: tureen_free_ctx_fn,
        out: *mut *mut tureen_listener,
    ) -> c_int;
    pub fn tureen_sync_listen(
        store: *mut tureen_store,
        filter_json_or_null: *const c_char,
        fn_: tureen_event_fn,
        ctx: *mut c_void,
        free_ctx: tureen_free_ctx_fn,
        out: *mut *mut tureen_listener,
    ) -> c_int;
    pub fn tureen_listener_remove(listener: *mut tureen_listener) -> c_int;

    pub fn tureen_transaction_begin(store: *mut tureen_store) -> c_int;
    pub fn tureen_transaction_commit(store: *mut tureen_store) -> c_int;
    pub fn tureen_transaction_rollback(store: *mut tureen_store) -> c_int;
}
