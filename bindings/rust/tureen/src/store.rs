//! An open store and its entry operations.

use std::ffi::CString;
use std::mem::ManuallyDrop;
use std::os::raw::{c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr::{self, NonNull};

use tureen_sys as sys;

use crate::error::{check, Error, Result, Status};
use crate::options::OpenOptions;
use crate::strings::{c_string, c_string_or_null, json_ids, ptr_or_null, take};

/// tureen_upsert and tureen_local_upsert, which take the same arguments.
type Write = unsafe extern "C" fn(
    *mut sys::tureen_store,
    *const c_char,
    *const c_char,
    *const c_char,
    *mut *mut c_char,
) -> c_int;

/// An open store; closed when dropped (or by [`Store::close`], which says
/// whether closing worked).
#[derive(Debug)]
pub struct Store {
    raw: NonNull<sys::tureen_store>,
}

// The header: any thread may call any function on any handle, and the
// library serialises the calls on one store.
unsafe impl Send for Store {}
unsafe impl Sync for Store {}

impl Store {
    /// Opens the store at `path`, creating it unless the options say
    /// otherwise: `Store::open(path, Key::Passphrase("..."))` or
    /// `Store::open(path, OpenOptions::new(key).create(false))`.
    /// A wrong key is `Status::Key`.
    pub fn open<'a>(path: impl AsRef<Path>, options: impl Into<OpenOptions<'a>>) -> Result<Store> {
        let path = c_path(path.as_ref())?;
        let options = c_string(&options.into().to_json(), "key")?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::tureen_store_open(path.as_ptr(), options.as_ptr(), &mut raw) })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error { status: Status::Internal, message: "tureen_store_open gave no handle".into() })?;
        Ok(Store { raw })
    }

    /// Closes the store now, reporting what dropping it would ignore.
    pub fn close(self) -> Result<()> {
        let store = ManuallyDrop::new(self);
        check(unsafe { sys::tureen_store_close(store.raw.as_ptr()) })
    }

    /// The C handle, for `tureen_sys` calls this crate does not wrap. It
    /// stays owned by this `Store`: do not close it.
    pub fn as_ptr(&self) -> *mut sys::tureen_store {
        self.raw.as_ptr()
    }

    /// Creates a soup with its index specs (a JSON array); the same specs
    /// again do nothing.
    pub fn register_soup(&self, soup: &str, index_specs_json: &str) -> Result<()> {
        let soup = c_string(soup, "soup")?;
        let specs = c_string(index_specs_json, "index specs")?;
        check(unsafe { sys::tureen_soup_register(self.as_ptr(), soup.as_ptr(), specs.as_ptr()) })
    }

    pub fn soup_exists(&self, soup: &str) -> Result<bool> {
        let soup = c_string(soup, "soup")?;
        let mut exists: c_int = 0;
        check(unsafe { sys::tureen_soup_exists(self.as_ptr(), soup.as_ptr(), &mut exists) })?;
        Ok(exists != 0)
    }

    /// Inserts or updates one entry (a JSON object) or several (an array, in
    /// one transaction); returns them as stored, with "_soupEntryId".
    /// With `external_id_path`, an entry with the same value there is updated.
    pub fn upsert(&self, soup: &str, entries_json: &str, external_id_path: Option<&str>) -> Result<String> {
        self.write_entries(sys::tureen_upsert, soup, entries_json, external_id_path)
    }

    /// As [`Store::upsert`], marking the entries as local changes for the
    /// next sync up (`id_field`: the record id's path, `None`: "id").
    pub fn local_upsert(&self, soup: &str, entries_json: &str, id_field: Option<&str>) -> Result<String> {
        self.write_entries(sys::tureen_local_upsert, soup, entries_json, id_field)
    }

    fn write_entries(&self, write: Write, soup: &str, entries_json: &str, path: Option<&str>) -> Result<String> {
        let soup = c_string(soup, "soup")?;
        let entries = c_string(entries_json, "entries")?;
        let path = c_string_or_null(path, "id path")?;
        let mut out = ptr::null_mut();
        check(unsafe { write(self.as_ptr(), soup.as_ptr(), entries.as_ptr(), ptr_or_null(&path), &mut out) })?;
        Ok(take(out))
    }

    /// The entries with these ids, as a JSON array in the order asked.
    pub fn retrieve(&self, soup: &str, ids: &[i64]) -> Result<String> {
        let soup = c_string(soup, "soup")?;
        let ids = c_string(&json_ids(ids), "ids")?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::tureen_retrieve(self.as_ptr(), soup.as_ptr(), ids.as_ptr(), &mut out) })?;
        Ok(take(out))
    }

    pub fn remove(&self, soup: &str, ids: &[i64]) -> Result<()> {
        let soup = c_string(soup, "soup")?;
        let ids = c_string(&json_ids(ids), "ids")?;
        check(unsafe { sys::tureen_remove(self.as_ptr(), soup.as_ptr(), ids.as_ptr()) })
    }

    /// Page `page` (from 0) of a query spec, as a JSON array of entries (or
    /// of rows, for Smart SQL and selectPaths).
    pub fn query(&self, query_spec_json: &str, page: u32) -> Result<String> {
        let spec = c_string(query_spec_json, "query spec")?;
        let page = c_int::try_from(page)
            .map_err(|_| Error { status: Status::Query, message: format!("page {page} is out of range") })?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::tureen_query(self.as_ptr(), spec.as_ptr(), page, &mut out) })?;
        Ok(take(out))
    }

    /// How many entries (or rows) the query matches, on every page.
    pub fn count(&self, query_spec_json: &str) -> Result<i64> {
        let spec = c_string(query_spec_json, "query spec")?;
        let mut count = 0i64;
        check(unsafe { sys::tureen_count(self.as_ptr(), spec.as_ptr(), &mut count) })?;
        Ok(count)
    }
}

/// Deletes a closed store's file and its companions; an open one (in this
/// process) is `Status::Misuse`, a missing one `Status::NotFound`.
pub fn remove_store(path: impl AsRef<Path>) -> Result<()> {
    let path = c_path(path.as_ref())?;
    check(unsafe { sys::tureen_store_remove(path.as_ptr()) })
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error { status: Status::Invalid, message: "path contains a NUL byte".into() })
}

impl Drop for Store {
    fn drop(&mut self) {
        // Close fails only for a transaction another thread holds open, which
        // this crate's calls never leave behind; Drop has no one to tell.
        unsafe { sys::tureen_store_close(self.raw.as_ptr()) };
    }
}
