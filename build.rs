//! Build glue: compiles the C varargs shim (`nc_put_att`-style varargs entry points Rust
//! cannot define). The headers are not made here: `make headers` renders them (headers/).

fn main() {
    println!("cargo:rerun-if-changed=csrc/varargs.c");
    println!("cargo:rerun-if-changed=build.rs");
    cc::Build::new().file("csrc/varargs.c").warnings(true).compile("nczarr_varargs");
}
