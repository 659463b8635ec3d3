//! tureen-sys links the library; this crate's own tests and examples also
//! need to find it at run time, and link arguments do not travel from one
//! crate to another, so the rpath is set again here.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TUREEN_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_TUREEN_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
