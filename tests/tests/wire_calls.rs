//! Every piece of Rust the kernel writes into cells (`bach_wire::calls`) compiles against the
//! `bach` crate: `wire_calls/expansions.rs` holds them all, as `bach_wire::calls::examples()`
//! writes them, and is compiled with this test (never run). A builder that changes, or an
//! entry point of `bach::notebook` that is renamed or takes other arguments, fails here rather
//! than in a user's cell.

#[path = "wire_calls/expansions.rs"]
mod expansions;

use std::path::PathBuf;

/// The expansions file as the examples write it.
fn generated() -> String {
    let mut out = String::from(
        "// @generated from `bach_wire::calls::examples()` by\n\
         // `BACH_WRITE_EXPANSIONS=1 cargo test -p bach-tests --test wire_calls`: every piece of\n\
         // Rust the kernel writes into cells, each in a block of its own. Compiled, never run.\n\
         #![allow(unused, clippy::all)]\n\n\
         use bach::prelude::*;\n\n\
         #[rustfmt::skip]\n\
         pub fn expansions(x: Array1<f64>, n: i32) -> Result<(), Box<dyn std::error::Error>> {\n",
    );
    for (what, rust) in bach_wire::calls::examples() {
        out.push_str(&format!("    // {what}\n    {{\n"));
        for line in rust.lines() {
            out.push_str(&format!("        {line}\n"));
        }
        out.push_str("    }\n");
    }
    out.push_str("    Ok(())\n}\n");
    out
}

#[test]
fn every_call_the_kernel_writes_is_compiled_here() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/wire_calls/expansions.rs");
    let want = generated();
    if std::env::var_os("BACH_WRITE_EXPANSIONS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is not what bach_wire::calls::examples() writes: run `BACH_WRITE_EXPANSIONS=1 cargo test -p bach-tests --test wire_calls` and commit it",
        path.display()
    );
    // Every example is in it (and so compiled).
    let examples = bach_wire::calls::examples();
    assert!(examples.len() >= 30 && examples.iter().all(|(what, _)| have.contains(&format!("// {what}\n"))));
    let _compiled = expansions::expansions;
}
