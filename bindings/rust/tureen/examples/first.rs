//! A first program: a store, a soup, entries, a query and a listener.
//!
//! Usage: cargo run --example first [DIRECTORY]   (default: the temp dir)

use std::sync::mpsc;
use std::time::Duration;

use tureen::{Key, Status, Store};

fn main() -> Result<(), tureen::Error> {
    let dir = std::env::args().nth(1).map_or_else(std::env::temp_dir, Into::into);
    let path = dir.join(format!("first-{}.tureen", std::process::id()));
    println!("tureen {} at {}", tureen::version(), path.display());

    let store = Store::open(&path, Key::Passphrase("correct horse battery staple"))?;
    store.register_soup("contacts", r#"[{"path": "name", "type": "string"}, {"path": "age", "type": "integer"}]"#)?;

    // A listener is a closure run on the library's thread; here it hands
    // each change event over to the main thread.
    let (events, received) = mpsc::channel();
    let listener = store.listen_soup(Some("contacts"), move |event| {
        let _ = events.send(event.to_string());
    })?;

    let stored = store.upsert("contacts", r#"[{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]"#, None)?;
    println!("stored:   {stored}");
    let change = received.recv_timeout(Duration::from_secs(10)).expect("a change event");
    println!("event:    {change}");

    let older = store.query(
        r#"{"queryType": "range", "soupName": "contacts", "indexPath": "age", "beginKey": 40, "pageSize": 10}"#,
        0,
    )?;
    println!("age 40+:  {older}");
    assert!(older.contains("\"Alan\"") && !older.contains("\"Ada\""));

    // Dropping the listener removes it: the closure is never called again.
    drop(listener);

    // Errors carry the status, named by the library.
    match store.query(r#"{"queryType": "all", "soupName": "nope"}"#, 0) {
        Err(error) if error.status == Status::NotFound => println!("error:    {error}"),
        other => panic!("expected NOT_FOUND, got {other:?}"),
    }
    drop(store);
    match Store::open(&path, Key::Passphrase("wrong")) {
        Err(error) => println!("reopened: {} ({})", error.status.name(), error.code()),
        Ok(_) => panic!("a wrong key opened the store"),
    }
    std::fs::remove_file(&path).ok();
    Ok(())
}
