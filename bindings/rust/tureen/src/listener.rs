//! Listeners: a closure called with each event's JSON on the library's
//! thread, until the `Listener` is dropped.

use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use tureen_sys as sys;

use crate::error::{check, Error, Result, Status};
use crate::store::Store;
use crate::strings::{c_string, c_string_or_null, ptr_or_null};

/// What the library holds as a listener's ctx. A panic in the closure
/// poisons it: its state may be half-changed, so it is not called again.
struct Slot {
    on_event: Box<dyn FnMut(&str) + Send>,
    poisoned: bool,
}

unsafe extern "C" fn deliver(ctx: *mut c_void, json: *const c_char) {
    // The library calls one listener from one thread at a time, so this is
    // the only reference to the slot while it lives.
    let slot = &mut *ctx.cast::<Slot>();
    if slot.poisoned || json.is_null() {
        return;
    }
    let text = CStr::from_ptr(json).to_string_lossy();
    // Unwinding into the library's thread would be undefined behaviour.
    if catch_unwind(AssertUnwindSafe(|| (slot.on_event)(&text))).is_err() {
        slot.poisoned = true;
    }
}

unsafe extern "C" fn release(ctx: *mut c_void) {
    let slot = Box::from_raw(ctx.cast::<Slot>());
    // What the closure captured may panic as it drops, here on the library's thread.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(slot)));
}

/// A registered listener. Dropping it removes it: it waits for a call in
/// flight, and the closure is never called again afterwards (it is dropped).
/// Closing the store removes it too; dropping it later is then harmless.
#[derive(Debug)]
pub struct Listener {
    raw: NonNull<sys::tureen_listener>,
}

// tureen_listener_remove may be called from any thread, and a stale handle
// is refused, never dereferenced.
unsafe impl Send for Listener {}
unsafe impl Sync for Listener {}

impl Listener {
    /// Removes the listener now, reporting what dropping it would ignore:
    /// `Status::Misuse` once its store was closed (that removed it already).
    pub fn remove(self) -> Result<()> {
        let listener = std::mem::ManuallyDrop::new(self);
        check(unsafe { sys::tureen_listener_remove(listener.raw.as_ptr()) })
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        // Misuse here means the store's close removed it already.
        unsafe { sys::tureen_listener_remove(self.raw.as_ptr()) };
    }
}

type Register = unsafe extern "C" fn(
    *mut sys::tureen_store,
    *const c_char,
    sys::tureen_event_fn,
    *mut c_void,
    sys::tureen_free_ctx_fn,
    *mut *mut sys::tureen_listener,
) -> i32;

impl Store {
    /// Calls `on_event` with each commit's changes to `soup` (`None`: every
    /// soup), as the header's change event JSON: {"soup", "created",
    /// "updated", "deleted", "origin", "cleared"}.
    pub fn listen_soup(&self, soup: Option<&str>, on_event: impl FnMut(&str) + Send + 'static) -> Result<Listener> {
        let soup = c_string_or_null(soup, "soup")?;
        self.listen(sys::tureen_soup_listen, ptr_or_null(&soup), Box::new(on_event))
    }

    /// Calls `on_event` with the query's first page now, then whenever a
    /// commit changes it (or {"error", "code"} when it fails to run).
    pub fn live_query(&self, query_spec_json: &str, on_event: impl FnMut(&str) + Send + 'static) -> Result<Listener> {
        let spec = c_string(query_spec_json, "query spec")?;
        self.listen(sys::tureen_live_query, spec.as_ptr(), Box::new(on_event))
    }

    /// Calls `on_event` with each sync event ($fh.sync's codes) the filter
    /// selects (`None`: every code; else e.g. {"codes": ["sync_complete"]}).
    pub fn listen_sync(&self, filter_json: Option<&str>, on_event: impl FnMut(&str) + Send + 'static) -> Result<Listener> {
        let filter = c_string_or_null(filter_json, "filter")?;
        self.listen(sys::tureen_sync_listen, ptr_or_null(&filter), Box::new(on_event))
    }

    fn listen(&self, register: Register, what: *const c_char, on_event: Box<dyn FnMut(&str) + Send>) -> Result<Listener> {
        let ctx = Box::into_raw(Box::new(Slot { on_event, poisoned: false })).cast::<c_void>();
        let mut raw = ptr::null_mut();
        let code = unsafe { register(self.as_ptr(), what, Some(deliver), ctx, Some(release), &mut raw) };
        if let Err(error) = check(code) {
            // A registration that failed has not taken ctx.
            unsafe { release(ctx) };
            return Err(error);
        }
        NonNull::new(raw)
            .map(|raw| Listener { raw })
            .ok_or_else(|| Error { status: Status::Internal, message: "the library gave no listener".into() })
    }
}
