//! Reductions: sum (pairwise, like numpy), min, max over the whole array or along an axis,
//! and mean/var/std built from them. Over pieces, each piece gives a partial result and the
//! partials are merged by the result's split type.

use std::sync::Arc;

use bach_runtime::split::{self, Partials};
use bach_runtime::{oa, Annotation, BachError, DType, Launch, Meta, Result, Value, ValueRef};
use ndarray::{s, Array1, ArrayD, ArrayView2, ArrayViewD, Axis, Dimension, Ix0, Ix2, IxDyn, RemoveAxis};

use crate::array::or_panic;
use crate::array::Array;
use std::fmt::Write as _;
use std::sync::LazyLock;

use crate::ops::kernels::{c_literal, c_type, FLOATS};
use crate::real::Real;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reducer {
    Sum,
    Min,
    Max,
}

/// numpy's pairwise summation: 8 accumulators over blocks of 128, halves above that.
pub fn pairwise_sum<A: Real>(x: &[A]) -> A {
    if x.len() <= 128 {
        let mut acc = [A::zero(); 8];
        let chunks = x.chunks_exact(8);
        let rest = chunks.remainder();
        for c in chunks {
            for k in 0..8 {
                acc[k] = acc[k] + c[k];
            }
        }
        let mut s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for &r in rest {
            s = s + r;
        }
        s
    } else {
        let half = x.len() / 2 / 8 * 8;
        pairwise_sum(&x[..half]) + pairwise_sum(&x[half..])
    }
}

/// Minimum that propagates NaN (numpy's `min`).
fn nan_min<A: Real>(a: A, b: A) -> A {
    if a.is_nan() || a <= b {
        a
    } else {
        b
    }
}
/// Maximum that propagates NaN (numpy's `max`).
fn nan_max<A: Real>(a: A, b: A) -> A {
    if a.is_nan() || a >= b {
        a
    } else {
        b
    }
}

/// The result of reducing `m` over `axis` (`None`: every axis).
fn reduced_meta(m: &Meta, axis: Option<usize>) -> Meta {
    let mut shape = m.shape.clone();
    match axis {
        None => shape.clear(),
        Some(a) => {
            shape.remove(a);
        }
    }
    Meta::new(m.dtype, shape)
}

impl Reducer {
    pub(crate) const ALL: [Reducer; 3] = [Reducer::Sum, Reducer::Min, Reducer::Max];

    fn name(self) -> &'static str {
        match self {
            Reducer::Sum => "sum",
            Reducer::Min => "min",
            Reducer::Max => "max",
        }
    }
    fn pair<A: Real>(self, a: A, b: A) -> A {
        match self {
            Reducer::Sum => a + b,
            Reducer::Min => nan_min(a, b),
            Reducer::Max => nan_max(a, b),
        }
    }
    /// `pair` in CUDA C, over `a` and `b` (`a != a`: a is NaN), for the accelerator kernels.
    pub(crate) fn c_pair(self) -> &'static str {
        match self {
            Reducer::Sum => "a + b",
            Reducer::Min => "(a != a || a <= b) ? a : b",
            Reducer::Max => "(a != a || a >= b) ? a : b",
        }
    }
    /// The value `pair` leaves the other side unchanged with (NaN included).
    pub(crate) fn identity(self) -> f64 {
        match self {
            Reducer::Sum => 0.0,
            Reducer::Min => f64::INFINITY,
            Reducer::Max => f64::NEG_INFINITY,
        }
    }
    /// Op name and accelerator entry of a reduction laid out as `layout`: `sum` (whole),
    /// `sum_axis0` (down axis 0), `sum_axis1` (along the last axis), `sum_lanes` (a middle
    /// axis).
    pub(crate) fn entry(self, layout: Layout) -> String {
        match layout {
            Layout::Whole => self.name().to_string(),
            Layout::Down => format!("{}_axis0", self.name()),
            Layout::Across => format!("{}_axis1", self.name()),
            Layout::Lanes(_) => format!("{}_lanes", self.name()),
        }
    }
    /// Over all elements.
    fn all<A: Real>(self, v: &ArrayViewD<'_, A>) -> A {
        let owned;
        let x = match v.as_slice_memory_order() {
            Some(x) => x,
            None => {
                owned = v.iter().copied().collect::<Vec<A>>();
                &owned
            }
        };
        match self {
            Reducer::Sum => pairwise_sum(x),
            _ => x.iter().copied().reduce(|a, b| self.pair(a, b)).unwrap_or_else(A::nan),
        }
    }
    /// Down axis 0 of a matrix (pairwise over rows for sums).
    fn down<A: Real>(self, v: ArrayView2<'_, A>) -> Array1<A> {
        if v.nrows() <= 8 {
            let mut rows = v.rows().into_iter();
            let Some(first) = rows.next() else { return Array1::zeros(v.ncols()) };
            let mut acc = first.to_owned();
            for r in rows {
                acc.zip_mut_with(&r, |a, &b| *a = self.pair(*a, b));
            }
            return acc;
        }
        let h = v.nrows() / 2;
        let mut top = self.down(v.slice(s![..h, ..]));
        top.zip_mut_with(&self.down(v.slice(s![h.., ..])), |a, &b| *a = self.pair(*a, b));
        top
    }
    /// Along axis 1 of a matrix: one result per row.
    fn across<A: Real>(self, v: ArrayView2<'_, A>) -> Array1<A> {
        v.rows().into_iter().map(|r| self.all(&r.into_dyn())).collect()
    }
    /// Merge partial results elementwise (a tree for sums, so they stay pairwise).
    fn merge<A: Real>(self, parts: &[ArrayViewD<'_, A>]) -> ArrayD<A> {
        if parts.len() == 1 {
            return parts[0].to_owned();
        }
        let (l, r) = parts.split_at(parts.len() / 2);
        let mut left = self.merge(l);
        left.zip_mut_with(&self.merge(r), |a, &b| *a = self.pair(*a, b));
        left
    }

    fn merge_values(self, parts: Vec<Value>) -> Result<Value> {
        fn typed<A: Real>(r: Reducer, parts: &[Value]) -> Result<Value> {
            let views: Vec<ArrayViewD<'_, A>> = parts.iter().map(|p| p.view().array::<A>(r.name())).collect::<Result<_>>()?;
            Ok(Value::from(r.merge(&views)))
        }
        match parts[0].meta().dtype {
            DType::F64 => typed::<f64>(self, &parts),
            DType::F32 => typed::<f32>(self, &parts),
            d => Err(BachError::dtype(self.name(), "f64 or f32", d)),
        }
    }

    /// Over `layout` of `v` (a piece of any number of axes).
    fn reduce_piece<A: Real>(self, v: ArrayViewD<'_, A>, layout: Layout) -> Result<ArrayD<A>> {
        let shape = v.shape().to_vec();
        let matrix = |rows: usize, cols: usize| -> Result<ndarray::Array2<A>> {
            let m = v.as_standard_layout().into_owned();
            m.into_shape_with_order((rows, cols)).map_err(|e| BachError::shape(self.name(), e.to_string()))
        };
        let reshaped = |r: Array1<A>, to: &[usize]| r.into_shape_with_order(IxDyn(to)).map_err(|e| BachError::shape(self.name(), e.to_string()));
        match layout {
            Layout::Whole => Ok(ArrayD::from_elem(IxDyn(&[]), self.all(&v))),
            Layout::Down if shape.len() == 2 => Ok(self.down(v.into_dimensionality::<Ix2>().expect("2-d")).into_dyn()),
            Layout::Across if shape.len() == 2 => Ok(self.across(v.into_dimensionality::<Ix2>().expect("2-d")).into_dyn()),
            Layout::Down => reshaped(self.down(matrix(shape[0], shape[1..].iter().product())?.view()), &shape[1..]),
            Layout::Across => {
                let (last, rest) = shape.split_last().expect("an axis");
                reshaped(self.across(matrix(rest.iter().product(), *last)?.view()), rest)
            }
            Layout::Lanes(a) => Ok(v.map_axis(Axis(a), |lane| self.all(&lane.into_dyn()))),
        }
    }

    /// The annotation reducing an `ndim`-d array (any number of axes) over `axis` (None:
    /// everything), on the CPU and the accelerator, in pieces of axis 0.
    fn annotation(self, axis: Option<usize>, ndim: usize) -> Arc<Annotation> {
        let layout = Layout::of(axis, ndim);
        let op_name = self.entry(layout);
        let launch_axis = match layout {
            Layout::Whole => None,
            _ => axis,
        };
        let builder = oa(op_name.clone())
            .accelerator_launch(op_name.clone(), reduce_source(), Launch::Reduce { axis: launch_axis })
            .shape(move |m: &[Meta]| Ok(reduced_meta(&m[0], launch_axis)));
        let builder = match layout {
            // Each piece holds some rows: partials merged by the reducer.
            Layout::Whole | Layout::Down => builder.result(Arc::new(Partials::new(op_name, move |parts| self.merge_values(parts)))),
            // Axis 0 is kept: the pieces' results are rows of the result.
            Layout::Across | Layout::Lanes(_) => builder.result(split::rows()),
        };
        builder
            .cpu(move |_, args| match &args[0] {
                ValueRef::F64(a) => self.reduce_piece(a.view(), layout).map(Value::from),
                ValueRef::F32(a) => self.reduce_piece(a.view(), layout).map(Value::from),
                v => Err(BachError::dtype(self.name(), "f64 or f32", v.dtype())),
            })
            .build()
    }
}

/// How a reduction walks its argument: every element, down axis 0, along the last axis, or
/// along a middle axis (arrays of 3 or more axes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    Whole,
    Down,
    Across,
    Lanes(usize),
}

impl Layout {
    fn of(axis: Option<usize>, ndim: usize) -> Layout {
        match axis {
            None => Layout::Whole,
            Some(_) if ndim <= 1 => Layout::Whole,
            Some(0) => Layout::Down,
            Some(a) if a + 1 == ndim => Layout::Across,
            Some(a) => Layout::Lanes(a),
        }
    }
}

/// Every reduction annotation: each reducer whole, down axis 0 and along axis 1 (for the
/// kernel catalogue).
pub(crate) fn catalog() -> Vec<Arc<Annotation>> {
    Reducer::ALL.iter().flat_map(|&r| [r.annotation(None, 2), r.annotation(Some(0), 2), r.annotation(Some(1), 2), r.annotation(Some(1), 3)]).collect()
}

impl<A: Real, S: crate::array::Data<Elem = A>, D: Dimension> crate::array::ArrayBase<S, D> {
    fn reduce<E: Dimension>(&self, r: Reducer, axis: Option<Axis>) -> Result<Array<A, E>> {
        let ndim = self.ndim();
        let axis = axis.map(|a| a.index());
        if let Some(a) = axis.filter(|&a| a >= ndim) {
            return Err(BachError::invalid(r.name(), format!("axis {a} of a {ndim}-d array")));
        }
        let n = match axis {
            None => self.len(),
            Some(a) => self.shape()[a],
        };
        if r != Reducer::Sum && n == 0 {
            return Err(BachError::EmptyReduction { op: r.name().to_string() });
        }
        self.call(&r.annotation(axis, ndim), &[])
    }

    /// Sum of all elements as a lazy 0-d array (Bach's form: nothing runs until it is
    /// displayed or evaluated).
    pub fn sum_lazy(&self) -> Array<A, Ix0> {
        self.reduce(Reducer::Sum, None).expect("sum accepts 1-d and 2-d arrays")
    }
    pub fn try_sum_axis(&self, axis: Axis) -> Result<Array<A, D::Smaller>>
    where
        D: RemoveAxis,
    {
        self.reduce(Reducer::Sum, Some(axis))
    }
    /// Smallest element (NaN if any is NaN), a lazy 0-d array; an error for an empty array.
    /// Bach's form, named as [`ArrayBase::sum_lazy`]: ndarray has no `min`, so `x.min()` is
    /// left to the extension traits a program brings (ndarray-stats' `QuantileExt`, or its
    /// own), which reach the evaluated value through `Deref` as on ndarray's arrays.
    pub fn min_lazy(&self) -> Result<Array<A, Ix0>> {
        self.reduce(Reducer::Min, None)
    }
    /// Largest element (NaN if any is NaN), a lazy 0-d array; an error for an empty array
    /// (as [`ArrayBase::min_lazy`]).
    pub fn max_lazy(&self) -> Result<Array<A, Ix0>> {
        self.reduce(Reducer::Max, None)
    }
    /// Smallest elements along `axis`; panics at this line when the array has no such axis
    /// or the axis is empty ([`Array::try_min_axis`] returns it as an error).
    #[track_caller]
    pub fn min_axis(&self, axis: Axis) -> Array<A, D::Smaller>
    where
        D: RemoveAxis,
    {
        or_panic(self.try_min_axis(axis))
    }
    pub fn try_min_axis(&self, axis: Axis) -> Result<Array<A, D::Smaller>>
    where
        D: RemoveAxis,
    {
        self.reduce(Reducer::Min, Some(axis))
    }
    /// Largest elements along `axis`; as [`Array::min_axis`].
    #[track_caller]
    pub fn max_axis(&self, axis: Axis) -> Array<A, D::Smaller>
    where
        D: RemoveAxis,
    {
        or_panic(self.try_max_axis(axis))
    }
    pub fn try_max_axis(&self, axis: Axis) -> Result<Array<A, D::Smaller>>
    where
        D: RemoveAxis,
    {
        self.reduce(Reducer::Max, Some(axis))
    }
    /// Mean of all elements as a lazy 0-d array; an error for an empty array.
    pub fn mean_lazy(&self) -> Result<Array<A, Ix0>> {
        if self.is_empty() {
            return Err(BachError::EmptyReduction { op: "mean".into() });
        }
        self.sum_lazy().try_div(A::of(self.len() as f64))
    }
    /// [`ArrayBase::mean_axis`], with an empty axis as an error.
    pub fn try_mean_axis(&self, axis: Axis) -> Result<Array<A, D::Smaller>>
    where
        D: RemoveAxis,
    {
        let s = self.try_sum_axis(axis)?;
        let n = self.shape()[axis.index()];
        if n == 0 {
            return Err(BachError::EmptyReduction { op: "mean_axis".into() });
        }
        s.try_div(A::of(n as f64))
    }
    /// Variance with `ddof` degrees of freedom (0: population), two passes like numpy, as
    /// ndarray's `var` (evaluates): panics at this line when `ddof` leaves no degrees of
    /// freedom; [`Array::try_var`] returns it as an error, [`Array::var_lazy`] is lazy.
    #[track_caller]
    pub fn var(&self, ddof: A) -> A {
        or_panic(self.try_var(ddof).and_then(|v| v.number_for("var")))
    }
    /// [`Array::var`] as a lazy 0-d array.
    #[track_caller]
    pub fn var_lazy(&self, ddof: A) -> Array<A, Ix0> {
        or_panic(self.try_var(ddof))
    }
    pub fn try_var(&self, ddof: A) -> Result<Array<A, Ix0>> {
        let n = A::of(self.len() as f64);
        if n - ddof <= A::zero() {
            return Err(BachError::EmptyReduction { op: "var".into() });
        }
        let d = self.to_owned().into_dyn().try_sub(self.mean_lazy()?)?;
        (&d * &d).sum_lazy().try_div(n - ddof)
    }
    /// Standard deviation; as [`Array::var`].
    #[track_caller]
    pub fn std(&self, ddof: A) -> A {
        or_panic(self.try_std(ddof).and_then(|v| v.number_for("std")))
    }
    /// [`Array::std`] as a lazy 0-d array.
    #[track_caller]
    pub fn std_lazy(&self, ddof: A) -> Array<A, Ix0> {
        or_panic(self.try_std(ddof))
    }
    pub fn try_std(&self, ddof: A) -> Result<Array<A, Ix0>> {
        Ok(self.try_var(ddof)?.sqrt())
    }
    /// Variance along `axis` with `ddof` degrees of freedom (ndarray's `var_axis`): panics at
    /// this line when the array has no such axis or `ddof` leaves no degrees of freedom;
    /// [`Array::try_var_axis`] returns it as an error.
    #[track_caller]
    pub fn var_axis(&self, axis: Axis, ddof: A) -> Array<A, D::Smaller>
    where
        D: RemoveAxis,
    {
        or_panic(self.try_var_axis(axis, ddof))
    }
    pub fn try_var_axis(&self, axis: Axis, ddof: A) -> Result<Array<A, D::Smaller>>
    where
        D: RemoveAxis,
    {
        let n = A::of(*self.shape().get(axis.index()).ok_or_else(|| BachError::invalid("var_axis", format!("no axis {}", axis.index())))? as f64);
        if n - ddof <= A::zero() {
            return Err(BachError::EmptyReduction { op: "var_axis".into() });
        }
        let x = self.to_owned().into_dyn();
        let mut m = x.try_mean_axis(axis)?;
        if axis.index() >= 1 {
            m = m.insert_axis(axis);
        }
        let d = x.try_sub(m)?;
        (&d * &d).try_sum_axis(axis)?.try_div(n - ddof)?.into_dimensionality()
    }
    /// Standard deviations along `axis`; as [`Array::var_axis`].
    #[track_caller]
    pub fn std_axis(&self, axis: Axis, ddof: A) -> Array<A, D::Smaller>
    where
        D: RemoveAxis,
    {
        or_panic(self.try_std_axis(axis, ddof))
    }
    pub fn try_std_axis(&self, axis: Axis, ddof: A) -> Result<Array<A, D::Smaller>>
    where
        D: RemoveAxis,
    {
        Ok(self.try_var_axis(axis, ddof)?.sqrt())
    }
}

/// Reductions ([`Launch::Reduce`]) for every reducer and axis variant: `<op>_<T>` (whole
/// piece), `<op>_axis0_<T>` (down the rows: cols values), `<op>_axis1_<T>` (along each row:
/// rows values), each one block of 256 threads per output value (each thread folds a strided
/// share, then a shared-memory tree); and `<op>_lanes_<T>` (a middle axis of outer x len x
/// inner: one thread per output, eight accumulators as the CPU's pairwise sum starts, so
/// neighbouring threads read neighbouring elements). Sums accumulate in T (f32 in f32, as the
/// CPU's pairwise sum); min and max propagate NaN with the CPU's `nan_min`/`nan_max`.
pub fn reduce_source() -> &'static str {
    static SRC: LazyLock<String> = LazyLock::new(|| {
        let mut src = String::from("// bach: reduction kernels, generated from annotations/src/ops/reduce.rs (blocks of 256 threads)\n\n");
        for r in Reducer::ALL {
            for layout in [Layout::Whole, Layout::Down, Layout::Across] {
                for d in FLOATS {
                    reduce_kernel(&mut src, r, layout, d);
                }
            }
            for d in FLOATS {
                lanes_kernel(&mut src, r, d);
            }
        }
        src
    });
    &SRC
}

/// A middle axis: output `o = i * inner + j` folds `x[(i * len + k) * inner + j]` over `k`
/// as `pairwise_sum` folds up to 128 elements: eight accumulators over whole blocks of eight,
/// combined pairwise, then the rest one by one (the same additions in the same order for
/// lanes of up to 128 elements).
fn lanes_kernel(src: &mut String, r: Reducer, d: DType) {
    let t = c_type(d);
    let pair = r.c_pair();
    let identity = c_literal(r.identity(), d);
    let name = format!("{}_{d}", r.entry(Layout::Lanes(1)));
    let _ = writeln!(
        src,
        "extern \"C\" __global__ void {name}(unsigned long long outer, unsigned long long len, unsigned long long inner, const {t}* x, {t}* out) {{\n    \
         const unsigned long long n = outer * inner;\n    \
         for (unsigned long long o = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += (unsigned long long)gridDim.x * blockDim.x) {{\n        \
         const unsigned long long i = o / inner, j = o % inner, whole = len / 8 * 8;\n        \
         const {t}* lane = x + i * len * inner + j;\n        \
         {t} acc[8];\n        \
         for (int q = 0; q < 8; ++q) acc[q] = {identity};\n        \
         for (unsigned long long k = 0; k < whole; ++k) {{\n            \
         const {t} a = acc[k % 8], b = lane[k * inner];\n            acc[k % 8] = {pair};\n        }}\n        \
         {t} a, b;\n        \
         a = acc[0]; b = acc[1]; const {t} p01 = {pair};\n        \
         a = acc[2]; b = acc[3]; const {t} p23 = {pair};\n        \
         a = acc[4]; b = acc[5]; const {t} p45 = {pair};\n        \
         a = acc[6]; b = acc[7]; const {t} p67 = {pair};\n        \
         a = p01; b = p23; const {t} p03 = {pair};\n        \
         a = p45; b = p67; const {t} p47 = {pair};\n        \
         a = p03; b = p47; {t} s = {pair};\n        \
         for (unsigned long long k = whole; k < len; ++k) {{\n            \
         a = s; b = lane[k * inner]; s = {pair};\n        }}\n        \
         out[o] = s;\n    }}\n}}\n"
    );
}

fn reduce_kernel(src: &mut String, r: Reducer, layout: Layout, d: DType) {
    let t = c_type(d);
    let pair = r.c_pair();
    let identity = c_literal(r.identity(), d);
    let name = format!("{}_{d}", r.entry(layout));
    // Output o reduces `count` elements x[base + k * step].
    let (what, outputs, count, base, step) = match layout {
        Layout::Whole => ("every element", "1", "rows * cols", "0", "1"),
        Layout::Down => ("column o, down the rows", "cols", "rows", "o", "cols"),
        _ => ("row o, along its columns", "rows", "cols", "o * cols", "1"),
    };
    let _ = writeln!(
        src,
        "extern \"C\" __global__ void {name}(unsigned long long rows, unsigned long long cols, const {t}* x, {t}* out) {{\n    \
         __shared__ {t} s[256];\n    \
         const unsigned long long o = blockIdx.x;  // output o: {what}\n    \
         if (o >= {outputs}) return;\n    \
         const unsigned long long count = {count}, base = {base}, step = {step};\n    \
         {t} acc = {identity};\n    \
         for (unsigned long long k = threadIdx.x; k < count; k += blockDim.x) {{\n        \
         const {t} a = acc, b = x[base + k * step];\n        acc = {pair};\n    }}\n    \
         s[threadIdx.x] = acc;\n    __syncthreads();\n    \
         for (unsigned int w = blockDim.x / 2; w > 0; w >>= 1) {{\n        \
         if (threadIdx.x < w) {{\n            const {t} a = s[threadIdx.x], b = s[threadIdx.x + w];\n            s[threadIdx.x] = {pair};\n        }}\n        \
         __syncthreads();\n    }}\n    \
         if (threadIdx.x == 0) out[o] = s[0];\n}}\n"
    );
}

/// `sum`, `sum_axis`, `mean` and `mean_axis` for every element type ndarray's take (code
/// generic over `A: NdFloat` or `A: Clone + Zero + Add` ports too): f64 and f32 arrays take
/// Bach's planned reductions (the `Real` methods above), every other type computes at once on
/// the host, as ndarray does.
impl<A: Clone + num_traits::Zero + std::ops::Add<Output = A>, S: crate::array::Data<Elem = A>, D: Dimension> crate::array::ArrayBase<S, D> {
    /// Sum of all elements (pairwise summation), as ndarray's `sum`: evaluates (the sum is
    /// planned and placed like any op) and returns the number. [`Array::sum_lazy`] is the
    /// lazy form.
    #[track_caller]
    pub fn sum(&self) -> A {
        fn real<F: Real, A, S: crate::array::Data<Elem = A>, D: Dimension>(x: &crate::array::ArrayBase<S, D>) -> Option<A> {
            crate::array::as_real::<F, A, S, D>(x).map(|x| crate::array::same_type(or_panic(x.sum_lazy().number_for("sum"))))
        }
        crate::array::f64_or_f32::<A, _>(|| real::<f64, _, _, _>(self), || real::<f32, _, _, _>(self)).unwrap_or_else(|| self.evaluated().sum())
    }
    /// Sums along `axis` (ndarray's `sum_axis`): panics at this line when the array has no
    /// such axis; [`Array::try_sum_axis`] returns it as an error.
    #[track_caller]
    pub fn sum_axis(&self, axis: Axis) -> Array<A, D::Smaller>
    where
        D: RemoveAxis,
    {
        fn real<F: Real, A, S: crate::array::Data<Elem = A>, D: RemoveAxis>(x: &crate::array::ArrayBase<S, D>, axis: Axis) -> Option<Array<A, D::Smaller>> {
            crate::array::as_real::<F, A, S, D>(x).map(|x| crate::array::same_type(or_panic(x.try_sum_axis(axis))))
        }
        crate::array::f64_or_f32::<A, _>(|| real::<f64, _, _, _>(self, axis), || real::<f32, _, _, _>(self, axis))
            .unwrap_or_else(|| Array::from_host_in(self.evaluated().sum_axis(axis).into_shared(), self.home()))
    }
    /// Mean of all elements, as ndarray's `mean`: `None` for an empty array (evaluates).
    #[track_caller]
    pub fn mean(&self) -> Option<A>
    where
        A: num_traits::FromPrimitive + std::ops::Div<Output = A>,
    {
        fn real<F: Real, A, S: crate::array::Data<Elem = A>, D: Dimension>(x: &crate::array::ArrayBase<S, D>) -> Option<Option<A>> {
            crate::array::as_real::<F, A, S, D>(x).map(|x| x.mean_lazy().ok().map(|m| crate::array::same_type(or_panic(m.number_for("mean")))))
        }
        crate::array::f64_or_f32::<A, _>(|| real::<f64, _, _, _>(self), || real::<f32, _, _, _>(self)).unwrap_or_else(|| self.evaluated().mean())
    }
    /// Means along `axis` (lazy for f64 and f32), as ndarray's `mean_axis`: `None` for an
    /// empty axis.
    #[track_caller]
    pub fn mean_axis(&self, axis: Axis) -> Option<Array<A, D::Smaller>>
    where
        A: num_traits::FromPrimitive + std::ops::Div<Output = A>,
        D: RemoveAxis,
    {
        fn real<F: Real, A, S: crate::array::Data<Elem = A>, D: RemoveAxis>(x: &crate::array::ArrayBase<S, D>, axis: Axis) -> Option<Option<Array<A, D::Smaller>>> {
            crate::array::as_real::<F, A, S, D>(x).map(|x| x.try_mean_axis(axis).ok().map(crate::array::same_type))
        }
        crate::array::f64_or_f32::<A, _>(|| real::<f64, _, _, _>(self, axis), || real::<f32, _, _, _>(self, axis))
            .unwrap_or_else(|| self.evaluated().mean_axis(axis).map(|m| Array::from_host_in(m.into_shared(), self.home())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_matches_exact_small_sums() {
        let x: Vec<f64> = (1..=1000).map(|i| i as f64).collect();
        assert_eq!(pairwise_sum(&x), 500500.0);
        assert_eq!(pairwise_sum::<f64>(&[]), 0.0);
    }

    #[test]
    fn nan_propagates_through_min_and_max() {
        assert!(nan_min(f64::NAN, 1.0).is_nan());
        assert!(nan_min(1.0, f64::NAN).is_nan());
        assert!(nan_max(1.0, f64::NAN).is_nan());
        assert_eq!(nan_min(1.0, 2.0), 1.0);
        assert_eq!(nan_max(1.0, 2.0), 2.0);
    }
}
