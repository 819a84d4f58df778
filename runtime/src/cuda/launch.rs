//! Kernels on the compute stream: launches by an annotation's [`Launch`] convention
//! (elementwise, fills, reductions, rows, cross products), elementwise chains kept as
//! expressions and fused into one generated kernel when their value is needed, and ops run
//! on the host when the GPU has no library for them.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use super::buffers::{is_constant, suffix, CudaConstant, Input, KArg};
use super::device::CudaDevice;
use super::fuse::{self, Expr};
use super::memory::{Block, Lane};
use super::shapes::{blocks_for, broadcast_shape, cross_block_rows, cross_plan, index_map, piece_shape, reduce_geometry, BLOCK, REDUCE_BLOCK};
use super::At;
use crate::annotation::{AcceleratorKernel, Annotation, OpCtx};
use crate::device::{Device, Tag};
use crate::error::{BachError, Result};
use crate::trace::EventKind;
use crate::value::{DType, DeviceValue, Meta, Value, ValueRef};

/// Scratch memory for the products of one block of a [`Launch::Cross`] op: 2048 rows of
/// 16384 f64 products (DBSCAN's neighbourhoods at 2^14 points in 8 blocks).
pub(super) const CROSS_SCRATCH: usize = 256 << 20;

impl CudaDevice {
    /// Launch `fname` of `kernel` on the compute stream after its inputs are ready.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch(
        &self,
        at: At<'_>,
        source: &str,
        fname: &str,
        grid: u32,
        block: u32,
        kargs: &[KArg],
        inputs: &[Input<'_>],
        out: Block,
        out_meta: Meta,
        span: (Tag, EventKind),
    ) -> Result<Value> {
        let f = self.gpu.function(source, fname).map_err(|e| at.fail(format!("kernel `{fname}`: {e}")))?;
        for i in inputs {
            self.wait_for(Lane::Compute, i.buf, at)?;
        }
        out.touch(Lane::Compute);
        let start = self.gpu.begin(Lane::Compute).map_err(|e| at.cuda("cuEventRecord", e))?;
        self.queue_kernel(at, &f, fname, grid, block, kargs)?;
        let end = self.gpu.end(Lane::Compute, self.owner, Some(span), start).map_err(|e| at.cuda("cuEventRecord", e))?;
        Ok(self.value(out, out_meta, end, Lane::Compute))
    }

    /// Queue `f` (`fname`) on the compute stream, `grid` blocks of `block` threads (none when
    /// `grid` is 0); the caller has made it wait for its inputs and touched its blocks.
    pub(super) fn queue_kernel(&self, at: At<'_>, f: &CudaFunction, fname: &str, grid: u32, block: u32, kargs: &[KArg]) -> Result<()> {
        if grid == 0 {
            return Ok(());
        }
        let stream = self.gpu.stream(Lane::Compute);
        let mut b = stream.launch_builder(f);
        for k in kargs {
            match k {
                KArg::U64(v) => b.arg(v),
                KArg::F64(v) => b.arg(v),
                KArg::F32(v) => b.arg(v),
            };
        }
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the parameters follow the op's `Launch` convention; every pointer is a live
        // block of the sizes the convention implies, kept alive (and not reused) until the work
        // queued on it has finished.
        unsafe { b.launch(cfg) }.map_err(|e| at.cuda(&format!("launching `{fname}`"), e))?;
        Ok(())
    }

    pub(super) fn elementwise(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, inputs: &[Input<'_>], params: &[f64], span: (Tag, EventKind)) -> Result<Value> {
        let first = inputs.first().ok_or_else(|| at.invalid("an elementwise kernel needs an argument"))?;
        let shapes: Vec<&[usize]> = inputs.iter().map(|i| i.meta.shape.as_slice()).collect();
        let out_shape = broadcast_shape(&shapes).map_err(|e| at.invalid(e))?;
        if out_shape.len() != ctx.meta.ndim() || out_shape.get(1..) != ctx.meta.shape.get(1..) {
            return Err(at.invalid(format!("pieces of shapes {shapes:?} do not make a piece of the result {}", ctx.meta)));
        }
        let n: usize = out_shape.iter().product();
        let out_meta = Meta::new(ctx.meta.dtype, out_shape);
        let mut kargs = Vec::with_capacity(2 + 3 * inputs.len() + params.len());
        let mut maps = Vec::with_capacity(inputs.len());
        for i in inputs {
            maps.push(index_map(&i.meta.shape, &out_meta.shape).map_err(|e| at.invalid(e))?);
        }
        let fname = format!("{}_{}", kernel.entry, suffix(first.meta.dtype, at)?);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        kargs.extend([KArg::U64(n as u64), KArg::U64(out.ptr)]);
        for (i, (div, modulo)) in inputs.iter().zip(maps) {
            kargs.extend([KArg::U64(i.ptr), KArg::U64(div), KArg::U64(modulo)]);
        }
        kargs.extend(params.iter().map(|&p| KArg::F64(p)));
        let grid = if n == 0 { 0 } else { blocks_for(n as u64, self.gpu.sms) };
        self.launch(at, &kernel.source, &fname, grid, BLOCK, &kargs, inputs, out, out_meta, span)
    }

    pub(super) fn fill(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, params: &[f64], span: (Tag, EventKind)) -> Result<Value> {
        let shape = piece_shape(&ctx.meta.shape, &ctx.rows);
        let row_len: usize = ctx.meta.shape.iter().skip(1).product();
        let first = if ctx.meta.ndim() == 0 { 0 } else { ctx.rows.start * row_len };
        let n: usize = shape.iter().product();
        let out_meta = Meta::new(ctx.meta.dtype, shape);
        let fname = format!("{}_{}", kernel.entry, suffix(ctx.meta.dtype, at)?);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        let mut kargs = vec![KArg::U64(n as u64), KArg::U64(out.ptr), KArg::U64(first as u64)];
        kargs.extend(params.iter().map(|&p| KArg::F64(p)));
        let grid = if n == 0 { 0 } else { blocks_for(n as u64, self.gpu.sms) };
        self.launch(at, &kernel.source, &fname, grid, BLOCK, &kargs, &[], out, out_meta, span)
    }

    pub(super) fn reduce(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, inputs: &[Input<'_>], axis: Option<usize>, span: (Tag, EventKind)) -> Result<Value> {
        let [x] = inputs else { return Err(at.invalid("a reduction takes one argument")) };
        let g = reduce_geometry(&x.meta.shape, axis).map_err(|e| at.invalid(e))?;
        let grid =
            u32::try_from(g.outputs).ok().filter(|&b| b < i32::MAX as u32).ok_or_else(|| at.invalid(format!("{} output values are more blocks than a launch has", g.outputs)))?;
        let out_meta = Meta::new(ctx.meta.dtype, g.out_shape);
        let fname = format!("{}_{}", kernel.entry, suffix(x.meta.dtype, at)?);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        if let Some(inner) = g.inner {
            // A middle axis: one thread per output value.
            let kargs = [KArg::U64(g.rows), KArg::U64(g.cols), KArg::U64(inner), KArg::U64(x.ptr), KArg::U64(out.ptr)];
            let grid = if g.outputs == 0 { 0 } else { blocks_for(g.outputs, self.gpu.sms) };
            return self.launch(at, &kernel.source, &fname, grid, BLOCK, &kargs, inputs, out, out_meta, span);
        }
        let kargs = [KArg::U64(g.rows), KArg::U64(g.cols), KArg::U64(x.ptr), KArg::U64(out.ptr)];
        self.launch(at, &kernel.source, &fname, grid, REDUCE_BLOCK, &kargs, inputs, out, out_meta, span)
    }

    /// A [`Launch::Rows`] kernel: one thread per row of the first argument's piece.
    pub(super) fn rows(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, inputs: &[Input<'_>], params: &[f64], span: (Tag, EventKind)) -> Result<Value> {
        let first = inputs.first().ok_or_else(|| at.invalid("a row kernel needs an argument"))?;
        let rows = first.meta.shape.first().copied().unwrap_or(1);
        let cols: usize = first.meta.shape.iter().skip(1).product();
        let mut out_shape = ctx.meta.shape.clone();
        match out_shape.first_mut() {
            Some(r) => *r = rows,
            None => return Err(at.invalid("a row kernel's result needs rows")),
        }
        let out_meta = Meta::new(ctx.meta.dtype, out_shape);
        let fname = format!("{}_{}", kernel.entry, suffix(first.meta.dtype, at)?);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        let mut kargs = vec![KArg::U64(rows as u64), KArg::U64(cols as u64)];
        kargs.extend(inputs.iter().map(|i| KArg::U64(i.ptr)));
        kargs.push(KArg::U64(out.ptr));
        kargs.extend(params.iter().map(|&p| KArg::F64(p)));
        let grid = if rows == 0 { 0 } else { blocks_for(rows as u64, self.gpu.sms) };
        self.launch(at, &kernel.source, &fname, grid, BLOCK, &kargs, inputs, out, out_meta, span)
    }

    /// A [`Launch::Cross`] op: `C = A_0 · A_1^T` by cuBLAS a block of rows at a time into one
    /// scratch block ([`CROSS_SCRATCH`]), each block followed by the op's kernel over it.
    pub(super) fn cross(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, inputs: &[Input<'_>], params: &[f64], span: (Tag, EventKind)) -> Result<Value> {
        let [a, b, ..] = inputs else { return Err(at.invalid("a cross product takes two arguments (then any its kernel reads)")) };
        let dtype = a.meta.dtype;
        if b.meta.dtype != dtype || !matches!(dtype, DType::F64 | DType::F32) {
            return Err(BachError::dtype(at.op, "two f64 or two f32 arrays", format!("{} and {}", dtype, b.meta.dtype)));
        }
        let (&[rows, k], &[cols, kb]) = (a.meta.shape.as_slice(), b.meta.shape.as_slice()) else {
            return Err(at.invalid(format!("a cross product of shapes {:?} and {:?}: both must be matrices", a.meta.shape, b.meta.shape)));
        };
        if k != kb {
            return Err(at.invalid(format!("a cross product of {rows} x {k} and {cols} x {kb}: the rows differ in length")));
        }
        let mut out_shape = ctx.meta.shape.clone();
        match out_shape.first_mut() {
            Some(r) => *r = rows,
            None => return Err(at.invalid("a cross product's result needs rows")),
        }
        let out_meta = Meta::new(ctx.meta.dtype, out_shape);
        let fname = format!("{}_{}", kernel.entry, suffix(dtype, at)?);
        let f = self.gpu.function(&kernel.source, &fname).map_err(|e| at.fail(format!("kernel `{fname}`: {e}")))?;
        let elem = dtype.size_of();
        let block_rows = cross_block_rows(rows, cols, elem, CROSS_SCRATCH);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        let scratch = self.gpu.pool.alloc(if rows * cols == 0 { 0 } else { block_rows * cols * elem }, at)?;
        for i in inputs {
            self.wait_for(Lane::Compute, i.buf, at)?;
        }
        out.touch(Lane::Compute);
        scratch.touch(Lane::Compute);
        let start = self.gpu.begin(Lane::Compute).map_err(|e| at.cuda("cuEventRecord", e))?;
        if cols > 0 {
            for first in (0..rows).step_by(block_rows) {
                let r = block_rows.min(rows - first);
                let (plan, _) = cross_plan(r, cols, k);
                self.blas_into(at, [a.ptr + (first * k * elem) as u64, b.ptr], dtype, &plan, scratch.ptr, r * cols * elem)?;
                let mut kargs = vec![KArg::U64(r as u64), KArg::U64(cols as u64), KArg::U64(first as u64), KArg::U64(scratch.ptr)];
                kargs.extend(inputs.iter().map(|i| KArg::U64(i.ptr)));
                kargs.push(KArg::U64(out.ptr));
                kargs.extend(params.iter().map(|&p| KArg::F64(p)));
                self.queue_kernel(at, &f, &fname, blocks_for((r * cols) as u64, self.gpu.sms), BLOCK, &kargs)?;
            }
        }
        let end = self.gpu.end(Lane::Compute, self.owner, Some(span), start).map_err(|e| at.cuda("cuEventRecord", e))?;
        Ok(self.value(out, out_meta, end, Lane::Compute))
    }

    /// An op the device has no library for (here: no cuSOLVER): its arguments copied to the
    /// host, its CPU kernel, the result copied back; said once per process, on stderr.
    pub(super) fn on_host(&self, at: At<'_>, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>], why: &str) -> Result<Value> {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| eprintln!("bach: {why}; `{}` runs on the host", at.op));
        let tag = Tag { node: ctx.node, piece: ctx.piece as u32 };
        let host = args
            .iter()
            .map(|a| match a {
                ValueRef::Device(_) => self.copy_out(a.clone(), tag)?.finish(),
                other => Ok(other.to_value()),
            })
            .collect::<Result<Vec<_>>>()?;
        let views: Vec<ValueRef<'_>> = host.iter().map(Value::view).collect();
        let result = op.run_cpu(ctx, &views)?;
        self.copy_in(result.view(), tag)
    }

    /// An elementwise op with an expression, not run but kept as an [`Expr`] over its
    /// arguments (fused into one kernel when its value is needed); `None` when it cannot be
    /// (arguments on the host, mixed dtypes), and it is launched alone.
    pub(super) fn defer(&self, at: At<'_>, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Option<Value>> {
        let mut devs = Vec::with_capacity(args.len());
        for a in args {
            match a {
                ValueRef::Device(d) if d.device == self.profile.id => devs.push(d.clone()),
                _ => return Ok(None),
            }
        }
        let dtypes: Vec<DType> = devs.iter().map(|d| d.meta.dtype).collect();
        // The planner sizes pieces by the same test (`plan::pieces`).
        let Some((fusable, expr)) = op.fused_expr(&dtypes) else { return Ok(None) };
        let shapes: Vec<&[usize]> = devs.iter().map(|d| d.meta.shape.as_slice()).collect();
        let out_shape = broadcast_shape(&shapes).map_err(|e| at.invalid(e))?;
        if out_shape.len() != ctx.meta.ndim() || out_shape.get(1..) != ctx.meta.shape.get(1..) || expr.out != ctx.meta.dtype {
            return Err(at.invalid(format!("pieces of shapes {shapes:?} do not make a piece of the result {}", ctx.meta)));
        }
        // Arguments of another shape (broadcast), or a DAG grown too big, are computed first.
        let mut ops = 1;
        for d in devs.iter_mut() {
            if let Some(e) = d.buffer::<Expr>() {
                if d.meta.shape != out_shape || d.offset != 0 || e.ops + ops > fuse::MAX_OPS {
                    *d = self.realize(d, at)?;
                } else {
                    ops += e.ops;
                }
            }
        }
        let meta = Meta::new(expr.out, out_shape);
        let e = Expr {
            op: op.name().to_string(),
            vars: fusable.vars.clone(),
            expr: expr.clone(),
            args: devs,
            meta: meta.clone(),
            tag: Tag { node: ctx.node, piece: ctx.piece as u32 },
            ops,
            realized: Mutex::new(None),
        };
        Ok(Some(Value::Device(DeviceValue { device: self.profile.id, meta, offset: 0, buffer: Arc::new(e) })))
    }

    /// `v` with every expression in it computed (a host value as it is).
    pub(super) fn realized<'v>(&self, v: &ValueRef<'v>, at: At<'_>) -> Result<ValueRef<'v>> {
        match v {
            ValueRef::Device(d) => Ok(ValueRef::Device(self.realize(d, at)?)),
            other => Ok(other.clone()),
        }
    }

    /// A device value in memory: an [`Expr`] is computed by one generated kernel (once).
    pub(super) fn realize(&self, d: &DeviceValue, at: At<'_>) -> Result<DeviceValue> {
        let Some(e) = d.buffer::<Expr>() else { return Ok(d.clone()) };
        let mut realized = e.realized.lock().unwrap_or_else(|p| p.into_inner());
        let whole = match realized.as_ref() {
            Some(r) => r.clone(),
            None => {
                let g = fuse::generate(e, &is_constant);
                // Constants go by value; the other leaves are read from memory.
                let in_memory: Vec<ValueRef<'_>> = g.leaves.iter().filter(|l| !is_constant(l)).map(|l| ValueRef::Device(l.clone())).collect();
                let inputs = in_memory.iter().map(|a| self.input(a, at)).collect::<Result<Vec<_>>>()?;
                let n = e.meta.len();
                let mut kargs = Vec::with_capacity(2 + 3 * g.leaves.len());
                let out = self.gpu.pool.alloc(e.meta.bytes(), at)?;
                kargs.extend([KArg::U64(n as u64), KArg::U64(out.ptr)]);
                let mut read = inputs.iter();
                for l in &g.leaves {
                    if let Some(c) = l.buffer::<CudaConstant>() {
                        kargs.push(c.karg());
                        continue;
                    }
                    let i = read.next().expect("one input per leaf in memory");
                    let (div, modulo) = index_map(&i.meta.shape, &e.meta.shape).map_err(|err| at.invalid(err))?;
                    kargs.extend([KArg::U64(i.ptr), KArg::U64(div), KArg::U64(modulo)]);
                }
                let grid = if n == 0 { 0 } else { blocks_for(n as u64, self.gpu.sms) };
                let fused = At { op: &g.ops.join("+"), device: at.device };
                let v = self.launch(fused, &g.source, fuse::ENTRY, grid, BLOCK, &kargs, &inputs, out, e.meta.clone(), (e.tag, EventKind::Compute))?;
                let Value::Device(v) = v else { unreachable!("a launch makes a device value") };
                *realized = Some(v.clone());
                v
            }
        };
        if d.offset == 0 && d.meta == e.meta {
            return Ok(whole);
        }
        Ok(DeviceValue { device: whole.device, meta: d.meta.clone(), offset: whole.offset + d.offset, buffer: whole.buffer })
    }
}
