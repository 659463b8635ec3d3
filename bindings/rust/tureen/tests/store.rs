//! Opening, keys, and the entry round trip.

mod common;

use std::sync::Arc;
use std::thread;

use common::{ints, scratch, strings};
use tureen::{Error, Key, OpenOptions, Status, Store};

const PEOPLE: &str = r#"[{"path": "name", "type": "string"}, {"path": "age", "type": "integer"}]"#;

#[test]
fn a_wrong_key_is_a_key_error_and_the_right_one_opens() {
    let path = scratch("key").join("s.tureen");
    let store = Store::open(&path, Key::Passphrase("right")).unwrap();
    store.register_soup("people", PEOPLE).unwrap();
    store.close().unwrap();

    let error = Store::open(&path, Key::Passphrase("wrong")).unwrap_err();
    assert_eq!(error.status, Status::Key);
    assert_eq!(error.code(), 4);
    assert!(!error.message.is_empty());
    let error = Store::open(&path, Key::Unencrypted).unwrap_err();
    assert_eq!(error.status, Status::Key);

    let store = Store::open(&path, Key::Passphrase("right")).unwrap();
    assert!(store.soup_exists("people").unwrap());
    assert!(!store.soup_exists("others").unwrap());
}

#[test]
fn a_raw_key_and_the_options_reach_the_library() {
    let dir = scratch("raw");
    let key = [7u8; 32];
    let path = dir.join("raw.tureen");
    Store::open(&path, OpenOptions::new(Key::Raw(&key)).busy_timeout_ms(100).query_memory_mb(64)).unwrap();
    let error = Store::open(&path, Key::Raw(&[8u8; 32])).unwrap_err();
    assert_eq!(error.status, Status::Key);
    Store::open(&path, Key::Raw(&key)).unwrap();

    let missing = dir.join("missing.tureen");
    let error = Store::open(&missing, OpenOptions::new(Key::Unencrypted).create(false)).unwrap_err();
    assert_eq!(error.status, Status::NotFound);
    assert!(!missing.exists());

    // A passphrase with quotes and control characters is written as JSON.
    let odd = dir.join("odd.tureen");
    Store::open(&odd, OpenOptions::new(Key::Passphrase("a\"b\\c\n")).kdf_iter(1000)).unwrap();
    let error = Store::open(&odd, OpenOptions::new(Key::Passphrase("a\"b\\c\n"))).unwrap_err();
    assert_eq!(error.status, Status::Key, "the store was made with kdf_iter 1000");
    Store::open(&odd, OpenOptions::new(Key::Passphrase("a\"b\\c\n")).kdf_iter(1000)).unwrap();
}

#[test]
fn register_upsert_query_round_trip() {
    let store = Store::open(scratch("round").join("s.tureen"), Key::Unencrypted).unwrap();
    store.register_soup("people", PEOPLE).unwrap();
    let stored = store
        .upsert("people", r#"[{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}, {"name": "Grace", "age": 85}]"#, None)
        .unwrap();
    let ids = ints(&stored, "_soupEntryId");
    assert_eq!(ids.len(), 3);
    assert!(ids[0] < ids[1] && ids[1] < ids[2]);

    let spec = r#"{"queryType": "range", "soupName": "people", "indexPath": "age", "beginKey": 40,
                   "order": "descending", "pageSize": 10}"#;
    let page = store.query(spec, 0).unwrap();
    assert_eq!(strings(&page, "name"), ["Grace", "Alan"]);
    assert_eq!(ints(&page, "_soupEntryId"), [ids[2], ids[1]]);
    assert_eq!(store.count(spec).unwrap(), 2);
    assert_eq!(store.query(spec, 1).unwrap(), "[]");

    let exact = r#"{"queryType": "exact", "soupName": "people", "indexPath": "name", "matchKey": "Ada"}"#;
    assert_eq!(ints(&store.query(exact, 0).unwrap(), "age"), [36]);
    assert_eq!(strings(&store.retrieve("people", &[ids[2], ids[0]]).unwrap(), "name"), ["Grace", "Ada"]);

    store.remove("people", &[ids[0]]).unwrap();
    assert_eq!(store.retrieve("people", &[ids[0]]).unwrap(), "[]");
}

#[test]
fn upsert_by_external_id_updates_the_entry_it_matches() {
    let store = Store::open(scratch("external").join("s.tureen"), Key::Unencrypted).unwrap();
    store.register_soup("people", PEOPLE).unwrap();
    let first = store.upsert("people", r#"{"name": "Ada", "age": 36}"#, Some("name")).unwrap();
    let again = store.upsert("people", r#"{"name": "Ada", "age": 37}"#, Some("name")).unwrap();
    assert_eq!(ints(&again, "_soupEntryId"), ints(&first, "_soupEntryId"));
    assert_eq!(store.count(r#"{"queryType": "all", "soupName": "people"}"#).unwrap(), 1);
    let other = store.upsert("people", r#"{"name": "Ada", "age": 38}"#, None).unwrap();
    assert_ne!(ints(&other, "_soupEntryId"), ints(&first, "_soupEntryId"));
}

#[test]
fn a_nul_inside_text_is_invalid_before_it_reaches_c() {
    let store = Store::open(scratch("nul").join("s.tureen"), Key::Unencrypted).unwrap();
    store.register_soup("people", PEOPLE).unwrap();
    let error = store.upsert("people", "{\"name\": \"A\0da\"}", None).unwrap_err();
    assert_eq!(error.status, Status::Invalid);
    assert_eq!(store.count(r#"{"queryType": "all", "soupName": "people"}"#).unwrap(), 0);
}

#[test]
fn one_store_is_shared_by_threads() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<Store>();
    send_and_sync::<Error>();

    let store = Arc::new(Store::open(scratch("threads").join("s.tureen"), Key::Unencrypted).unwrap());
    store.register_soup("people", PEOPLE).unwrap();
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                for i in 0..25 {
                    store.upsert("people", &format!(r#"{{"name": "t{t}", "age": {i}}}"#), None).unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    assert_eq!(store.count(r#"{"queryType": "all", "soupName": "people"}"#).unwrap(), 100);
}

#[test]
fn a_store_is_closed_when_dropped_or_closed() {
    let dir = scratch("close");
    for close in [false, true] {
        let path = dir.join(format!("s{close}.tureen"));
        let store = Store::open(&path, Key::Unencrypted).unwrap();
        // tureen_store_remove refuses a store this process has open.
        assert_eq!(tureen::remove_store(&path).unwrap_err().status, Status::Misuse);
        if close {
            store.close().unwrap();
        } else {
            drop(store);
        }
        tureen::remove_store(&path).unwrap();
        assert!(!path.exists());
    }
    assert_eq!(tureen::remove_store(dir.join("strue.tureen")).unwrap_err().status, Status::NotFound);
}
