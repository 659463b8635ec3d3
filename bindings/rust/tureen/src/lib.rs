//! Tureen from Rust: encrypted stores of JSON documents ("soups"), queries,
//! change listeners and sync, over libtureen's C interface.
//!
//! Documents, index specs, query specs and sync targets are JSON text, as in
//! the C header (`include/tureen.h`), whose rules hold here too; results come
//! back as JSON `String`s for whichever JSON crate the program uses.
//!
//! ```no_run
//! use tureen::{Key, Store};
//!
//! let store = Store::open("/tmp/contacts.tureen", Key::Passphrase("s3cret"))?;
//! store.register_soup("contacts", r#"[{"path": "name", "type": "string"}]"#)?;
//! store.upsert("contacts", r#"{"name": "Ada"}"#, None)?;
//! let page = store.query(r#"{"queryType": "exact", "soupName": "contacts",
//!     "indexPath": "name", "matchKey": "Ada", "pageSize": 10}"#, 0)?;
//! # Ok::<(), tureen::Error>(())
//! ```
//!
//! Threads: a [`Store`] is `Send` and `Sync` (the library serialises the
//! calls on one store); listener closures run on the library's own thread.

mod error;
mod listener;
mod options;
mod store;
mod strings;
mod sync;

pub use error::{Error, Result, Status};
pub use listener::Listener;
pub use options::{Key, OpenOptions};
pub use store::{remove_store, Store};

/// The raw declarations, for calls this crate does not wrap.
pub use tureen_sys as sys;

/// The loaded library's version, "MAJOR.MINOR.PATCH".
pub fn version() -> &'static str {
    // The header makes the string static and never fails.
    let text = unsafe { std::ffi::CStr::from_ptr(sys::tureen_version()) };
    text.to_str().unwrap_or("")
}
