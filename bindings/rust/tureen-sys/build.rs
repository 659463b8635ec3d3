//! Finds libtureen: TUREEN_LIB_DIR when set (a build tree, a private copy),
//! else pkg-config's tureen.pc (what `make install` writes), else the
//! linker's default directories.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=TUREEN_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rustc-link-lib=dylib=tureen");

    let dirs = match env::var_os("TUREEN_LIB_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if !dir.join("libtureen.so").exists() {
                panic!("TUREEN_LIB_DIR={} holds no libtureen.so", dir.display());
            }
            vec![dir]
        }
        _ => pkg_config_dirs(),
    };
    for dir in &dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
        // This crate's own tests find the library at run time without
        // LD_LIBRARY_PATH; dependents get the directory as DEP_TUREEN_LIB_DIR
        // because link arguments do not travel to them.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    if let Some(dir) = dirs.first() {
        println!("cargo:lib_dir={}", dir.display());
    }
}

/// The -L directories of `pkg-config --libs-only-L tureen`; none when
/// pkg-config or tureen.pc is missing, leaving the linker's own search.
fn pkg_config_dirs() -> Vec<PathBuf> {
    let out = match Command::new("pkg-config").args(["--libs-only-L", "tureen"]).output() {
        Ok(out) if out.status.success() => out.stdout,
        _ => return Vec::new(),
    };
    String::from_utf8_lossy(&out)
        .split_whitespace()
        .filter_map(|flag| flag.strip_prefix("-L"))
        .map(PathBuf::from)
        .collect()
}
