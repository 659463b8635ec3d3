//! How a store is opened: its key and the optional limits of
//! tureen_store_open, written as the options JSON the library reads.

use crate::strings::json_string;

/// How the store is keyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key<'a> {
    /// A passphrase, stretched with PBKDF2 (`{"key": ...}`).
    Passphrase(&'a str),
    /// A 256-bit key used as is, no KDF (`{"raw_key": ...}`).
    Raw(&'a [u8; 32]),
    /// No encryption at all (`{"unencrypted": true}`); never implied.
    Unencrypted,
}

/// The key and the options of `tureen_store_open` (see the header for
/// their meaning and defaults): `OpenOptions::new(key).create(false)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenOptions<'a> {
    key: Key<'a>,
    create: Option<bool>,
    kdf_iter: Option<u32>,
    busy_timeout_ms: Option<u32>,
    query_timeout_ms: Option<u32>,
    query_memory_mb: Option<u32>,
}

impl<'a> OpenOptions<'a> {
    pub fn new(key: Key<'a>) -> Self {
        OpenOptions { key, create: None, kdf_iter: None, busy_timeout_ms: None, query_timeout_ms: None, query_memory_mb: None }
    }

    /// `false`: a missing file is `Status::NotFound` instead of a new store.
    pub fn create(mut self, create: bool) -> Self {
        self.create = Some(create);
        self
    }

    /// PBKDF2 rounds for a passphrase; a store must always be opened with
    /// the count it was made with.
    pub fn kdf_iter(mut self, rounds: u32) -> Self {
        self.kdf_iter = Some(rounds);
        self
    }

    pub fn busy_timeout_ms(mut self, ms: u32) -> Self {
        self.busy_timeout_ms = Some(ms);
        self
    }

    pub fn query_timeout_ms(mut self, ms: u32) -> Self {
        self.query_timeout_ms = Some(ms);
        self
    }

    pub fn query_memory_mb(mut self, mb: u32) -> Self {
        self.query_memory_mb = Some(mb);
        self
    }

    pub(crate) fn to_json(&self) -> String {
        let mut members = vec![match self.key {
            Key::Passphrase(passphrase) => format!("\"key\":{}", json_string(passphrase)),
            Key::Raw(bytes) => {
                let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                format!("\"raw_key\":\"{hex}\"")
            }
            Key::Unencrypted => "\"unencrypted\":true".to_string(),
        }];
        if let Some(create) = self.create {
            members.push(format!("\"create\":{create}"));
        }
        let numbers = [
            ("kdf_iter", self.kdf_iter),
            ("busy_timeout_ms", self.busy_timeout_ms),
            ("query_timeout_ms", self.query_timeout_ms),
            ("query_memory_mb", self.query_memory_mb),
        ];
        members.extend(numbers.iter().filter_map(|(name, value)| value.map(|v| format!("\"{name}\":{v}"))));
        format!("{{{}}}", members.join(","))
    }
}

impl<'a> From<Key<'a>> for OpenOptions<'a> {
    fn from(key: Key<'a>) -> Self {
        OpenOptions::new(key)
    }
}
