//! What the tests share: a fresh directory each, and reading the few
//! numbers they check out of the library's JSON (no JSON crate offline).
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Long enough for a listener thread on a loaded machine; a test that
/// passes never waits it out.
pub const WAIT: Duration = Duration::from_secs(20);

/// An empty directory of its own under cargo's tmp dir for tests.
pub fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every integer that follows `"member":` in `json`, in order.
pub fn ints(json: &str, member: &str) -> Vec<i64> {
    let key = format!("\"{member}\":");
    json.match_indices(&key)
        .map(|(at, _)| {
            let rest = json[at + key.len()..].trim_start();
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
            digits.parse().unwrap_or_else(|_| panic!("no integer after {key} in {json}"))
        })
        .collect()
}

/// The integers of the array `"member": [...]` in `json`.
pub fn int_list(json: &str, member: &str) -> Vec<i64> {
    let key = format!("\"{member}\":");
    let at = json.find(&key).unwrap_or_else(|| panic!("no {key} in {json}")) + key.len();
    let rest = json[at..].trim_start().strip_prefix('[').unwrap_or_else(|| panic!("{key} is no array in {json}"));
    let end = rest.find(']').unwrap();
    rest[..end].split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect()
}

/// Every string that follows `"member":` in `json`, in order.
pub fn strings(json: &str, member: &str) -> Vec<String> {
    let key = format!("\"{member}\":");
    json.match_indices(&key)
        .filter_map(|(at, _)| {
            let rest = json[at + key.len()..].trim_start().strip_prefix('"')?;
            Some(rest[..rest.find('"')?].to_string())
        })
        .collect()
}
