//! Listener closures: called on the library's thread with each event,
//! never again once the Listener is dropped, and a panic stays inside.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::panic;
use std::sync::mpsc;
use std::sync::{Arc, Once};
use std::thread;

use common::{int_list, ints, scratch, strings, WAIT};
use tureen::{Key, Listener, Status, Store};

const SPECS: &str = r#"[{"path": "name", "type": "string"}]"#;

fn store(name: &str) -> Store {
    let store = Store::open(scratch(name).join("s.tureen"), Key::Unencrypted).unwrap();
    store.register_soup("people", SPECS).unwrap();
    store
}

/// Sets its flag when dropped: shows when the library let go of a closure.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_soup_listener_gets_each_commit_on_the_librarys_thread() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<Listener>();

    let store = store("listen");
    let (tx, rx) = mpsc::channel();
    let _listener = store
        .listen_soup(Some("people"), move |event| {
            tx.send((event.to_string(), thread::current().id())).unwrap();
        })
        .unwrap();
    let stored = store.upsert("people", r#"[{"name": "a"}, {"name": "b"}]"#, None).unwrap();
    let (event, on) = rx.recv_timeout(WAIT).unwrap();
    assert_ne!(on, thread::current().id());
    assert_eq!(strings(&event, "soup"), ["people"]);
    assert_eq!(int_list(&event, "created"), ints(&stored, "_soupEntryId"));
    assert_eq!(strings(&event, "origin"), ["app"]);

    let ids = ints(&stored, "_soupEntryId");
    store.remove("people", &ids[..1]).unwrap();
    let (event, _) = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(int_list(&event, "deleted"), &ids[..1]);
    assert_eq!(int_list(&event, "created"), Vec::<i64>::new());
}

#[test]
fn a_dropped_listener_is_never_called_again_and_its_closure_is_dropped() {
    let store = store("drop");
    let calls = Arc::new(AtomicUsize::new(0));
    let released = Arc::new(AtomicBool::new(false));
    let (counted, flag) = (Arc::clone(&calls), DropFlag(Arc::clone(&released)));
    let listener = store
        .listen_soup(None, move |_| {
            let _keep = &flag;
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    // A second listener shows when the events after the drop were delivered.
    let (tx, rx) = mpsc::channel();
    let _witness = store.listen_soup(None, move |event| tx.send(event.to_string()).unwrap()).unwrap();

    store.upsert("people", r#"{"name": "before"}"#, None).unwrap();
    rx.recv_timeout(WAIT).unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    while calls.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        thread::yield_now();
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    drop(listener);
    assert!(released.load(Ordering::SeqCst), "the closure is dropped when the listener is");
    store.upsert("people", r#"{"name": "after 1"}"#, None).unwrap();
    store.upsert("people", r#"{"name": "after 2"}"#, None).unwrap();
    rx.recv_timeout(WAIT).unwrap();
    rx.recv_timeout(WAIT).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn closing_the_store_releases_its_listeners() {
    let store = store("close");
    let released = Arc::new(AtomicBool::new(false));
    let flag = DropFlag(Arc::clone(&released));
    let listener = store.listen_soup(None, move |_| { let _keep = &flag; }).unwrap();
    store.close().unwrap();
    assert!(released.load(Ordering::SeqCst));
    assert_eq!(listener.remove().unwrap_err().status, Status::Misuse);
}

const BUG: &str = "a listener's bug";

/// The panic this test makes runs on the library's thread, whose output the
/// test harness does not capture; it is expected, so it is not printed.
fn quiet_about_the_planned_panic() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let report = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&BUG) {
                report(info);
            }
        }));
    });
}

#[test]
fn a_panic_in_a_listener_stays_on_its_side_and_silences_it() {
    quiet_about_the_planned_panic();
    let store = store("panic");
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let _panicking = store
        .listen_soup(None, move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            panic::panic_any(BUG);
        })
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let _witness = store.listen_soup(None, move |event| tx.send(event.to_string()).unwrap()).unwrap();
    for name in ["one", "two", "three"] {
        store.upsert("people", &format!(r#"{{"name": "{name}"}}"#), None).unwrap();
        rx.recv_timeout(WAIT).unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "called once, then poisoned");
    assert_eq!(store.count(r#"{"queryType": "all", "soupName": "people"}"#).unwrap(), 3);
}

#[test]
fn a_live_query_sends_its_first_page_then_each_change() {
    let store = store("live");
    store.upsert("people", r#"{"name": "Ada"}"#, None).unwrap();
    let (tx, rx) = mpsc::channel();
    let spec = r#"{"queryType": "all", "soupName": "people", "orderPath": "name", "pageSize": 10}"#;
    let live = store.live_query(spec, move |page| tx.send(page.to_string()).unwrap()).unwrap();
    assert_eq!(strings(&rx.recv_timeout(WAIT).unwrap(), "name"), ["Ada"]);
    store.upsert("people", r#"{"name": "Alan"}"#, None).unwrap();
    assert_eq!(strings(&rx.recv_timeout(WAIT).unwrap(), "name"), ["Ada", "Alan"]);

    let error = store.live_query(r#"{"queryType": "all", "soupName": "nope"}"#, |_| {}).unwrap_err();
    assert_eq!(error.status, Status::NotFound);
    drop(live);
}
