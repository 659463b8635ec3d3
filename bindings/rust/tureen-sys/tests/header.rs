//! The declarations against include/tureen.h: a constant or a function that
//! drifts from the header fails here instead of at a user's call.

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::ptr;

use tureen_sys::*;

const HEADER: &str = include_str!("../../../../include/tureen.h");
const DECLARATIONS: &str = include_str!("../src/lib.rs");

/// `#define NAME value` lines of the header whose value is a number.
fn header_defines() -> BTreeMap<String, i32> {
    HEADER
        .lines()
        .filter_map(|line| {
            let mut words = line.strip_prefix("#define ")?.split_whitespace();
            let name = words.next()?;
            let value = words.next()?.parse().ok()?;
            Some((name.to_string(), value))
        })
        .collect()
}

#[test]
fn status_codes_are_the_headers() {
    let defines = header_defines();
    let header_codes: Vec<i32> =
        defines.iter().filter(|(name, _)| name.starts_with("TUREEN_E_")).map(|(_, value)| *value).collect();
    let mut ours = TUREEN_ERROR_CODES.to_vec();
    ours.sort_unstable();
    let mut theirs = header_codes.clone();
    theirs.sort_unstable();
    assert_eq!(ours, theirs);
    assert_eq!(defines["TUREEN_OK"], TUREEN_OK);
    assert_eq!(defines["TUREEN_E_KEY"], TUREEN_E_KEY);
    assert_eq!(defines["TUREEN_E_INTERNAL"], TUREEN_E_INTERNAL);
    assert_eq!(defines["TUREEN_VERSION_NUMBER"], TUREEN_VERSION_NUMBER);
}

#[test]
fn every_declared_function_is_in_the_header() {
    let declared: Vec<&str> = DECLARATIONS
        .split("pub fn ")
        .skip(1)
        .map(|rest| rest.split('(').next().unwrap_or(""))
        .collect();
    assert!(declared.len() > 20, "parsed {} declarations", declared.len());
    for name in declared {
        let declared_here = [" ", "*"].iter().any(|before| HEADER.contains(&format!("{before}{name}(")));
        assert!(declared_here, "{name} is not declared by include/tureen.h");
    }
}

#[test]
fn the_library_names_every_code() {
    for code in std::iter::once(TUREEN_OK).chain(TUREEN_ERROR_CODES) {
        let mut name = ptr::null();
        assert_eq!(unsafe { tureen_status_name(code, &mut name) }, TUREEN_OK, "code {code}");
        let name = unsafe { CStr::from_ptr(name) }.to_str().unwrap();
        let define = if code == TUREEN_OK { "TUREEN_OK".to_string() } else { format!("TUREEN_E_{name}") };
        assert_eq!(header_defines().get(&define), Some(&code), "{define}");
    }
    let mut name = ptr::null();
    assert_eq!(unsafe { tureen_status_name(14, &mut name) }, TUREEN_E_INVALID);
    assert!(name.is_null());
}

#[test]
fn the_loaded_library_is_the_headers_version() {
    assert_eq!(unsafe { tureen_version_number() }, TUREEN_VERSION_NUMBER);
}
