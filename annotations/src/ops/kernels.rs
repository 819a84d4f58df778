//! The CUDA C generators the op families share (`c_type`, `c_expr`, `elementwise_kernel`,
//! `table_source`), and the sources of the small families (casts, powi, fills). Each family's
//! source sits beside its CPU kernels (`elementwise.rs`, `reduce.rs`); `ops.rs` lists them
//! all. The accelerator versions of the library's ops are generated from the same op tables
//! as the CPU kernels: one source per op family, each defining its entries for every dtype
//! the family accepts, named `<entry>_f64`, `<entry>_f32`, `<entry>_bool` (the dtype of the
//! first argument, or of the result for allocations; bool is `unsigned char`). Every entry
//! follows its [`Launch`] convention exactly:
//!
//! | family | source | entries | launch |
//! |---|---|---|---|
//! | unary math | [`unary_source`](crate::registry::unary_source) | `sqrt` ... `neg` (`elementwise.rs`, `unary_table!`) | `Elementwise` |
//! | binary | [`binary_source`](crate::registry::binary_source) | `add` ... `not_equal` (`binary_table!`) | `Elementwise` |
//! | masks | [`mask_source`](crate::registry::mask_source) | `and`, `or`, `not` (`mask_table!`) | `Elementwise` |
//! | where | [`where_source`](crate::registry::where_source) | `where_f64`, `where_f32`, `where_bool` (value dtype), + `_bool` (mask) | `Elementwise` |
//! | casts | [`cast_source`] | `cast_to_f64`, `cast_to_f32` | `Elementwise` |
//! | powi | [`powi_source`] | `powi` (exponent in `params`) | `Elementwise` |
//! | fills | [`fill_source`] | `fill` (value), `sequence` (start, step) | `Fill` |
//! | reductions | [`reduce_source`](crate::registry::reduce_source) | `sum`, `sum_axis0`, `sum_axis1`, `min`..., `max`... | `Reduce` |
//!
//! `dot` is `Launch::Gemm` (the device's BLAS, no source). `mapv`, `random_*`, `t`,
//! `slice_rows` and `insert_axis` have no accelerator slot.
//!
//! Table expressions are written for `double`, in the closure's own variable names; every
//! function call in them names a CUDA double-precision math function, and the f32 kernel
//! calls its `f`-suffixed twin (`sqrt(x)` -> `sqrtf(x)`, `pow(x, y)` -> `powf(x, y)`). They
//! hold no floating literals (a literal would be a `double` in an f32 kernel). Nothing here
//! relies on fast math: compiled with NVRTC's defaults (IEEE division and square root),
//! `+ - * /` and `sqrt` round exactly as on the CPU; `sequence` uses `__dmul_rn`/`__dadd_rn`
//! so that no multiply-add is contracted into an FMA.

use std::fmt::Write as _;
use std::sync::LazyLock;

use bach_runtime::{DType, Fusable, FusedExpr};

/// The float dtypes: every arithmetic and math op has an f64 and an f32 kernel.
pub(crate) const FLOATS: [DType; 2] = [DType::F64, DType::F32];
/// The dtypes `where_` and `from_elem` accept.
pub(crate) const ELEMENTS: [DType; 4] = [DType::F64, DType::F32, DType::I64, DType::Bool];
/// The dtypes a cast converts from (to a float type).
pub(crate) const CAST_FROM: [DType; 3] = [DType::F64, DType::F32, DType::I64];

/// One row of an elementwise op table, as the generator sees it: the op's name (its entry),
/// the CPU closure's variable names (argument k is read into `vars[k]`), the result dtype
/// when it is not the arguments' (comparisons: bool), and the CUDA C expression.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    pub name: &'static str,
    pub vars: &'static [&'static str],
    pub out: Option<DType>,
    pub c: &'static str,
}

/// The C type of a dtype.
pub(crate) fn c_type(d: DType) -> &'static str {
    match d {
        DType::F64 => "double",
        DType::F32 => "float",
        DType::I64 => "long long",
        DType::Bool => "unsigned char",
        DType::Opaque => unreachable!("opaque values have no kernels"),
    }
}

/// A table expression (written for double) for dtype `d`: for f32 every called function
/// gets its `f` suffix (`sqrt(` -> `sqrtf(`).
pub(crate) fn c_expr(expr: &str, d: DType) -> String {
    if d != DType::F32 {
        return expr.to_string();
    }
    let chars: Vec<char> = expr.chars().collect();
    let mut out = String::with_capacity(expr.len() + 4);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.extend(&chars[start..i]);
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if chars.get(j) == Some(&'(') {
                out.push('f');
            }
        } else if c.is_ascii_digit() {
            // A number (with any letters of its suffix) is copied as it is.
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                out.push(chars[i]);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// An elementwise table row as a [`Fusable`] op: its expression for each dtype in `dtypes`
/// (arguments of that dtype; the result is `out`, or the arguments' dtype).
pub(crate) fn fusable(vars: &[&str], c: &str, out: Option<DType>, dtypes: &[DType]) -> Fusable {
    Fusable { vars: vars.iter().map(|v| v.to_string()).collect(), exprs: dtypes.iter().map(|&d| FusedExpr { dtype: d, c: c_expr(c, d), out: out.unwrap_or(d) }).collect() }
}

/// A C expression for the f64 value `v` in dtype `d` (infinities through bit patterns:
/// NVRTC has no math.h and so no `INFINITY`).
pub(crate) fn c_literal(v: f64, d: DType) -> String {
    match d {
        DType::F64 if v.is_finite() => format!("{v:?}"),
        DType::F64 => format!("__longlong_as_double(0x{:016x}LL)", v.to_bits()),
        DType::F32 if v.is_finite() => format!("{:?}f", v as f32),
        DType::F32 => format!("__int_as_float(0x{:08x})", (v as f32).to_bits()),
        DType::I64 => format!("{}LL", v as i64),
        DType::Bool => format!("{}", u8::from(v != 0.0)),
        DType::Opaque => unreachable!("opaque values have no kernels"),
    }
}

pub(crate) const GRID_STRIDE: &str =
    "for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)";

/// One kernel of [`Launch::Elementwise`]:
/// `name(u64 n, T_out* out, [const T_k* a_k, u64 div_k, u64 mod_k]..., double params...)`,
/// argument k read into its variable at `(i / div_k) % mod_k`, `out[i] = expr`.
pub(crate) fn elementwise_kernel(src: &mut String, name: &str, out: DType, args: &[(&str, DType)], params: &[&str], expr: &str) {
    let ot = c_type(out);
    let _ = write!(src, "extern \"C\" __global__ void {name}(unsigned long long n, {ot}* out");
    for (k, (_, d)) in args.iter().enumerate() {
        let _ = write!(src, ", const {}* a{k}, unsigned long long div{k}, unsigned long long mod{k}", c_type(*d));
    }
    for p in params {
        let _ = write!(src, ", double {p}");
    }
    let _ = writeln!(src, ") {{\n    {GRID_STRIDE} {{");
    for (k, (v, d)) in args.iter().enumerate() {
        let _ = writeln!(src, "        const {} {v} = a{k}[(i / div{k}) % mod{k}];", c_type(*d));
    }
    let _ = writeln!(src, "        out[i] = ({ot})({expr});\n    }}\n}}\n");
}

/// One source for the rows of an elementwise table, each for every dtype in `dtypes`.
pub(crate) fn table_source(family: &str, rows: &[Row], dtypes: &[DType]) -> String {
    let mut src = format!("// bach: {family} kernels, generated from the op table in annotations/src/ops/elementwise.rs\n\n");
    for row in rows {
        for &d in dtypes {
            let args: Vec<(&str, DType)> = row.vars.iter().map(|&v| (v, d)).collect();
            elementwise_kernel(&mut src, &format!("{}_{d}", row.name), row.out.unwrap_or(d), &args, &[], &c_expr(row.c, d));
        }
    }
    src
}

/// Casts between float types: entry `cast_to_<to>`, launched as `cast_to_<to>_<from>`.
pub fn cast_source() -> &'static str {
    static SRC: LazyLock<String> = LazyLock::new(|| {
        let mut src = String::from("// bach: cast kernels (entry cast_to_<to>, launched as cast_to_<to>_<from>)\n\n");
        for to in FLOATS {
            for from in CAST_FROM {
                elementwise_kernel(&mut src, &format!("{}_{from}", cast_entry(to)), to, &[("x", from)], &[], "x");
            }
        }
        src
    });
    &SRC
}

/// The entry of a cast to `to`.
pub(crate) fn cast_entry(to: DType) -> String {
    format!("cast_to_{to}")
}

/// `x.powi(n)` with `n` in `params[0]`: repeated squaring as Rust's `powi` (compiler-rt's
/// `__powidf2`/`__powisf2`: the same multiplications in the same order): `powi_f64`, `powi_f32`.
pub fn powi_source() -> &'static str {
    static SRC: LazyLock<String> = LazyLock::new(|| {
        let mut src = String::from(
            "// bach: powi kernels (the exponent is params[0])\n\n\
             template <typename T> __device__ __forceinline__ T bach_powi(T a, int b) {\n    \
             const bool recip = b < 0;\n    T r = (T)1;\n    \
             for (;;) {\n        if (b & 1) r *= a;\n        b /= 2;\n        if (b == 0) break;\n        a *= a;\n    }\n    \
             return recip ? (T)1 / r : r;\n}\n\n",
        );
        for d in FLOATS {
            elementwise_kernel(&mut src, &format!("powi_{d}"), d, &[("x", d)], &["p0"], "bach_powi(x, (int)p0)");
        }
        src
    });
    &SRC
}

/// Allocations made on the device ([`Launch::Fill`]): `fill_<T>` (params: value; bool is
/// `value != 0`) for zeros/ones/full/from_elem, and `sequence_<T>` (params: start, step:
/// element j is `start + step * j`, in T, as the CPU computes it) for linspace/range/arange.
pub fn fill_source() -> &'static str {
    static SRC: LazyLock<String> = LazyLock::new(|| {
        let mut src = String::from(
            "// bach: fill kernels (element i of the piece is element first + i of the value)\n\n\
             __device__ __forceinline__ double bach_mul_rn(double a, double b) { return __dmul_rn(a, b); }\n\
             __device__ __forceinline__ float bach_mul_rn(float a, float b) { return __fmul_rn(a, b); }\n\
             __device__ __forceinline__ double bach_add_rn(double a, double b) { return __dadd_rn(a, b); }\n\
             __device__ __forceinline__ float bach_add_rn(float a, float b) { return __fadd_rn(a, b); }\n\n",
        );
        for d in ELEMENTS {
            let t = c_type(d);
            let value = if d == DType::Bool { "p0 != 0.0" } else { "p0" };
            let _ = writeln!(
                src,
                "extern \"C\" __global__ void {FILL}_{d}(unsigned long long n, {t}* out, unsigned long long first, double p0) {{\n    \
                 (void)first;\n    const {t} v = ({t})({value});\n    {GRID_STRIDE} out[i] = v;\n}}\n"
            );
        }
        for d in FLOATS {
            let t = c_type(d);
            // The index as the CPU converts it: `A::of(i as f64)`.
            let j = if d == DType::F64 { "(double)(first + i)".to_string() } else { format!("({t})(double)(first + i)") };
            let _ = writeln!(
                src,
                "extern \"C\" __global__ void {SEQUENCE}_{d}(unsigned long long n, {t}* out, unsigned long long first, double p0, double p1) {{\n    \
                 const {t} start = ({t})p0, step = ({t})p1;\n    \
                 {GRID_STRIDE} out[i] = bach_add_rn(start, bach_mul_rn(step, {j}));\n}}\n"
            );
        }
        src
    });
    &SRC
}

/// Entry of constant fills.
pub(crate) const FILL: &str = "fill";
/// Entry of arithmetic sequences.
pub(crate) const SEQUENCE: &str = "sequence";
