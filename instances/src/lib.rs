//! Bach's common f64 and f32 array code, compiled once, for every cell to share.
//!
//! A cell is a crate of its own. Each generic function it calls (`&a * 2.0` on an
//! `Array1<f64>`, `x.sum_axis(Axis(0))`, dropping an `Array2<f64>`) is monomorphised, with
//! everything it reaches in Bach, ndarray and std, and code-generated again in that cell:
//! 1,300 functions for three lines of Bach, 3,500 for a 25-line cell, most of a cell's
//! compile time (issue #48).
//!
//! rustc shares generic instances between crates (`share-generics`) where the crate that made
//! an instance and the crate that needs it both compile at opt-level 0 or 1: the cells compile
//! at 0, and the kernel builds this crate at opt-level 1 (its `.cargo/config.toml`; Bach and
//! ndarray stay at 2, where rustc shares nothing). The functions below are never called. They
//! call the common surface of Bach's f64 and f32 arrays (constructors, operators in each
//! storage and dimension combination, reductions, element functions, views, rows, slices,
//! formatting, drops), so that this crate holds those instances and exports them; the prelude's
//! `use bach_instances as _;` loads it into every cell, and a cell calling any of them links to
//! this crate's copy instead of compiling its own.
//!
//! What a cell uses beyond this list still compiles in the cell, as before; a closure's
//! instances are the cell's own (each closure is a type of its own). A cell at `:opt 2`
//! shares nothing and compiles everything, as before. Adding to the list costs this crate's
//! build (once, at install) and a few symbols each cell's link sees; README, "Where a cell's
//! time goes", measures both.

// Written as cells write it (`&view + &array`, `&row - &row`, `x.rows().into_iter()`): those
// are the instances shared.
#![allow(clippy::op_ref, clippy::eq_op, clippy::useless_conversion)]

use std::hint::black_box;

use bach::prelude_without_macros::*;

/// The 1-d and 2-d surface, for one of Bach's float types (`vectors`, `matrices`: f64).
macro_rules! float_arrays {
    ($A:ty, $vectors:ident, $matrices:ident) => {
        /// 1-d arrays: constructors, the four operators between owned arrays, references, views and
        /// scalars on either side, in place, negation, reductions, element functions, iteration and
        /// formatting.
        #[inline(never)]
        pub fn $vectors(n: usize) {
            let a = Array1::<$A>::linspace(0.0, 1.0, n);
            let z = Array1::<$A>::zeros(n);
            let s = black_box(2.0 as $A);
            black_box((Array1::<$A>::ones(n), Array1::<$A>::from_elem(n, s), Array1::<$A>::range(0.0, 1.0, 0.1)));
            black_box((Array1::<$A>::from_vec(vec![s; n]), Array1::<$A>::from(vec![s; n]), Array1::<$A>::logspace(10.0, 0.0, 1.0, n)));
            black_box((&a + &z, &a - &z, &a * &z, &a / &z));
            black_box((&a + s, &a - s, &a * s, &a / s));
            black_box((s + &a, s - &a, s * &a, s / &a));
            black_box((a.clone() + &z, a.clone() - &z, a.clone() * &z, a.clone() / &z));
            black_box((a.clone() + s, a.clone() - s, a.clone() * s, a.clone() / s));
            black_box((a.clone() + z.clone(), a.clone() - z.clone(), a.clone() * z.clone(), a.clone() / z.clone()));
            black_box((&a + z.clone(), &a - z.clone(), &a * z.clone(), &a / z.clone()));
            black_box((s + a.clone(), s - a.clone(), s * a.clone(), s / a.clone()));
            black_box((-&a, -a.clone()));
            let mut m = a.clone();
            m += &z;
            m -= &z;
            m *= &z;
            m /= &z;
            m += s;
            m -= s;
            m *= s;
            m /= s;
            m.fill(s);
            m[0] = s;
            black_box((a.sum(), a.mean(), a.std(0.0), a.var(0.0), a.dot(&z), a.product()));
            black_box((a.exp(), a.ln(), a.sqrt(), a.abs(), a.powi(2), a.powf(0.5), a.sin(), a.cos(), a.tanh()));
            black_box((a.mapv(<$A>::sqrt), a.mapv(<$A>::exp), a.mapv(<$A>::abs), a.mapv(<$A>::ln)));
            black_box((a.len(), a.shape().len(), a.dim(), a[0], a.is_empty(), a.to_vec()));
            let v = a.view();
            black_box((&v + &z, &v - &z, &v * &z, &v / &z, &v + s, &v - s, &v * s, &v / s, &v - &v, &v * &v));
            black_box((&z + &v, &z - &v, &z * &v, &z / &v));
            black_box((v.to_owned(), v.sum(), v.mean(), v.dot(&a), v.dot(&v), v.len(), v[0]));
            black_box((a.slice(s![1..]).to_owned(), a.slice(s![..;2]).sum(), a.slice(s![1..n - 1]).to_owned()));
            black_box((a.iter().sum::<$A>(), a.iter().cloned().fold(0.0, <$A>::max), a.iter().copied().collect::<Vec<$A>>()));
            for x in a.iter() {
                black_box(x);
            }
            for x in &a {
                black_box(x);
            }
            for (i, x) in a.iter().enumerate() {
                black_box((i, x));
            }
            black_box(a.clone().into_iter().sum::<$A>());
            black_box(format!("{a} {a:?} {a:.3} {v} {v:?}"));
            black_box((a.clone().into_shape_with_order((1, n)).unwrap(), a.insert_axis(Axis(1)).to_owned(), a.clone().into_dyn()));
            a.evcxr_display();
            black_box(m);
        }

        /// 2-d arrays: constructors, operators with matrices, rows (broadcast) and scalars, in place,
        /// reductions over all and along an axis, products, transposes, rows and columns, slices,
        /// indexing and formatting.
        #[inline(never)]
        pub fn $matrices(n: usize) {
            let x = Array2::<$A>::zeros((n, 3));
            let y = Array2::<$A>::ones((n, 3));
            let id = Array2::<$A>::eye(n);
            let r = Array1::<$A>::zeros(3);
            let s = black_box(2.0 as $A);
            black_box((Array2::<$A>::from_shape_vec((n, 3), vec![0.0; 3 * n]).unwrap(), Array2::<$A>::from_elem((n, 3), s), Array2::<$A>::zeros((n, n))));
            black_box((&x + &y, &x - &y, &x * &y, &x / &y));
            black_box((&x + &r, &x - &r, &x * &r, &x / &r));
            black_box((&x + s, &x - s, &x * s, &x / s));
            black_box((s + &x, s - &x, s * &x, s / &x));
            black_box((x.clone() + &y, x.clone() - &y, x.clone() * &y, x.clone() / &y));
            black_box((x.clone() + s, x.clone() - s, x.clone() * s, x.clone() / s));
            black_box((x.clone() + &r, x.clone() - &r, x.clone() * &r, x.clone() / &r));
            black_box((x.clone() + y.clone(), x.clone() - y.clone(), x.clone() * y.clone()));
            black_box((-&x, -x.clone()));
            let mut m = x.clone();
            m += &y;
            m -= &y;
            m *= &y;
            m /= &y;
            m += &r;
            m -= &r;
            m += s;
            m -= s;
            m *= s;
            m /= s;
            m.fill(s);
            m[[0, 0]] = s;
            black_box((x.sum(), x.mean(), x.std(0.0), x.var(0.0)));
            black_box((x.sum_axis(Axis(0)), x.sum_axis(Axis(1)), x.mean_axis(Axis(0)).unwrap(), x.mean_axis(Axis(1)).unwrap()));
            black_box((x.std_axis(Axis(0), 0.0), x.var_axis(Axis(0), 0.0), x.std_axis(Axis(1), 0.0), x.var_axis(Axis(1), 0.0)));
            black_box((x.dot(&r), x.t().dot(&x), x.dot(&x.t()), id.dot(&x), r.dot(&x.t())));
            black_box((x.exp(), x.ln(), x.sqrt(), x.abs(), x.powi(2), x.mapv(<$A>::sqrt), x.mapv(<$A>::exp)));
            black_box((x.nrows(), x.ncols(), x.len(), x.shape().len(), x.dim(), x[[0, 0]], x[(0, 0)]));
            black_box((x.row(0).to_owned(), x.column(0).to_owned(), x.t().to_owned(), x.row(0).sum(), x.column(0).sum()));
            black_box((x.slice(s![.., 0]).to_owned(), x.slice(s![0, ..]).to_owned(), x.slice(s![1.., ..]).to_owned(), x.slice(s![..2, ..2]).to_owned()));
            black_box((x.index_axis(Axis(0), 0).to_owned(), x.index_axis(Axis(1), 0).to_owned()));
            for row in x.rows() {
                black_box((&row - &r, &row + &r, &row * &r, &row / &r, &row * s, &row - s, &row - &row, &row * &row));
                black_box((row.sum(), row.mean(), row.dot(&r), row.dot(&row), row.to_owned(), row.len(), row[0]));
            }
            for (i, row) in x.rows().into_iter().enumerate() {
                black_box((i, row.len()));
            }
            for row in x.outer_iter() {
                black_box(row.sum());
            }
            for col in x.columns() {
                black_box((col.sum(), col.to_owned()));
            }
            for row in x.axis_iter(Axis(0)) {
                black_box(row.sum());
            }
            let v = x.view();
            black_box((&v + &y, &v - &r, &v * s, v.sum(), v.sum_axis(Axis(0)), v.to_owned(), v.t().to_owned()));
            black_box(format!("{x} {x:?} {x:.3} {v}"));
            black_box((x.clone().into_shape_with_order(3 * n).unwrap(), x.clone().into_dyn(), x.iter().sum::<$A>()));
            x.evcxr_display();
            black_box((y, id, m));
        }
    };
}

float_arrays!(f64, vectors, matrices);
float_arrays!(f32, vectors_f32, matrices_f32);

/// Bach's own dialect, `Array<f64>` (dynamic dimensions): the operators, reductions and
/// element functions its workloads and tour use.
#[inline(never)]
pub fn dynamic(n: usize) {
    let a = Array::<f64, IxDyn>::zeros(IxDyn(&[n]));
    let b = Array::<f64, IxDyn>::ones(IxDyn(&[n]));
    let s = black_box(2.0);
    black_box((&a + &b, &a - &b, &a * &b, &a / &b, &a + s, &a - s, &a * s, &a / s, s * &a, s - &a, -&a));
    black_box((a.sum(), a.mean(), a.exp(), a.ln(), a.sqrt(), a.abs(), a.sin(), a.cos(), a.powi(2)));
    black_box(format!("{a} {a:?}"));
    a.evcxr_display();
}
