//! Strings across the boundary: Rust text to borrowed C strings, and the
//! library's allocated results back to owned Strings.

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::ptr;

use tureen_sys as sys;

use crate::error::{Error, Result, Status};

/// `text` as a C string; a NUL inside is refused as the library refuses
/// other invalid arguments, since C would cut the text there.
pub(crate) fn c_string(text: &str, what: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error { status: Status::Invalid, message: format!("{what} contains a NUL byte") })
}

pub(crate) fn c_string_or_null(text: Option<&str>, what: &str) -> Result<Option<CString>> {
    text.map(|t| c_string(t, what)).transpose()
}

pub(crate) fn ptr_or_null(text: &Option<CString>) -> *const c_char {
    text.as_ref().map_or(ptr::null(), |t| t.as_ptr())
}

/// Copies a string the library allocated, and frees it.
pub(crate) fn take(raw: *mut c_char) -> String {
    if raw.is_null() {
        return String::new();
    }
    let text = unsafe { CStr::from_ptr(raw) }.to_string_lossy().into_owned();
    unsafe { sys::tureen_free(raw.cast()) };
    text
}

/// `text` as a JSON string literal.
pub(crate) fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON array of integers, for id lists.
pub(crate) fn json_ids(ids: &[i64]) -> String {
    let items: Vec<String> = ids.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(","))
}
