//! Sync against a real Kinto on loopback: `make rust-test` starts one and
//! sets TUREEN_KINTO_URL; without it these tests have nothing to talk to
//! and say so.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;

use common::{ints, scratch, strings, WAIT};
use tureen::{Key, Status, Store};

const SPECS: &str = r#"[{"path": "id", "type": "string"}, {"path": "title", "type": "string"}]"#;

fn kinto() -> Option<String> {
    let url = std::env::var("TUREEN_KINTO_URL").ok().filter(|u| !u.is_empty());
    if url.is_none() {
        eprintln!("TUREEN_KINTO_URL is not set: no Kinto to sync with, test skipped");
    }
    url
}

fn target(url: &str, collection: &str) -> String {
    format!(
        r#"{{"type": "kinto", "url": "{url}", "bucket": "rust", "collection": "{collection}",
            "auth": {{"user": "rust", "password": "binding"}}, "create": true}}"#
    )
}

fn store(name: &str) -> Store {
    let store = Store::open(scratch(name).join("s.tureen"), Key::Unencrypted).unwrap();
    store.register_soup("notes", SPECS).unwrap();
    store
}

#[test]
fn what_one_store_syncs_up_another_syncs_down() {
    let Some(url) = kinto() else { return };
    let collection = format!("updown{}", std::process::id());
    let target = target(&url, &collection);

    let writer = store("up");
    writer.local_upsert("notes", r#"[{"id": "n1", "title": "milk"}, {"id": "n2", "title": "eggs"}]"#, None).unwrap();
    let state = writer.sync_up(&target, "notes", None).unwrap();
    assert_eq!(strings(&state, "status"), ["DONE"]);

    let reader = store("down");
    let (tx, rx) = mpsc::channel();
    let _events = reader
        .listen_sync(Some(r#"{"codes": ["sync_complete"]}"#), move |event| tx.send(event.to_string()).unwrap())
        .unwrap();
    let mut states = Vec::new();
    let state = reader
        .sync_down_with_progress(&target, "notes", Some(r#"{"name": "pull"}"#), &mut |s| states.push(s.to_string()))
        .unwrap();
    assert_eq!(strings(&state, "status"), ["DONE"]);
    assert!(!states.is_empty());
    assert_eq!(states.last(), Some(&state));
    assert_eq!(strings(&rx.recv_timeout(WAIT).unwrap(), "code"), ["sync_complete"]);

    let page = reader.query(r#"{"queryType": "all", "soupName": "notes", "orderPath": "id"}"#, 0).unwrap();
    assert_eq!(strings(&page, "id"), ["n1", "n2"]);
    assert_eq!(strings(&page, "title"), ["milk", "eggs"]);
    let saved = reader.sync_status("pull").unwrap();
    assert_eq!(strings(&saved, "name"), ["pull"]);
    assert_eq!(strings(&saved, "status"), ["DONE"]);
    assert_eq!(ints(&saved, "synced"), [2]);
}

#[test]
fn a_panic_in_progress_is_raised_again_after_the_sync() {
    let Some(url) = kinto() else { return };
    let reader = store("panic");
    let target = target(&url, &format!("panic{}", std::process::id()));
    let mut calls = 0;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        reader.sync_down_with_progress(&target, "notes", None, &mut |_| {
            calls += 1;
            panic!("a progress bug");
        })
    }));
    let panic = outcome.unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"a progress bug"));
    assert_eq!(calls, 1, "not called again after its panic");
    assert_eq!(reader.count(r#"{"queryType": "all", "soupName": "notes"}"#).unwrap(), 0);
}

#[test]
fn a_server_out_of_reach_is_a_network_error() {
    let reader = store("network");
    // Port 9 (discard) on loopback: nothing listens, the connection is refused.
    let target = r#"{"type": "kinto", "url": "http://127.0.0.1:9/v1", "bucket": "b", "collection": "c",
                     "timeout_ms": 2000}"#;
    let error = reader.sync_down(target, "notes", None).unwrap_err();
    assert_eq!(error.status, Status::Network, "{error}");
}
