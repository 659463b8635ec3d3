//! Errors carry the status, by the library's code and name.

mod common;

use common::scratch;
use tureen::{Key, Status, Store};

/// The header's defines, written out here so a wrong mapping or a wrong
/// name from the library is caught.
const EXPECTED: [(i32, Status, &str); 14] = [
    (1, Status::Misuse, "MISUSE"),
    (2, Status::Invalid, "INVALID"),
    (3, Status::NotFound, "NOT_FOUND"),
    (4, Status::Key, "KEY"),
    (5, Status::Corrupt, "CORRUPT"),
    (6, Status::Io, "IO"),
    (7, Status::Busy, "BUSY"),
    (8, Status::Constraint, "CONSTRAINT"),
    (9, Status::Query, "QUERY"),
    (10, Status::Network, "NETWORK"),
    (11, Status::Http, "HTTP"),
    (12, Status::Conflict, "CONFLICT"),
    (13, Status::Cancelled, "CANCELLED"),
    (99, Status::Internal, "INTERNAL"),
];

#[test]
fn every_status_maps_to_its_code_and_the_librarys_name() {
    for (code, status, name) in EXPECTED {
        assert_eq!(Status::from_code(code), Some(status), "code {code}");
        assert_eq!(status.code(), code, "{status:?}");
        assert_eq!(status.name(), name, "{status:?}");
        assert_eq!(status.to_string(), name);
    }
    assert_eq!(Status::from_code(0), None);
    assert_eq!(Status::from_code(42), Some(Status::Other(42)));
    assert_eq!(Status::Other(42).code(), 42);
    assert_eq!(Status::Other(42).name(), "UNKNOWN");
}

#[test]
fn a_failed_call_gives_its_status_and_the_librarys_message() {
    let store = Store::open(scratch("errors").join("s.tureen"), Key::Unencrypted).unwrap();
    let error = store.query(r#"{"queryType": "all", "soupName": "nope"}"#, 0).unwrap_err();
    assert_eq!(error.status, Status::NotFound);
    assert_eq!(error.code(), 3);
    assert!(error.message.contains("nope"), "{}", error.message);
    assert_eq!(error.to_string(), format!("NOT_FOUND: {}", error.message));

    let error = store.register_soup("bad name!", r#"[{"path": "a", "type": "string"}]"#).unwrap_err();
    assert_eq!(error.status, Status::Invalid);
    store.register_soup("s", r#"[{"path": "a", "type": "string"}]"#).unwrap();
    let error = store.query(r#"{"queryType": "exact", "soupName": "s", "indexPath": "b", "matchKey": 1}"#, 0).unwrap_err();
    assert_eq!(error.status, Status::Query);

    // The error is a std error, so `?` carries it into Box<dyn Error>.
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
    assert!(boxed.to_string().starts_with("QUERY: "));
}
