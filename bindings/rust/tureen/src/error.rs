//! Errors: the status a call returned, with the library's message for it.

use std::ffi::CStr;
use std::fmt;
use std::os::raw::c_int;
use std::ptr;

use tureen_sys as sys;

/// What went wrong, as the library's status codes say (`TUREEN_E_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Misuse,
    Invalid,
    NotFound,
    Key,
    Corrupt,
    Io,
    Busy,
    Constraint,
    Query,
    Network,
    Http,
    Conflict,
    Cancelled,
    Internal,
    /// A code this crate does not know (from a newer library).
    Other(i32),
}

/// The variants of the header's codes, the single place both ways map.
const STATUSES: [(c_int, Status); 14] = [
    (sys::TUREEN_E_MISUSE, Status::Misuse),
    (sys::TUREEN_E_INVALID, Status::Invalid),
    (sys::TUREEN_E_NOT_FOUND, Status::NotFound),
    (sys::TUREEN_E_KEY, Status::Key),
    (sys::TUREEN_E_CORRUPT, Status::Corrupt),
    (sys::TUREEN_E_IO, Status::Io),
    (sys::TUREEN_E_BUSY, Status::Busy),
    (sys::TUREEN_E_CONSTRAINT, Status::Constraint),
    (sys::TUREEN_E_QUERY, Status::Query),
    (sys::TUREEN_E_NETWORK, Status::Network),
    (sys::TUREEN_E_HTTP, Status::Http),
    (sys::TUREEN_E_CONFLICT, Status::Conflict),
    (sys::TUREEN_E_CANCELLED, Status::Cancelled),
    (sys::TUREEN_E_INTERNAL, Status::Internal),
];

impl Status {
    /// The status of an error code; `None` for `TUREEN_OK` (0).
    pub fn from_code(code: i32) -> Option<Status> {
        if code == sys::TUREEN_OK {
            return None;
        }
        let known = STATUSES.iter().find(|(c, _)| *c == code).map(|(_, s)| *s);
        Some(known.unwrap_or(Status::Other(code)))
    }

    /// The C code, `TUREEN_E_*`.
    pub fn code(self) -> i32 {
        match self {
            Status::Other(code) => code,
            _ => STATUSES.iter().find(|(_, s)| *s == self).map_or(sys::TUREEN_E_INTERNAL, |(c, _)| *c),
        }
    }

    /// The library's name of the code, its define without `TUREEN_E_`:
    /// "KEY", "NOT_FOUND", ...; "UNKNOWN" for a code the library does not
    /// know either.
    pub fn name(self) -> &'static str {
        let mut name = ptr::null();
        // The header makes the names static strings.
        let status = unsafe { sys::tureen_status_name(self.code(), &mut name) };
        if status != sys::TUREEN_OK || name.is_null() {
            return "UNKNOWN";
        }
        unsafe { CStr::from_ptr(name) }.to_str().unwrap_or("UNKNOWN")
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed call: its status and the library's message (`tureen_errmsg`).
/// Displayed as "NAME: message", e.g. "KEY: wrong key ...".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The C code, `TUREEN_E_*`.
    pub fn code(&self) -> i32 {
        self.status.code()
    }

    /// The error of a call that just returned `code`, with this thread's
    /// message, which the next call on the thread replaces.
    pub(crate) fn last(code: c_int) -> Error {
        let message = unsafe { CStr::from_ptr(sys::tureen_errmsg()) }.to_string_lossy().into_owned();
        Error { status: Status::from_code(code).unwrap_or(Status::Internal), message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// Ok for `TUREEN_OK`, else the error the library describes.
pub(crate) fn check(code: c_int) -> Result<()> {
    if code == sys::TUREEN_OK {
        Ok(())
    } else {
        Err(Error::last(code))
    }
}
