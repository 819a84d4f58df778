//! A kernel that serves the protocol layer with the test engine (`test_engine.rs`, a test
//! double), for the protocol tests in `tests/python/test_protocol.py`. Not the real kernel.
//!
//! Usage: `protocol_test_kernel <connection_file>`.
#![allow(dead_code)]

#[path = "../comms.rs"]
mod comms;
#[path = "../connection.rs"]
mod connection;
#[path = "../engine.rs"]
mod engine;
#[path = "../is_complete.rs"]
mod is_complete;
#[path = "../log.rs"]
mod log;
#[path = "../server.rs"]
mod server;
#[path = "../test_engine.rs"]
mod test_engine;
#[path = "../wire.rs"]
mod wire;

fn main() {
    let Some(connection_file) = std::env::args_os().nth(1) else {
        eprintln!("usage: protocol_test_kernel <connection_file>");
        std::process::exit(2);
    };
    let engine = Box::new(test_engine::TestEngine::new());
    if let Err(e) = server::run(std::path::Path::new(&connection_file), engine, server::Watch::Parent) {
        eprintln!("protocol_test_kernel: {e}");
        std::process::exit(1);
    }
}
