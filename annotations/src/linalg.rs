//! Products, transposition and row selection.

use std::ops::Range;
use std::sync::{Arc, LazyLock};

use bach_runtime::split::{self, Partials};
use bach_runtime::{oa, Annotation, BachError, Element, Family, Launch, Meta, Result, Value, ValueRef};
use ndarray::{ArrayViewD, Axis, Ix1, Ix2};

use crate::array::Array;
use crate::real::Real;

pub(crate) fn as1<'a, A>(v: ArrayViewD<'a, A>, op: &str) -> Result<ndarray::ArrayView1<'a, A>> {
    v.into_dimensionality::<Ix1>().map_err(|e| BachError::shape(op, e.to_string()))
}
pub(crate) fn as2<'a, A>(v: ArrayViewD<'a, A>, op: &str) -> Result<ndarray::ArrayView2<'a, A>> {
    v.into_dimensionality::<Ix2>().map_err(|e| BachError::shape(op, e.to_string()))
}

/// Sum of partial products from pieces (pairwise over pieces).
fn sum_partials(parts: Vec<Value>) -> Result<Value> {
    fn typed<A: Real>(parts: &[Value]) -> Result<Value> {
        fn tree<A: Real>(p: &[ArrayViewD<'_, A>]) -> ndarray::ArrayD<A> {
            if p.len() == 1 {
                return p[0].to_owned();
            }
            let (l, r) = p.split_at(p.len() / 2);
            tree(l) + tree(r)
        }
        let views: Vec<ArrayViewD<'_, A>> = parts.iter().map(|p| p.view().array::<A>("dot")).collect::<Result<_>>()?;
        Ok(Value::from(tree(&views)))
    }
    match &parts[0] {
        Value::F64(_) => typed::<f64>(&parts),
        Value::F32(_) => typed::<f32>(&parts),
        v => Err(BachError::dtype("dot", "f64 or f32", v.meta().dtype)),
    }
}

// The four products, by argument dimensions, and how each splits:
// vector·vector and vector·matrix split the shared axis and sum partial products;
// matrix·matrix and matrix·vector split the left rows and hand the right side whole.
// On an accelerator all four are the device's BLAS (`Launch::Gemm`).
static DOT: LazyLock<Arc<Annotation>> = LazyLock::new(|| build_product("dot", true));
static VECMAT: LazyLock<Arc<Annotation>> = LazyLock::new(|| build_product("vecmat", true));
static MATMUL: LazyLock<Arc<Annotation>> = LazyLock::new(|| build_product("matmul", false));
static MATVEC: LazyLock<Arc<Annotation>> = LazyLock::new(|| build_product("matvec", false));

/// The four product annotations (for the kernel catalogue).
pub(crate) fn products() -> Vec<Arc<Annotation>> {
    [&DOT, &VECMAT, &MATMUL, &MATVEC].into_iter().map(|op| Arc::clone(op)).collect()
}

fn build_product(name: &'static str, partial: bool) -> Arc<Annotation> {
    let b = oa(name).accelerator_launch("gemm", "", Launch::Gemm).shape(move |m: &[Meta]| product_meta(&m[0], &m[1])).cpu(move |_, args| {
        fn typed<A: Real>(name: &str, a: ArrayViewD<'_, A>, b: ArrayViewD<'_, A>) -> Result<Value> {
            Ok(match (a.ndim(), b.ndim()) {
                (1, 1) => Value::from(ndarray::arr0(as1(a, name)?.dot(&as1(b, name)?)).into_dyn()),
                (1, 2) => Value::from(as1(a, name)?.dot(&as2(b, name)?).into_dyn()),
                (2, 1) => Value::from(as2(a, name)?.dot(&as1(b, name)?).into_dyn()),
                _ => Value::from(as2(a, name)?.dot(&as2(b, name)?).into_dyn()),
            })
        }
        match (&args[0], &args[1]) {
            (ValueRef::F64(a), ValueRef::F64(b)) => typed(name, a.view(), b.view()),
            (ValueRef::F32(a), ValueRef::F32(b)) => typed(name, a.view(), b.view()),
            (a, b) => Err(BachError::dtype(name, a.dtype(), b.dtype())),
        }
    });
    if partial {
        b.args([split::rows(), split::rows()]).result(Arc::new(Partials::new("sum", sum_partials))).build()
    } else {
        b.args([split::rows(), split::broadcast()]).build()
    }
}

fn product(a: &Meta, b: &Meta) -> Result<(Arc<Annotation>, Meta)> {
    let meta = product_meta(a, b)?;
    let op = match (a.ndim(), b.ndim()) {
        (1, 1) => &DOT,
        (1, 2) => &VECMAT,
        (2, 1) => &MATVEC,
        _ => &MATMUL,
    };
    Ok((Arc::clone(op), meta))
}

fn product_meta(a: &Meta, b: &Meta) -> Result<Meta> {
    if a.dtype != b.dtype {
        return Err(BachError::dtype("dot", a.dtype, b.dtype));
    }
    let shape = match (a.shape.as_slice(), b.shape.as_slice()) {
        ([k], [l]) if k == l => vec![],
        ([k], [l, m]) if k == l => vec![*m],
        ([n, k], [l]) if k == l => vec![*n],
        ([n, k], [l, m]) if k == l => vec![*n, *m],
        (x, y) => return Err(BachError::shape("dot", format!("cannot multiply shapes {x:?} and {y:?}"))),
    };
    Ok(Meta::new(a.dtype, shape))
}

impl<A: Real> Array<A> {
    /// Matrix/vector product, as ndarray's `dot`: an error at this line when the inner
    /// dimensions differ.
    pub fn dot(&self, rhs: &Array<A>) -> Result<Array<A>> {
        let (op, _) = product(self.meta(), rhs.meta())?;
        self.call(&op, &[rhs.lazy()])
    }
}

impl<A: Element> Array<A> {
    /// The transpose (a copy in standard layout when evaluated).
    pub fn t(&self) -> Array<A> {
        static T: LazyLock<Arc<Annotation>> = LazyLock::new(|| {
            oa("transpose")
                .family(Family::Layout)
                .unsplittable()
                .shape(|m: &[Meta]| Ok(Meta::new(m[0].dtype, m[0].shape.iter().rev().copied().collect::<Vec<_>>())))
                .cpu(|_, args| {
                    Ok(match &args[0] {
                        ValueRef::F64(a) => Value::from(a.t().as_standard_layout().into_owned()),
                        ValueRef::F32(a) => Value::from(a.t().as_standard_layout().into_owned()),
                        ValueRef::I64(a) => Value::from(a.t().as_standard_layout().into_owned()),
                        ValueRef::Bool(a) => Value::from(a.t().as_standard_layout().into_owned()),
                        ValueRef::Opaque(_) | ValueRef::Device(_) => return Err(BachError::dtype("transpose", "host array", "opaque or device value")),
                    })
                })
                .build()
        });
        self.call(&T, &[]).expect("every array has a transpose")
    }

    /// Rows `range` (ndarray's `slice(s![a..b, ..])`); an error at this line if out of bounds.
    pub fn slice_rows(&self, range: Range<usize>) -> Result<Array<A>> {
        let rows = self.shape().first().copied().unwrap_or(0);
        if self.ndim() == 0 || range.start > range.end || range.end > rows {
            return Err(BachError::invalid("slice_rows", format!("rows {range:?} of shape {:?}", self.shape())));
        }
        self.call(&slice_rows_op(range), &[])
    }

    /// A new axis of length 1 at `axis` (ndarray's `insert_axis`).
    pub fn insert_axis(&self, axis: Axis) -> Result<Array<A>> {
        let at = axis.index();
        if at > self.ndim() {
            return Err(BachError::invalid("insert_axis", format!("axis {at} of a {}-d array", self.ndim())));
        }
        self.call(&insert_axis_op(at, self.ndim()), &[])
    }
}

// The ops of the generic methods above are built by these non-generic functions, so their
// kernels are compiled here, optimised, and not in each notebook cell calling the method.

fn slice_rows_op(range: Range<usize>) -> Arc<Annotation> {
    let r = range.clone();
    oa("slice_rows")
        .family(Family::Layout)
        .unsplittable()
        .shape(move |m: &[Meta]| {
            let mut shape = m[0].shape.clone();
            shape[0] = r.len();
            Ok(Meta::new(m[0].dtype, shape))
        })
        .cpu(move |_, args| Ok(args[0].clone().slice_rows(range.clone())?.to_value()))
        .build()
}

fn insert_axis_op(at: usize, ndim: usize) -> Arc<Annotation> {
    let b = oa("insert_axis")
        .family(Family::Layout)
        .shape(move |m: &[Meta]| {
            let mut shape = m[0].shape.clone();
            shape.insert(at, 1);
            Ok(Meta::new(m[0].dtype, shape))
        })
        .cpu(move |_, args| {
            Ok(match &args[0] {
                ValueRef::F64(a) => Value::from(a.clone().insert_axis(Axis(at)).to_owned()),
                ValueRef::F32(a) => Value::from(a.clone().insert_axis(Axis(at)).to_owned()),
                ValueRef::I64(a) => Value::from(a.clone().insert_axis(Axis(at)).to_owned()),
                ValueRef::Bool(a) => Value::from(a.clone().insert_axis(Axis(at)).to_owned()),
                ValueRef::Opaque(_) | ValueRef::Device(_) => return Err(BachError::dtype("insert_axis", "host array", "opaque or device value")),
            })
        });
    // Rows stay rows unless the new axis comes first.
    if at == 0 || ndim == 0 {
        b.unsplittable().build()
    } else {
        b.build()
    }
}
