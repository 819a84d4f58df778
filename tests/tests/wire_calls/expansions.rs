// @generated from `bach_wire::calls::examples()` by
// `BACH_WRITE_EXPANSIONS=1 cargo test -p bach-tests --test wire_calls`: every piece of
// Rust the kernel writes into cells, each in a block of its own. Compiled, never run.
#![allow(unused, clippy::all)]

use bach::prelude::*;

#[rustfmt::skip]
pub fn expansions(x: Array1<f64>, n: i32) -> Result<(), Box<dyn std::error::Error>> {
    // prelude
    {
        use bach::prelude_without_macros::*;
        mod bach_show_debug { pub use bach::notebook::ShowDebug as _; }
        use bach_show_debug::*;
        bach::notebook::cell(0);
        let bach_session = bach::notebook::NotebookSession;
        "0".parse::<u8>()?;
    }
    // with ShowDebug
    {
        mod bach_show_debug { pub use bach::notebook::ShowDebug as _; }
    }
    // cell
    {
        bach::notebook::cell(7);
    }
    // tick
    {
        bach::notebook::tick();
    }
    // tick in a closure
    {
        let f = |v: f64| {bach::notebook::tick(); v + 1.0 };
    }
    // sleep
    {
        bach::notebook::sleep(std::time::Duration::from_millis(0));
    }
    // reached_end
    {
        let _ = bach::notebook::reached_end(&(x.sum()));
    }
    // cell_end
    {
        bach::notebook::cell_end();
    }
    // devices
    {
        bach::notebook::show_devices();
    }
    // config
    {
        bach::notebook::show_config();
    }
    // plan
    {
        bach::notebook::show_plan(&(&x * 2.0));
    }
    // explain
    {
        bach::notebook::show_explain(&(&x * 2.0));
    }
    // graph
    {
        bach::notebook::show_graph(&(&x * 2.0));
    }
    // trace
    {
        bach::notebook::show_trace("");
    }
    // trace last
    {
        bach::notebook::show_trace("last");
    }
    // trace export
    {
        bach::notebook::export_trace("", "trace.json");
    }
    // trace export last
    {
        bach::notebook::export_trace("last", "trace.json");
    }
    // trace keep
    {
        bach::notebook::set_trace_keep(20);
    }
    // chart
    {
        bach::notebook::set_chart("auto 20ms");
    }
    // memory
    {
        bach::notebook::show_memory();
    }
    // memory cap
    {
        bach::notebook::set_memory("64MiB");
    }
    // policy
    {
        bach::notebook::set_policy("greedy");
    }
    // cell device
    {
        bach::notebook::force_cell("cpu");
    }
    // cost
    {
        bach::notebook::show_cost();
    }
    // cost set
    {
        bach::notebook::set_cost("elementwise.cuda.per_element = 2e-11");
    }
    // cost reset
    {
        bach::notebook::reset_cost();
    }
    // cost profile
    {
        bach::notebook::use_cost_profile("h100");
    }
    // calibrate
    {
        bach::notebook::calibrate();
    }
    // whatif
    {
        bach::notebook::whatif(&[("transfer.bandwidth", "5GB/s")], &(&x * 2.0));
    }
    // whatif profile
    {
        bach::notebook::whatif_profile("h100", &(&x * 2.0));
    }
    // breakdown
    {
        bach::notebook::show_breakdown();
    }
    // panel
    {
        bach::notebook::model_panel();
    }
    // panel of
    {
        bach::notebook::panel(&(&x * 2.0));
    }
    // vars
    {
        bach::notebook::show_vars(&[("x", &x.lazy())], &["gone"]);
    }
    // vars live
    {
        bach::notebook::show_vars_live(&[("x", &x.lazy())], &[]);
    }
    // stash
    {
        {
            use bach::notebook::stash::{Skip as _, Stasher as _};
            let __bach_stash = bach::notebook::stash::Stash::new("/tmp/bach-wire-example");
            (&&bach::notebook::stash::Var("x", &x)).stash_into(&__bach_stash);
            (&&bach::notebook::stash::Var("n", &n)).stash_into(&__bach_stash);
            __bach_stash.finish();
        }
    }
    // restore session
    {
        bach::notebook::stash::restore_session("/tmp/bach-wire-example").unwrap();
    }
    // restore
    {
        let y: Array1<f64> = bach::notebook::stash::restore("/tmp/bach-wire-example", "y").unwrap();
    }
    // without ShowDebug
    {
        mod bach_show_debug {}
    }
    Ok(())
}
