//! Products, transposition, slicing and row selection; and ndarray's `linalg` module as
//! `bach::linalg` (`Dot`, `general_mat_mul`, `general_mat_vec_mul`, `kron`), taking Bach's
//! arrays and views and ndarray's alike.

use std::ops::Range;
use std::sync::{Arc, LazyLock};

use bach_runtime::split::{self, Partials};
use bach_runtime::{oa, Annotation, BachError, Element, Family, Launch, Meta, Result, Value, ValueRef};
use ndarray::{ArrayViewD, Axis, Dimension, Ix0, Ix1, Ix2, IxDyn};

use crate::array::or_panic;
use crate::array::{Array, ArrayBase, Data, OwnedRepr};
use crate::real::Real;

/// An array of the family or of ndarray, read as an ndarray view (evaluates a Bach array).
pub trait AsNd<A, D: Dimension> {
    fn nd_view(&self) -> ndarray::ArrayView<'_, A, D>;
}
impl<A, S: Data<Elem = A>, D: Dimension> AsNd<A, D> for ArrayBase<S, D> {
    #[track_caller]
    fn nd_view(&self) -> ndarray::ArrayView<'_, A, D> {
        self.as_nd()
    }
}
impl<A, S: ndarray::Data<Elem = A>, D: Dimension> AsNd<A, D> for ndarray::ArrayBase<S, D> {
    fn nd_view(&self) -> ndarray::ArrayView<'_, A, D> {
        self.view()
    }
}
/// An array of the family or of ndarray, written through an ndarray view (a Bach array's
/// value is made its own first, by copy on write).
pub trait AsNdMut<A, D: Dimension> {
    fn nd_view_mut(&mut self) -> ndarray::ArrayViewMut<'_, A, D>;
}
impl<A: Clone, S: crate::array::DataMut<Elem = A>, D: Dimension> AsNdMut<A, D> for ArrayBase<S, D> {
    #[track_caller]
    fn nd_view_mut(&mut self) -> ndarray::ArrayViewMut<'_, A, D> {
        self.evaluated_view_mut()
    }
}
impl<A, S: ndarray::DataMut<Elem = A>, D: Dimension> AsNdMut<A, D> for ndarray::ArrayBase<S, D> {
    fn nd_view_mut(&mut self) -> ndarray::ArrayViewMut<'_, A, D> {
        self.view_mut()
    }
}

/// ndarray's `general_mat_mul`: `c = alpha * a.dot(b) + beta * c`, on the host.
#[track_caller]
pub fn general_mat_mul<A: ndarray::LinalgScalar>(alpha: A, a: &impl AsNd<A, Ix2>, b: &impl AsNd<A, Ix2>, beta: A, c: &mut impl AsNdMut<A, Ix2>) {
    ndarray::linalg::general_mat_mul(alpha, &a.nd_view(), &b.nd_view(), beta, &mut c.nd_view_mut())
}
/// The Kronecker product of two matrices (ndarray's `kron`), on the host: a Bach array.
#[track_caller]
pub fn kron<A: ndarray::LinalgScalar>(a: &impl AsNd<A, Ix2>, b: &impl AsNd<A, Ix2>) -> Array<A, Ix2> {
    Array::from_array(ndarray::linalg::kron(&a.nd_view(), &b.nd_view()))
}
/// ndarray's `general_mat_vec_mul`: `y = alpha * a.dot(x) + beta * y`, on the host.
#[track_caller]
pub fn general_mat_vec_mul<A: ndarray::LinalgScalar>(alpha: A, a: &impl AsNd<A, Ix2>, x: &impl AsNd<A, Ix1>, beta: A, y: &mut impl AsNdMut<A, Ix1>) {
    ndarray::linalg::general_mat_vec_mul(alpha, &a.nd_view(), &x.nd_view(), beta, &mut y.nd_view_mut())
}

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

/// ndarray's `dot` by the arguments' dimension types: vector·vector is a number (evaluated,
/// as in ndarray; [`Array::dot_lazy`] keeps it lazy), matrix·vector and vector·matrix a
/// vector, matrix·matrix a matrix; dynamic arrays give dynamic arrays (a 0-d one for two
/// vectors).
pub trait Dot<Rhs> {
    /// What `dot` returns.
    type Output;
    /// The lazy product (a 0-d array for two vectors).
    type Lazy;
    fn dot(&self, rhs: &Rhs) -> Self::Output;
    fn try_dot(&self, rhs: &Rhs) -> Result<Self::Lazy>;
}
/// The product of `l` and `r` in Bach's float type `F` (lazy, placed), when `A` is `F`.
fn float_product<F: Real, A: ndarray::LinalgScalar, S: Data<Elem = A>, S2: Data<Elem = A>, L: Dimension, R: Dimension, O: Dimension>(
    l: &ArrayBase<S, L>,
    r: &ArrayBase<S2, R>,
) -> Option<Result<Array<A, O>>> {
    if crate::array::type_id::<A>() != crate::array::type_id::<F>() {
        return None;
    }
    // Small host values: ndarray's `dot` here and now (what the op's CPU code runs: the same
    // bits), with no op machinery.
    if let (Some(_), Some(_)) = (l.small_host(), r.small_host()) {
        return Some(host_product(l, r));
    }
    let l: Array<F, L> = crate::array::same_type(l.to_owned());
    let r: Array<F, R> = crate::array::same_type(r.to_owned());
    Some(l.product::<OwnedRepr<F>, R, O>(&r).map(crate::array::same_type))
}

/// A small matrix·vector product of f64 or f32 on the host, at once, written into a spent
/// value of the result's length (`array/pool.rs`), which goes back to them when dropped: what
/// a Runge-Kutta step makes each stage (`k.t().dot(&a)`). ndarray's `general_mat_vec_mul`
/// with β = 0 writes each row's dot, as its `dot` does: the same bits. `None` for other shapes,
/// element types, large or lazy operands (the product is then `any_product`'s). Made in the
/// caller's element type, with no conversion of the result: the small path is ndarray's
/// product plus little else.
#[inline]
fn small_mat_vec<A: ndarray::LinalgScalar, S: Data<Elem = A>, S2: Data<Elem = A>>(l: &ArrayBase<S, Ix2>, r: &ArrayBase<S2, Ix1>) -> Option<Array<A, Ix1>> {
    let give_back = crate::array::pool::give_back_of::<A, Ix1>()?;
    let ((m, _), (x, _)) = (l.small_host()?, r.small_host()?);
    let (rows, k) = m.dim();
    if k != x.len() || rows == 0 || rows > crate::array::pool::MAX_LEN {
        return None;
    }
    let mut out = crate::array::pool::take_as::<A>(rows).unwrap_or_else(|| ndarray::ArcArray::zeros(rows));
    // (Through `pool::elements`: no uniqueness check on each write of a value no one shares.)
    let mut y = ndarray::ArrayViewMut1::from(crate::array::pool::elements(&mut out));
    ndarray::linalg::general_mat_vec_mul(A::one(), &m, &x, A::zero(), &mut y);
    Some(Array::from_kept_with(out, l.home(), give_back))
}

/// The product of arrays of any other element type, on the host through ndarray (`None`: the
/// dimension types ndarray's `dot` does not take, dynamic ones).
fn host_product<A: ndarray::LinalgScalar, S: Data<Elem = A>, S2: Data<Elem = A>, L: Dimension, R: Dimension, O: Dimension>(
    l: &ArrayBase<S, L>,
    r: &ArrayBase<S2, R>,
) -> Result<Array<A, O>> {
    // In the operands' own dimension types (no dynamic dimensions made for static ones: the
    // small-array path).
    let (x, y) = (l.as_nd(), r.as_nd());
    let mismatch = || BachError::shape("dot", format!("shapes {:?} and {:?} are not aligned", x.shape(), y.shape()));
    let home = l.home();
    match (x.ndim(), y.ndim()) {
        (2, 2) if x.shape()[1] == y.shape()[0] => typed_result(to2(x)?.dot(&to2(y)?), home),
        (2, 1) if x.shape()[1] == y.shape()[0] => typed_result(to2(x)?.dot(&to1(y)?), home),
        (1, 2) if x.shape()[0] == y.shape()[0] => typed_result(to1(x)?.dot(&to2(y)?), home),
        (1, 1) if x.shape()[0] == y.shape()[0] => typed_result(ndarray::arr0(to1(x)?.dot(&to1(y)?)), home),
        (1 | 2, 1 | 2) => Err(mismatch()),
        (a, b) => Err(BachError::shape("dot", format!("a {a}-d and a {b}-d array (dot takes 1-d and 2-d arrays)"))),
    }
}

/// `v` as a 2-d (1-d) view: no copy, and no dynamic dimensions made when `D` is static.
fn to2<A, D: Dimension>(v: ndarray::ArrayView<'_, A, D>) -> Result<ndarray::ArrayView2<'_, A>> {
    v.into_dimensionality::<Ix2>().map_err(|e| BachError::shape("dot", e.to_string()))
}
fn to1<A, D: Dimension>(v: ndarray::ArrayView<'_, A, D>) -> Result<ndarray::ArrayView1<'_, A>> {
    v.into_dimensionality::<Ix1>().map_err(|e| BachError::shape("dot", e.to_string()))
}
/// A product's result as an array of the caller's dimension type `O` (the same axes).
fn typed_result<A: Clone, E: Dimension, O: Dimension>(out: ndarray::Array<A, E>, home: bach_runtime::Home) -> Result<Array<A, O>> {
    let out = out.into_dimensionality::<O>().map_err(|e| BachError::shape("dot", e.to_string()))?;
    Ok(Array::from_host_in(out.into_shared(), home))
}

/// `l.dot(r)` for any element type ndarray's `dot` takes: lazy for f64 and f32.
fn any_product<A: ndarray::LinalgScalar, S: Data<Elem = A>, S2: Data<Elem = A>, L: Dimension, R: Dimension, O: Dimension>(
    l: &ArrayBase<S, L>,
    r: &ArrayBase<S2, R>,
) -> Result<Array<A, O>> {
    crate::array::f64_or_f32::<A, _>(|| float_product::<f64, _, _, _, _, _, _>(l, r), || float_product::<f32, _, _, _, _, _, _>(l, r)).unwrap_or_else(|| host_product(l, r))
}

macro_rules! dot_dims {
    ($($L:ty, $R:ty => $O:ty $(, $small:ident)?;)*) => {$(
        impl<A: ndarray::LinalgScalar, S: Data<Elem = A>, S2: Data<Elem = A>> Dot<ArrayBase<S2, $R>> for ArrayBase<S, $L> {
            type Output = Array<A, $O>;
            type Lazy = Array<A, $O>;
            #[track_caller]
            fn dot(&self, rhs: &ArrayBase<S2, $R>) -> Array<A, $O> {
                // (Only where it can apply: what a cell compiles for another product stays
                // as it was.)
                $(if let Some(p) = $small(self, rhs) {
                    return p;
                })?
                or_panic(any_product(self, rhs))
            }
            fn try_dot(&self, rhs: &ArrayBase<S2, $R>) -> Result<Array<A, $O>> {
                any_product(self, rhs)
            }
        }
    )*};
}
dot_dims! {
    Ix2, Ix2 => Ix2;
    Ix2, Ix1 => Ix1, small_mat_vec;
    Ix1, Ix2 => Ix1;
    IxDyn, IxDyn => IxDyn;
    IxDyn, Ix1 => IxDyn;
    IxDyn, Ix2 => IxDyn;
    Ix1, IxDyn => IxDyn;
    Ix2, IxDyn => IxDyn;
}
impl<A: ndarray::LinalgScalar, S: Data<Elem = A>, S2: Data<Elem = A>> Dot<ArrayBase<S2, Ix1>> for ArrayBase<S, Ix1> {
    type Output = A;
    type Lazy = Array<A, Ix0>;
    #[track_caller]
    fn dot(&self, rhs: &ArrayBase<S2, Ix1>) -> A {
        let p: Array<A, Ix0> = or_panic(any_product(self, rhs));
        if p.host_view().is_some() {
            return p.into_scalar();
        }
        bach_runtime::trace::because("`dot` of two vectors returns a number, as ndarray's (`dot_lazy` keeps it lazy)".to_string(), || p.to_scalar())
            .unwrap_or_else(|e| panic!("{e}"))
    }
    fn try_dot(&self, rhs: &ArrayBase<S2, Ix1>) -> Result<Array<A, Ix0>> {
        any_product(self, rhs)
    }
}

/// ndarray arrays and views in a product with Bach arrays, either side (`view.dot(&a)`,
/// `a.dot(&view)`), as ndarray's `dot`: the ndarray operand's values become a graph source,
/// and the product is Bach's (lazy, placed).
macro_rules! dot_ndarray {
    ($($L:ty, $R:ty;)*) => {$(
        impl<A: ndarray::LinalgScalar, S: ndarray::Data<Elem = A>, S2: Data<Elem = A>> ndarray::linalg::Dot<ArrayBase<S2, $R>> for ndarray::ArrayBase<S, $L> {
            type Output = <Array<A, $L> as Dot<Array<A, $R>>>::Output;
            #[track_caller]
            fn dot(&self, rhs: &ArrayBase<S2, $R>) -> Self::Output {
                Dot::dot(&Array::<A, $L>::from_array(self.to_owned()), rhs)
            }
        }
        impl<A: ndarray::LinalgScalar, S: ndarray::Data<Elem = A>, S1: Data<Elem = A>> Dot<ndarray::ArrayBase<S, $R>> for ArrayBase<S1, $L> {
            type Output = <Array<A, $L> as Dot<Array<A, $R>>>::Output;
            type Lazy = <Array<A, $L> as Dot<Array<A, $R>>>::Lazy;
            #[track_caller]
            fn dot(&self, rhs: &ndarray::ArrayBase<S, $R>) -> Self::Output {
                Dot::dot(self, &Array::<A, $R>::from_array(rhs.to_owned()))
            }
            fn try_dot(&self, rhs: &ndarray::ArrayBase<S, $R>) -> Result<Self::Lazy> {
                Dot::try_dot(self, &Array::<A, $R>::from_array(rhs.to_owned()))
            }
        }
    )*};
}
dot_ndarray! {
    Ix2, Ix2;
    Ix2, Ix1;
    Ix1, Ix2;
    Ix1, Ix1;
}

impl<A, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// Matrix/vector product, as ndarray's `dot` (see [`Dot`]): panics at this line when the
    /// inner dimensions differ; [`Array::try_dot`] returns it as an error.
    #[track_caller]
    pub fn dot<R>(&self, rhs: &R) -> <Self as Dot<R>>::Output
    where
        Self: Dot<R>,
    {
        Dot::dot(self, rhs)
    }
    /// The product, lazy whatever the dimensions (two vectors give a 0-d array); an error
    /// when the inner dimensions differ.
    pub fn try_dot<R>(&self, rhs: &R) -> Result<<Self as Dot<R>>::Lazy>
    where
        Self: Dot<R>,
    {
        Dot::try_dot(self, rhs)
    }
}

impl<A: Real, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    fn product<S2: Data<Elem = A>, E: Dimension, O: Dimension>(&self, rhs: &ArrayBase<S2, E>) -> Result<Array<A, O>> {
        let (op, _) = product(&self.meta(), &rhs.meta())?;
        // Small host values: the product here and now (the op's own CPU code, so the same bits).
        if let (Some(a), Some(b)) = (self.small_host().and(self.host_value()), rhs.small_host().and(rhs.host_value())) {
            if let Some(r) = crate::array::eager(&op, &[a, b], &|| self.home()) {
                return r;
            }
        }
        self.call(&op, &[&rhs.lazy()])
    }
}

impl<A: Real, S: Data<Elem = A>> ArrayBase<S, Ix1> {
    /// The dot product of two vectors as a lazy 0-d array.
    #[track_caller]
    pub fn dot_lazy<S2: Data<Elem = A>>(&self, rhs: &ArrayBase<S2, Ix1>) -> Array<A, Ix0> {
        or_panic(self.product(rhs))
    }
}

impl<A: Element, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// Rows `range` (ndarray's `slice(s![a..b, ..])`); an error at this line if out of bounds.
    pub fn slice_rows(&self, range: Range<usize>) -> Result<Array<A, D>> {
        let rows = self.shape().first().copied().unwrap_or(0);
        if self.ndim() == 0 || range.start > range.end || range.end > rows {
            return Err(BachError::invalid("slice_rows", format!("rows {range:?} of shape {:?}", self.shape())));
        }
        self.call(&slice_rows_op(range), &[])
    }

    pub fn try_insert_axis(&self, axis: Axis) -> Result<Array<A, D::Larger>> {
        let at = axis.index();
        if at > self.ndim() {
            return Err(BachError::invalid("insert_axis", format!("axis {at} of a {}-d array", self.ndim())));
        }
        self.call(&insert_axis_op(at, self.ndim()), &[])
    }
}

impl<A, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// A new axis of length 1 at `axis` (ndarray's `insert_axis`; lazy for Bach's graph
    /// element types, at once on the host for any other): panics at this line when `axis` is
    /// past the array's axes; [`Array::try_insert_axis`] returns it as an error.
    #[track_caller]
    pub fn insert_axis(&self, axis: Axis) -> Array<A, D::Larger>
    where
        A: Clone,
    {
        fn graph<B: Element, A, S: Data<Elem = A>, D: Dimension>(x: &ArrayBase<S, D>, axis: Axis) -> Option<Array<A, D::Larger>> {
            crate::array::as_real::<B, A, S, D>(x).map(|x| crate::array::same_type(or_panic(x.try_insert_axis(axis))))
        }
        if let Some(r) = graph::<f64, _, _, _>(self, axis)
            .or_else(|| graph::<f32, _, _, _>(self, axis))
            .or_else(|| graph::<i64, _, _, _>(self, axis))
            .or_else(|| graph::<bool, _, _, _>(self, axis))
        {
            return r;
        }
        if axis.index() > self.ndim() {
            panic!("{}", BachError::invalid("insert_axis", format!("axis {} of a {}-d array", axis.index(), self.ndim())));
        }
        Array::from_host_in(self.evaluated_shared().insert_axis(axis), self.home())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::layout::{describe, sliced_shape};
    use ndarray::{s, NewAxis, SliceInfoElem as E};
    use proptest::prelude::*;

    fn cube() -> ndarray::ArrayD<f64> {
        ndarray::ArrayD::from_shape_fn(IxDyn(&[4, 5, 6]), |i| (i[0] * 100 + i[1] * 10 + i[2]) as f64)
    }

    #[test]
    fn slices_cut_what_ndarray_cuts() {
        let a = cube();
        let x = Array::from_array(a.clone());
        let cases: Vec<Vec<E>> = vec![
            s![.., .., ..].as_ref().to_vec(),
            s![1..3, .., 2].as_ref().to_vec(),
            s![..;2, -2.., ..;-1].as_ref().to_vec(),
            s![-1, NewAxis, 1..1, ..].as_ref().to_vec(),
            // An end before the start: empty, as in ndarray.
            vec![E::Slice { start: 3, end: Some(1), step: 1 }, E::from(..), E::Index(5)],
            s![.., 4, -6].as_ref().to_vec(),
            s![1..;3, -4..-1;2, NewAxis, 2].as_ref().to_vec(),
        ];
        for e in cases {
            let want = a.slice(&e[..]).to_owned();
            let got = x.slice(&e[..]).eval().unwrap();
            assert_eq!(got.shape(), want.shape(), "{}", describe(&e));
            assert_eq!(got.view(), want.view(), "{}", describe(&e));
        }
        // s! itself, and rows and columns of a matrix.
        let m = Array::from_array(ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64));
        assert_eq!(m.slice(s![1.., ..;3]).to_array2().unwrap(), ndarray::array![[4.0, 7.0], [8.0, 11.0]]);
        assert_eq!(m.row(2).to_array1().unwrap(), ndarray::array![8.0, 9.0, 10.0, 11.0]);
        assert_eq!(m.column(1).to_array1().unwrap(), ndarray::array![1.0, 5.0, 9.0]);
        let flags = Array::from_array(ndarray::array![[true, false], [false, false]]);
        assert_eq!(flags.column(0).to_array1().unwrap(), ndarray::array![true, false]);
    }

    #[test]
    fn a_slice_that_does_not_fit_says_why_at_the_call() {
        let x = Array::from_array(cube());
        let err = |e: &[E]| x.try_slice(e).expect_err("an error").to_string();
        assert!(err(s![.., ..].as_ref()).contains("2 axes sliced, the array has 3"), "{}", err(s![.., ..].as_ref()));
        assert!(err(s![4, .., ..].as_ref()).contains("index 4 is past the end of axis 0 of length 4"));
        assert!(err(s![-5, .., ..].as_ref()).contains("index -5 is before the start of an axis of length 4"));
        assert!(err(s![.., 2..9, ..].as_ref()).contains("slice 2..9 is past the end of axis 1 of length 5"));
        let zero_step = [E::from(..), E::Slice { start: 0, end: None, step: 0 }, E::from(..)];
        assert!(err(&zero_step).contains("step must not be zero"));
        assert!(err(s![.., 1, 7].as_ref()).contains("s![.., 1, 7] of shape [4, 5, 6]"), "{}", err(s![.., 1, 7].as_ref()));
        let v = Array::from_array(ndarray::array![1.0, 2.0]);
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| v.row(0))).expect_err("a 1-d array has no rows");
        assert!(panic.downcast_ref::<String>().unwrap().contains("row 0 of an array of shape [2] (a row of a 2-d array)"));
    }

    fn elem(len: usize) -> impl Strategy<Value = E> {
        let l = len as isize + 2;
        prop_oneof![
            (-l..l).prop_map(E::Index),
            (-l..l, proptest::option::of(-l..l), prop_oneof![Just(1isize), Just(-1), Just(2), Just(-3), Just(0)]).prop_map(|(start, end, step)| E::Slice { start, end, step }),
            Just(E::NewAxis),
        ]
    }

    proptest! {
        /// Independent of the rules written above: whatever ndarray cuts, the shape agrees;
        /// whatever ndarray refuses (panics on), `sliced_shape` refuses.
        #[test]
        fn the_shape_rules_are_ndarrays(shape in proptest::collection::vec(0usize..5, 1..4), picks in proptest::collection::vec(elem(4), 1..5)) {
            let a = ndarray::ArrayD::<u8>::zeros(IxDyn(&shape));
            let ours = sliced_shape(&shape, &picks);
            let theirs = std::panic::catch_unwind(|| a.slice(&picks[..]).shape().to_vec());
            match (ours, theirs) {
                (Ok(o), Ok(t)) => prop_assert_eq!(o, t),
                (Err(_), Err(_)) => {}
                (o, t) => prop_assert!(false, "{:?} on {:?}: ours {:?}, ndarray {:?}", picks, shape, o, t.map_err(|_| "panicked")),
            }
        }
    }
}
