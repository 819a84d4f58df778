//! The emulated accelerator: a second memory space in host memory with its own capacity, real
//! copies in and out, and CPU kernels. It is not a GPU and never says it is one; it exists so
//! that transfers, lazy allocation on a device, paging, memory caps and device-resident values
//! run (and are tested) on machines without a GPU.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ndarray::{ArrayViewD, IxDyn};

use crate::annotation::{Annotation, OpCtx};
use crate::device::{run_cpu_kernel, Device, DeviceId, DeviceKind, DeviceProfile, MemoryUse, PendingCopy, PendingWrite, Tag};
use crate::error::{BachError, Result};
use crate::units::bytes;
use crate::value::{concat_rows, DeviceBuffer, DeviceValue, Element, HostRows, Value, ValueRef};

/// Bookkeeping of the emulated memory space.
struct Space {
    used: AtomicU64,
    capacity: u64,
    name: String,
}

impl Space {
    fn reserve(&self, n: u64, what: &str) -> Result<()> {
        let mut cur = self.used.load(Ordering::Relaxed);
        loop {
            if cur + n > self.capacity {
                return Err(BachError::DeviceOutOfMemory {
                    device: self.name.clone(),
                    detail: format!("{what} needs {} with {} of {} in use", bytes(n as usize), bytes(cur as usize), bytes(self.capacity as usize)),
                });
            }
            match self.used.compare_exchange_weak(cur, cur + n, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(now) => cur = now,
            }
        }
    }
}

/// One allocation in the emulated memory: a host array in standard layout, counted against
/// the capacity until dropped.
struct EmulatedBuffer {
    data: Value,
    bytes: u64,
    space: Arc<Space>,
}

impl DeviceBuffer for EmulatedBuffer {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Drop for EmulatedBuffer {
    fn drop(&mut self) {
        self.space.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// A memory space in host memory that runs CPU kernels.
pub struct EmulatedDevice {
    profile: DeviceProfile,
    space: Arc<Space>,
}

/// Name shown wherever the emulated device appears.
pub const EMULATED_NAME: &str = "emulated accelerator (host memory, CPU kernels; not a GPU)";

impl EmulatedDevice {
    /// An emulated accelerator with `capacity` bytes of memory, as device `id`.
    pub fn new(id: DeviceId, capacity: u64) -> Self {
        let threads = rayon::current_num_threads();
        let profile = DeviceProfile {
            id,
            kind: DeviceKind::Emulated,
            name: format!("{EMULATED_NAME}, {}", bytes(capacity as usize)),
            memory_bytes: Some(capacity),
            threads,
            measured_copies: None,
            fuses_elementwise: false,
        };
        let space = Arc::new(Space { used: AtomicU64::new(0), capacity, name: "the emulated accelerator".into() });
        EmulatedDevice { profile, space }
    }

    /// Put a host value into this memory space (counted against its capacity).
    fn store(&self, v: Value, what: &str) -> Result<Value> {
        let meta = v.meta();
        if matches!(v, Value::Opaque(_) | Value::Device(_)) {
            return Err(BachError::invalid(what, "only arrays can live on the emulated accelerator"));
        }
        let n = meta.bytes() as u64;
        self.space.reserve(n, what)?;
        let data = standard(v);
        let buffer = Arc::new(EmulatedBuffer { data, bytes: n, space: self.space.clone() });
        Ok(Value::Device(DeviceValue { device: self.profile.id, meta, offset: 0, buffer }))
    }

    /// A host view of (part of) a value in this memory space.
    fn host_view<'a>(&self, d: &'a DeviceValue, op: &str) -> Result<ValueRef<'a>> {
        if d.device != self.profile.id {
            return Err(BachError::invalid(op, format!("a value of device {} was handed to the emulated accelerator", d.device.0)));
        }
        buffer_view(d, op)
    }
}

/// A host view of (part of) a value in an emulated memory space (this one's or a peer's).
fn buffer_view<'a>(d: &'a DeviceValue, op: &str) -> Result<ValueRef<'a>> {
    let buf = d.buffer::<EmulatedBuffer>().ok_or_else(|| BachError::invalid(op, "not a buffer of the emulated accelerator"))?;
    fn view<'a, A: Element>(a: &'a ndarray::ArcArray<A, IxDyn>, d: &DeviceValue) -> ArrayViewD<'a, A> {
        let flat = a.as_slice().expect("buffers are stored in standard layout");
        ArrayViewD::from_shape(IxDyn(&d.meta.shape), &flat[d.offset..d.offset + d.meta.len()]).expect("a device value fits its buffer")
    }
    Ok(match &buf.data {
        Value::F64(a) => ValueRef::F64(view(a, d)),
        Value::F32(a) => ValueRef::F32(view(a, d)),
        Value::I64(a) => ValueRef::I64(view(a, d)),
        Value::Bool(a) => ValueRef::Bool(view(a, d)),
        _ => unreachable!("only arrays are stored"),
    })
}

/// The value in standard (row-major, contiguous) layout, copying only when it is not.
fn standard(v: Value) -> Value {
    fn std_of<A: Element>(a: ndarray::ArcArray<A, IxDyn>) -> Value {
        if a.is_standard_layout() {
            A::wrap(a)
        } else {
            A::wrap(a.as_standard_layout().into_owned().into_shared())
        }
    }
    match v {
        Value::F64(a) => std_of(a),
        Value::F32(a) => std_of(a),
        Value::I64(a) => std_of(a),
        Value::Bool(a) => std_of(a),
        other => other,
    }
}

/// A real copy of a host view (the bytes move, as they would over a bus).
fn copy_of(v: &ValueRef<'_>) -> Value {
    match v {
        ValueRef::F64(a) => Value::from(a.as_standard_layout().into_owned()),
        ValueRef::F32(a) => Value::from(a.as_standard_layout().into_owned()),
        ValueRef::I64(a) => Value::from(a.as_standard_layout().into_owned()),
        ValueRef::Bool(a) => Value::from(a.as_standard_layout().into_owned()),
        other => other.to_value(),
    }
}

impl Device for EmulatedDevice {
    fn profile(&self) -> &DeviceProfile {
        &self.profile
    }
    fn run(&self, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Value> {
        let views = args
            .iter()
            .map(|a| match a {
                ValueRef::Device(d) => self.host_view(d, op.name()),
                _ => Err(BachError::invalid(op.name(), "an argument on the host was handed to the emulated accelerator")),
            })
            .collect::<Result<Vec<_>>>()?;
        let out = run_cpu_kernel(op, ctx, &views, "the emulated accelerator")?;
        self.store(out, op.name())
    }
    fn copy_in(&self, value: ValueRef<'_>, _tag: Tag) -> Result<Value> {
        if let ValueRef::Device(_) = value {
            return Err(BachError::invalid("copy in", "the value is already on an accelerator"));
        }
        self.store(copy_of(&value), "copy in")
    }
    fn copy_out(&self, value: ValueRef<'_>, _tag: Tag) -> Result<PendingCopy> {
        let ValueRef::Device(d) = &value else {
            return Err(BachError::invalid("copy out", "the value is not on the emulated accelerator"));
        };
        Ok(PendingCopy::ready(copy_of(&self.host_view(d, "copy out")?)))
    }
    /// From another emulated accelerator's memory straight into this one's: one copy.
    fn copy_from_peer(&self, value: ValueRef<'_>, _tag: Tag) -> Option<Result<Value>> {
        let ValueRef::Device(d) = &value else { return None };
        d.buffer::<EmulatedBuffer>()?;
        Some(buffer_view(d, "peer copy").and_then(|view| self.store(copy_of(&view), "peer copy")))
    }
    /// Straight into the result's rows: one copy, as a DMA into them would be (the default
    /// copies out, then writes the rows).
    fn copy_out_into(&self, value: ValueRef<'_>, dest: HostRows, _tag: Tag) -> Result<PendingWrite> {
        let ValueRef::Device(d) = &value else {
            return Err(BachError::invalid("copy out", "the value is not on the emulated accelerator"));
        };
        dest.write(self.host_view(d, "copy out")?)?;
        Ok(PendingWrite::done())
    }
    fn concat_rows(&self, pieces: &[Value]) -> Result<Value> {
        if let [one] = pieces {
            return Ok(one.clone());
        }
        let host = pieces
            .iter()
            .map(|p| match p {
                Value::Device(d) => Ok(self.host_view(d, "merge")?.to_value()),
                _ => Err(BachError::invalid("merge", "a host piece among device pieces")),
            })
            .collect::<Result<Vec<_>>>()?;
        self.store(concat_rows(&host)?, "merge")
    }
    fn memory(&self) -> Option<MemoryUse> {
        Some(MemoryUse { used: self.space.used.load(Ordering::Acquire), capacity: self.space.capacity })
    }
}
