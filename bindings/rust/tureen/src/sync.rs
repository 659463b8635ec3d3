//! Sync down and up, with an optional progress closure on the calling thread.

use std::any::Any;
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr;

use tureen_sys as sys;

use crate::error::{check, Result};
use crate::store::Store;
use crate::strings::{c_string, c_string_or_null, ptr_or_null, take};

/// A progress closure, and the panic it raised: held until the C call
/// returns, then resumed on the caller's side of the boundary.
struct Progress<'a> {
    on_state: &'a mut dyn FnMut(&str),
    panic: Option<Box<dyn Any + Send>>,
}

unsafe extern "C" fn report(ctx: *mut c_void, state_json: *const c_char) {
    let progress = &mut *ctx.cast::<Progress>();
    if progress.panic.is_some() || state_json.is_null() {
        return;
    }
    let text = CStr::from_ptr(state_json).to_string_lossy();
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| (progress.on_state)(&text))) {
        progress.panic = Some(panic);
    }
}

type Run = unsafe extern "C" fn(
    *mut sys::tureen_store,
    *const c_char,
    *const c_char,
    *const c_char,
    sys::tureen_progress_fn,
    *mut c_void,
    *mut *mut c_char,
) -> i32;

impl Store {
    /// Fetches every record of the target (JSON, e.g. {"type": "kinto",
    /// "url": ..., "bucket": ..., "collection": ...}) into `soup`; returns
    /// the final sync state JSON. `options_json`: the header's sync options.
    pub fn sync_down(&self, target_json: &str, soup: &str, options_json: Option<&str>) -> Result<String> {
        self.run_sync(sys::tureen_sync_down, target_json, soup, options_json, None)
    }

    /// As [`Store::sync_down`], calling `on_state` with the sync state after
    /// each page and at the end, on this thread. A panic in it is raised
    /// again here once the sync has returned.
    pub fn sync_down_with_progress(
        &self,
        target_json: &str,
        soup: &str,
        options_json: Option<&str>,
        on_state: &mut dyn FnMut(&str),
    ) -> Result<String> {
        self.run_sync(sys::tureen_sync_down, target_json, soup, options_json, Some(on_state))
    }

    /// Sends the soup's local changes to the target; returns the final sync
    /// state JSON.
    pub fn sync_up(&self, target_json: &str, soup: &str, options_json: Option<&str>) -> Result<String> {
        self.run_sync(sys::tureen_sync_up, target_json, soup, options_json, None)
    }

    /// The saved state of a sync, by id or name.
    pub fn sync_status(&self, sync_id_or_name: &str) -> Result<String> {
        let sync = c_string(sync_id_or_name, "sync")?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::tureen_sync_status(self.as_ptr(), sync.as_ptr(), &mut out) })?;
        Ok(take(out))
    }

    fn run_sync(
        &self,
        run: Run,
        target_json: &str,
        soup: &str,
        options_json: Option<&str>,
        on_state: Option<&mut dyn FnMut(&str)>,
    ) -> Result<String> {
        let target = c_string(target_json, "target")?;
        let soup = c_string(soup, "soup")?;
        let options = c_string_or_null(options_json, "options")?;
        let mut progress = on_state.map(|on_state| Progress { on_state, panic: None });
        let (callback, ctx): (sys::tureen_progress_fn, *mut c_void) = match progress.as_mut() {
            Some(p) => (Some(report), (p as *mut Progress).cast()),
            None => (None, ptr::null_mut()),
        };
        let mut state = ptr::null_mut();
        let code = unsafe {
            run(self.as_ptr(), target.as_ptr(), soup.as_ptr(), ptr_or_null(&options), callback, ctx, &mut state)
        };
        // Read the message before anything else calls the library on this thread.
        let outcome = check(code);
        let state = take(state);
        if let Some(panic) = progress.and_then(|p| p.panic) {
            resume_unwind(panic);
        }
        outcome.map(|()| state)
    }
}
