//! The executor across two memory spaces: a test device that keeps its own copies of values
//! in host memory and runs accelerator-annotated ops with their CPU kernels. It checks that
//! transfers happen before the stages that need them, that values computed on the device
//! come back to the host, and that results equal an all-CPU run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bach_runtime::trace::EventKind;
use bach_runtime::{
    oa, split, Annotation, BachError, CpuDevice, Device, DeviceId, DeviceKind, DeviceProfile, Devices, HostRows, OpCtx, PendingCopy, PendingWrite, Result, Session, Tag, Value,
    ValueRef,
};
use ndarray::{ArrayD, IxDyn};

struct SecondMemory {
    profile: DeviceProfile,
    copies_in: AtomicUsize,
    copies_out: AtomicUsize,
    /// Whether results written in place are faulted in ahead of the copies back.
    prefault: bool,
}

/// A deep copy: the device's value shares no buffer with the host's.
fn copy(v: &Value) -> Value {
    v.view().to_value().array::<f64>().map(|a| Value::from(a.to_owned())).unwrap_or_else(|| v.clone())
}

impl Device for SecondMemory {
    fn profile(&self) -> &DeviceProfile {
        &self.profile
    }
    fn run(&self, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Value> {
        assert!(op.accelerator().is_some() || op.kind() == bach_runtime::OpKind::Alloc, "{} has no accelerator version but ran on the device", op.name());
        op.run_cpu(ctx, args)
    }
    fn copy_in(&self, value: ValueRef<'_>, _tag: Tag) -> Result<Value> {
        self.copies_in.fetch_add(1, Ordering::SeqCst);
        Ok(copy(&value.to_value()))
    }
    fn copy_out(&self, value: ValueRef<'_>, _tag: Tag) -> Result<PendingCopy> {
        self.copies_out.fetch_add(1, Ordering::SeqCst);
        Ok(PendingCopy::ready(copy(&value.to_value())))
    }
    fn prefaults_results(&self) -> bool {
        self.prefault
    }
}

fn session_with_second_memory() -> (Arc<Session>, Arc<SecondMemory>) {
    session_with(false)
}

fn session_with(prefault: bool) -> (Arc<Session>, Arc<SecondMemory>) {
    let dev = Arc::new(SecondMemory {
        prefault,
        profile: DeviceProfile {
            id: DeviceId(1),
            kind: DeviceKind::Emulated,
            name: "second memory (test)".into(),
            memory_bytes: Some(1 << 30),
            threads: 1,
            measured_copies: None,
            fuses_elementwise: false,
        },
        copies_in: AtomicUsize::new(0),
        copies_out: AtomicUsize::new(0),
    });
    let devices = Devices::new(vec![Arc::new(CpuDevice::new()), dev.clone()], vec![]).unwrap();
    let s = Session::with_devices(devices);
    s.update_config(|c| c.policy = bach_runtime::Policy::Greedy);
    (s, dev)
}

fn scale(name: &str, k: f64, accelerated: bool) -> Arc<Annotation> {
    let b = oa(name).elementwise().args([split::rows(), split::rows()]).cpu(move |_, args| Ok(Value::from(&args[0].array::<f64>("scale")? * k + &args[1].array::<f64>("scale")?)));
    if accelerated {
        b.accelerator("scale", "/* test */").build()
    } else {
        b.build()
    }
}

fn host(n: usize, f: impl Fn(usize) -> f64) -> Value {
    Value::from(ArrayD::from_shape_fn(IxDyn(&[n]), |i| f(i[0])))
}

#[test]
fn values_cross_between_memories_before_the_stages_that_need_them() {
    let (s, dev) = session_with_second_memory();
    let n = 50_001;
    let x = s.source(host(n, |i| i as f64), "x");
    let on_dev = scale("dev_scale", 2.0, true);
    let on_cpu = scale("cpu_scale", 3.0, false);
    let y = on_dev.call(&[&x, &x]).unwrap(); // device: 3x
    let z = on_cpu.call(&[&y, &x]).unwrap(); // cpu: 10x, reads y (device -> host)
    let w = on_dev.call(&[&z, &y]).unwrap(); // device: 23x, reads z (host -> device) and y there

    let plan = s.plan(&[&w, &y]).unwrap();
    assert_eq!(plan.step_of(y.id()).unwrap().device, DeviceId(1), "{plan}");
    assert_eq!(plan.step_of(z.id()).unwrap().device, DeviceId(0), "{plan}");
    let out = s.evaluate(&[&w, &y]).unwrap().values;
    let (w_v, y_v) = (out[0].array::<f64>().unwrap(), out[1].array::<f64>().unwrap());
    for i in [0, 1, 777, n - 1] {
        assert_eq!(w_v[[i]], 23.0 * i as f64);
        assert_eq!(y_v[[i]], 3.0 * i as f64);
    }
    // x in, y out (for z and as a target), z in, w out.
    assert_eq!(dev.copies_in.load(Ordering::SeqCst), 2, "{plan}");
    assert_eq!(dev.copies_out.load(Ordering::SeqCst), 2, "{plan}");
    let trace = s.trace();
    let last = trace.last().unwrap();
    let transfers: Vec<_> = last.events.iter().filter(|e| e.kind == EventKind::Transfer).collect();
    assert_eq!(transfers.len(), 4);
    assert!(transfers.iter().all(|t| t.bytes == (n * 8) as u64));
    assert!(last.events.iter().any(|e| e.kind == EventKind::Compute && e.device == DeviceId(1)));

    // The same program on an all-CPU session gives the same numbers (the CPU only: on a GPU
    // host `Session::new()` would place `dev_scale`, whose kernel is a dummy, on the GPU).
    let cpu = Session::with_devices(Devices::select(bach_runtime::DeviceChoice::Cpu).unwrap());
    let x2 = cpu.source(host(n, |i| i as f64), "x");
    let y2 = on_dev.call(&[&x2, &x2]).unwrap();
    let z2 = on_cpu.call(&[&y2, &x2]).unwrap();
    let w2 = on_dev.call(&[&z2, &y2]).unwrap();
    assert_eq!(w2.eval().unwrap().array::<f64>().unwrap(), w_v);
}

#[test]
fn a_lazy_allocation_is_made_on_the_device_without_a_transfer() {
    let (s, dev) = session_with_second_memory();
    let ones = bach_runtime::oa_alloc("ones").accelerator("ones", "/* test */").cpu(|ctx, _| Ok(Value::from(ArrayD::from_elem(IxDyn(&[ctx.rows.len()]), 1.0f64)))).build();
    let a = s.alloc(&ones, bach_runtime::Meta::new(bach_runtime::DType::F64, [1000])).unwrap();
    let y = scale("dev_scale", 2.0, true).call(&[&a, &a]).unwrap();
    assert_eq!(y.eval().unwrap().array::<f64>().unwrap().sum(), 3000.0);
    assert_eq!(dev.copies_in.load(Ordering::SeqCst), 0, "the allocation is created on the device");
    assert_eq!(dev.copies_out.load(Ordering::SeqCst), 1);
}

#[test]
fn a_device_list_must_start_with_the_cpu() {
    let (_, dev) = session_with_second_memory();
    assert!(Devices::new(vec![dev], vec![]).is_err());
}

/// A value that a split stage on the device reads, and a later stage there reads whole, is
/// copied in once, whole, before the first (not streamed in pieces and copied again).
#[test]
fn a_value_read_by_two_stages_on_the_device_is_copied_in_once() {
    let (s, dev) = session_with_second_memory();
    s.update_config(|c| c.cost.planner.accelerator_piece_bytes = 64 << 10);
    let n = 100_000;
    let x = s.source(host(n, |i| i as f64), "x");
    let y = scale("dev_scale", 2.0, true).call(&[&x, &x]).unwrap(); // 3x, split by rows
    let both = oa("dev_dot")
        .unsplittable()
        .args([split::unsplittable(), split::unsplittable()])
        .accelerator("dev_dot", "/* test */")
        .shape(|_| Ok(bach_runtime::Meta::new(bach_runtime::DType::F64, [])))
        .cpu(|_, args| {
            let (a, b) = (args[0].array::<f64>("dot")?, args[1].array::<f64>("dot")?);
            Ok(Value::from(ndarray::arr0(a.iter().zip(b.iter()).map(|(a, b)| a * b).sum::<f64>()).into_dyn()))
        })
        .build();
    let d = both.call(&[&x, &y]).unwrap(); // sum 3 i^2, x whole
    let plan = s.plan(&[&d]).unwrap();
    assert!(plan.steps.iter().all(|st| st.device == DeviceId(1)), "{plan}");
    assert!(plan.stages[0].split_len.is_some() && plan.stages[1].split_len.is_none(), "a split stage, then a whole one: {plan}");
    let ins: Vec<_> = plan.transfers.iter().filter(|t| t.to == DeviceId(1)).collect();
    assert!(ins.len() == 1 && !ins[0].streamed && ins[0].stage == Some(0), "x copied whole once, before stage 0: {plan}");
    let got = s.evaluate(&[&d]).unwrap().values[0].array::<f64>().unwrap().iter().copied().next().unwrap();
    assert_eq!(got, (0..n).map(|i| 3.0 * (i * i) as f64).sum::<f64>());
    assert_eq!(dev.copies_in.load(Ordering::SeqCst), 1, "{plan}");
    let trace = s.trace();
    let copies: Vec<_> = trace.last().unwrap().events.iter().filter(|e| e.kind == EventKind::Transfer && e.to == Some(DeviceId(1))).collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
}

/// A device that asks for its results' memory to be faulted in ahead of its copies back: a
/// stage in many pieces lands every row in place, exactly, while the background threads
/// populate the same memory (sizes that are not multiples of a page or a piece).
#[test]
fn results_faulted_in_ahead_of_the_copies_back_land_exactly() {
    let (s, dev) = session_with(true);
    s.update_config(|c| c.cost.planner.accelerator_piece_bytes = 1 << 20);
    let n = (3 << 20) + 7;
    let x = s.source(host(n, |i| i as f64), "x");
    let y = scale("dev_scale", 2.0, true).call(&[&x, &x]).unwrap();
    let plan = s.plan(&[&y]).unwrap();
    assert!(plan.stages[0].device == DeviceId(1) && plan.stages[0].pieces > 8, "{plan}");
    let got = y.eval().unwrap();
    let got = got.array::<f64>().unwrap();
    assert_eq!(got.len(), n);
    assert!(got.iter().enumerate().all(|(i, &v)| v == 3.0 * i as f64), "every row landed");
    assert_eq!(dev.copies_out.load(Ordering::SeqCst), plan.stages[0].pieces, "{plan}");
}

/// A device whose copies into a result's rows finish late, on threads of their own (as a GPU's
/// drain thread does), and whose fourth piece fails.
struct LateWriter {
    profile: DeviceProfile,
    started: Arc<AtomicUsize>,
    wrote: Arc<AtomicUsize>,
}

impl Device for LateWriter {
    fn profile(&self) -> &DeviceProfile {
        &self.profile
    }
    fn run(&self, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Value> {
        if ctx.piece == 3 {
            return Err(BachError::invalid(op.name(), "piece 3 fails on purpose"));
        }
        op.run_cpu(ctx, args)
    }
    fn copy_in(&self, value: ValueRef<'_>, _tag: Tag) -> Result<Value> {
        Ok(copy(&value.to_value()))
    }
    fn copy_out(&self, value: ValueRef<'_>, _tag: Tag) -> Result<PendingCopy> {
        Ok(PendingCopy::ready(copy(&value.to_value())))
    }
    fn copy_out_into(&self, value: ValueRef<'_>, dest: HostRows, _tag: Tag) -> Result<PendingWrite> {
        let v = copy(&value.to_value());
        let wrote = self.wrote.clone();
        self.started.fetch_add(1, Ordering::SeqCst);
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            dest.write(v.view()).unwrap();
            wrote.fetch_add(1, Ordering::SeqCst);
        });
        Ok(PendingWrite::later(move || writer.join().map_err(|_| BachError::invalid("copy to host", "the writer panicked"))))
    }
    fn parallel_pieces(&self) -> bool {
        false
    }
}

/// When a piece fails, the copies of earlier pieces into the result's rows are waited for
/// before the stage gives up (and frees those rows): none is still writing when the error
/// reaches the caller, and the session goes on.
#[test]
fn a_failed_piece_waits_for_the_copies_already_under_way() {
    let (started, wrote) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let dev = Arc::new(LateWriter {
        profile: DeviceProfile {
            id: DeviceId(1),
            kind: DeviceKind::Emulated,
            name: "late writer (test)".into(),
            memory_bytes: Some(1 << 30),
            threads: 1,
            measured_copies: None,
            fuses_elementwise: false,
        },
        started: started.clone(),
        wrote: wrote.clone(),
    });
    let s = Session::with_devices(Devices::new(vec![Arc::new(CpuDevice::new()), dev], vec![]).unwrap());
    s.update_config(|c| {
        c.policy = bach_runtime::Policy::Greedy;
        c.cost.planner.accelerator_piece_bytes = 64 << 10;
    });
    let n = 100_000;
    let x = s.source(host(n, |i| i as f64), "x");
    let y = scale("dev_scale", 2.0, true).call(&[&x, &x]).unwrap();
    let plan = s.plan(&[&y]).unwrap();
    assert!(plan.stages[0].device == DeviceId(1) && plan.stages[0].pieces > 4, "{plan}");
    let err = s.evaluate(&[&y]).unwrap_err();
    assert!(err.to_string().contains("piece 3 fails on purpose"), "{err}");
    assert_eq!(started.load(Ordering::SeqCst), 3, "pieces 0, 1 and 2 started their copies");
    assert_eq!(wrote.load(Ordering::SeqCst), 3, "every copy under way finished before the error came back");
    let z = scale("cpu_scale", 3.0, false).call(&[&x, &x]).unwrap();
    assert_eq!(z.eval().unwrap().array::<f64>().unwrap()[[7]], 28.0, "the session goes on");
}
