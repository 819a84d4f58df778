//! The layout of values, beneath the array family: row-major copies of strided values (what
//! a graph value must be), and the cuts a lazy view makes (the `slice` and `transpose`
//! annotations, the shapes ndarray's slicing rules give, and `s![..]` as written).

use std::sync::{Arc, LazyLock};

use bach_runtime::{oa, Annotation, BachError, Family, Meta, Value, ValueRef};
use ndarray::{ArcArray, ArrayView, ArrayViewMut, Dimension, ShapeBuilder, SliceInfoElem};

/// `v` in row-major order: a copy of a graph element type's values (the types Bach's values
/// hold); `None` for any other element type (which may not be `Clone`).
pub(crate) fn standard_layout<A, D: Dimension>(v: ArcArray<A, D>) -> Option<ArcArray<A, D>> {
    row_major(&v.view())
}

/// `v`'s elements copied in row-major order, for the graph element types (`None` for any
/// other). The copy is [`gather`], compiled once in Bach: a cell instantiates only this thin
/// shell per element and dimension type, not ndarray's iterators.
pub(crate) fn row_major<A, D: Dimension>(v: &ArrayView<'_, A, D>) -> Option<ArcArray<A, D>> {
    crate::array::graph_element::<A>()?;
    let n = v.len();
    let mut out = Vec::<A>::with_capacity(n);
    // SAFETY: `A` is f64, f32, i64 or bool (plain values, no drop), every index of `v` is
    // in its buffer, and `out` has room for its `n` elements, each written once.
    unsafe {
        gather(v.as_ptr().cast::<u8>(), std::mem::size_of::<A>(), v.shape(), v.strides(), out.as_mut_ptr().cast::<u8>());
        out.set_len(n);
    }
    Some(ArcArray::from_shape_vec(v.raw_dim(), out).expect("one element per index"))
}

/// `n` elements of `T`'s size, `step` bytes apart from `row`, to `at` one after another.
///
/// # Safety
/// As [`gather`]'s.
unsafe fn strided<T: Copy>(row: *const u8, step: isize, n: usize, at: *mut u8) {
    for k in 0..n {
        // SAFETY: the caller's promise; unaligned reads and writes ask no alignment.
        unsafe { at.cast::<T>().add(k).write_unaligned(row.offset(k as isize * step).cast::<T>().read_unaligned()) };
    }
}

/// The elements of a strided array (`shape`, `strides` in elements of `size` bytes, first
/// element at `src`) copied in row-major order to `dst`.
///
/// # Safety
/// Every index of the shape is readable at `src`, `dst` has room for all of them, and the
/// elements are plain bytes.
unsafe fn gather(src: *const u8, size: usize, shape: &[usize], strides: &[isize], dst: *mut u8) {
    if shape.contains(&0) {
        return;
    }
    let (last, outer) = match shape.split_last() {
        Some((&last, outer)) => (last, outer),
        None => {
            // SAFETY: a 0-d array holds one element (the caller's promise).
            unsafe { std::ptr::copy_nonoverlapping(src, dst, size) };
            return;
        }
    };
    let step = strides[strides.len() - 1] * size as isize;
    let mut index = vec![0usize; outer.len()];
    let mut at = dst;
    loop {
        let offset: isize = index.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum::<isize>() * size as isize;
        // SAFETY: the row starts at an index of the shape; `at` has room for `last` more.
        unsafe {
            let row = src.offset(offset);
            match size {
                _ if step == size as isize => std::ptr::copy_nonoverlapping(row, at, last * size),
                8 => strided::<u64>(row, step, last, at),
                4 => strided::<u32>(row, step, last, at),
                1 => strided::<u8>(row, step, last, at),
                _ => (0..last).for_each(|k| std::ptr::copy_nonoverlapping(row.offset(k as isize * step), at.add(k * size), size)),
            }
            at = at.add(last * size);
        }
        // The next row's index, in row-major order.
        let mut axis = outer.len();
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < outer[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

/// The transpose (a copy in standard layout when evaluated): the op of a lazy array's `t()`.
pub(crate) fn transpose_op() -> Arc<Annotation> {
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
    Arc::clone(&T)
}

/// `s![..]` as written: `0..3, .., 2, ..;2, NewAxis`.
pub(crate) fn describe(elems: &[SliceInfoElem]) -> String {
    let one = |e: &SliceInfoElem| match *e {
        SliceInfoElem::Index(i) => i.to_string(),
        SliceInfoElem::NewAxis => "NewAxis".into(),
        SliceInfoElem::Slice { start, end, step } => {
            let start = if start == 0 { String::new() } else { start.to_string() };
            let end = end.map_or(String::new(), |e| e.to_string());
            let step = if step == 1 { String::new() } else { format!(";{step}") };
            format!("{start}..{end}{step}")
        }
    };
    format!("s![{}]", elems.iter().map(one).collect::<Vec<_>>().join(", "))
}

/// The shape `elems` cut from `shape`, by ndarray's rules (`slice` on a dynamic-dimensional
/// array), or why ndarray would panic: one element per axis (`NewAxis` aside), indices and
/// slice ends within the axis (negative ones counted from its end), no zero step.
pub(crate) fn sliced_shape(shape: &[usize], elems: &[SliceInfoElem]) -> std::result::Result<Vec<usize>, String> {
    let mut out = Vec::with_capacity(elems.len());
    walk_slice(shape, elems, &mut |n| out.push(n))?;
    Ok(out)
}

/// A host view cut by `elems` as ndarray's `slice_move` cuts it (the same first element,
/// shape and strides: `do_slice`'s rules), checked and cut in one pass with nothing
/// allocated. A Runge-Kutta step slices its small matrices seven times, and ndarray's
/// generic walk plus a separate check cost twice ndarray's own slice. `None` where this
/// does not apply: a slice of an axis with a negative stride, a negative step (ndarray's
/// views then need their low-address pointer), or `elems` that do not fit the shape (the
/// caller then says why, through [`fits_slice`], and slices through ndarray).
pub(crate) fn cut_host<'a, A, D: Dimension, E: Dimension>(v: ArrayView<'a, A, D>, elems: &[SliceInfoElem]) -> Option<ArrayView<'a, A, E>> {
    let (offset, dim, strides) = cut_parts::<E>(v.shape(), v.strides(), elems)?;
    // SAFETY: `cut_parts` gives an offset and a shape and strides (non-negative) that reach
    // only elements `v` reaches: each index is below its axis length, each slice within it.
    Some(unsafe { ArrayView::from_shape_ptr(dim.strides(strides), v.as_ptr().offset(offset)) })
}

/// [`cut_host`] of a mutable view; `Err(v)` where it does not apply.
pub(crate) fn cut_host_mut<'a, A, D: Dimension, E: Dimension>(
    mut v: ArrayViewMut<'a, A, D>,
    elems: &[SliceInfoElem],
) -> std::result::Result<ArrayViewMut<'a, A, E>, ArrayViewMut<'a, A, D>> {
    let Some((offset, dim, strides)) = cut_parts::<E>(v.shape(), v.strides(), elems) else { return Err(v) };
    // SAFETY: as `cut_host`'s; `v`'s elements are borrowed mutably for `'a` and `v` is
    // consumed, so the cut is their one writer.
    Ok(unsafe { ArrayViewMut::from_shape_ptr(dim.strides(strides), v.as_mut_ptr().offset(offset)) })
}

/// The offset of the first element, the shape and the strides of `shape`/`strides` cut by
/// `elems` ([`cut_host`]).
#[inline]
fn cut_parts<E: Dimension>(shape: &[usize], strides: &[isize], elems: &[SliceInfoElem]) -> Option<(isize, E, E)> {
    // (A static dimension type's axes are known: no count.)
    let out_ndim = E::NDIM.unwrap_or_else(|| elems.iter().filter(|e| !matches!(e, SliceInfoElem::Index(_))).count());
    let (mut dim, mut stride) = (E::zeros(out_ndim), E::zeros(out_ndim));
    let (dims, steps) = (dim.slice_mut(), stride.slice_mut());
    let absolute = |len: usize, i: isize| if i >= 0 { Some(i as usize) } else { len.checked_sub(i.unsigned_abs()) };
    let (mut axis, mut out, mut offset) = (0, 0, 0isize);
    for e in elems {
        match *e {
            SliceInfoElem::NewAxis => {
                *dims.get_mut(out)? = 1;
                out += 1;
            }
            SliceInfoElem::Index(i) => {
                let (&len, &s) = (shape.get(axis)?, strides.get(axis)?);
                let at = absolute(len, i).filter(|&at| at < len)?;
                offset += at as isize * s;
                axis += 1;
            }
            SliceInfoElem::Slice { start, end, step } => {
                let (&len, &s) = (shape.get(axis)?, strides.get(axis)?);
                if step <= 0 || s < 0 {
                    return None;
                }
                let from = absolute(len, start)?;
                let to = absolute(len, end.unwrap_or(len as isize))?.max(from);
                if to > len {
                    return None;
                }
                let m = to - from;
                if m > 0 {
                    offset += from as isize * s;
                }
                let n = if step == 1 { m } else { m.div_ceil(step as usize) };
                *dims.get_mut(out)? = n;
                *steps.get_mut(out)? = if n <= 1 { 0 } else { (s * step) as usize };
                out += 1;
                axis += 1;
            }
        }
    }
    (axis == shape.len() && out == out_ndim).then_some((offset, dim, stride))
}

/// [`sliced_shape`]'s check alone (nothing allocated: the small-array path slices in loops).
#[inline]
pub(crate) fn fits_slice(shape: &[usize], elems: &[SliceInfoElem]) -> std::result::Result<(), String> {
    if fits(shape, elems) {
        return Ok(());
    }
    walk_slice(shape, elems, &mut |_| {})
}

/// Whether `elems` fit `shape` by [`walk_slice`]'s rules, with no reason: the common case,
/// checked on every slice of a loop (a slice of a 3-vector is a few nanoseconds in ndarray),
/// so no closure is called and no message is made.
#[inline]
fn fits(shape: &[usize], elems: &[SliceInfoElem]) -> bool {
    // ndarray's abs_index, refusing what would go past the start.
    let absolute = |len: usize, i: isize| if i >= 0 { Some(i as usize) } else { len.checked_sub(i.unsigned_abs()) };
    let mut axis = 0;
    for e in elems {
        match *e {
            SliceInfoElem::NewAxis => {}
            SliceInfoElem::Index(i) => {
                let Some(&len) = shape.get(axis) else { return false };
                if absolute(len, i).is_none_or(|at| at >= len) {
                    return false;
                }
                axis += 1;
            }
            SliceInfoElem::Slice { start, end, step } => {
                let Some(&len) = shape.get(axis) else { return false };
                let (Some(from), Some(to)) = (absolute(len, start), absolute(len, end.unwrap_or(len as isize))) else { return false };
                if from > len || to.max(from) > len || step == 0 {
                    return false;
                }
                axis += 1;
            }
        }
    }
    axis == shape.len()
}

/// Each axis length of the cut, to `out`, or why the cut does not fit (see [`sliced_shape`]).
fn walk_slice(shape: &[usize], elems: &[SliceInfoElem], out: &mut dyn FnMut(usize)) -> std::result::Result<(), String> {
    let axes = elems.iter().filter(|e| !e.is_new_axis()).count();
    if axes != shape.len() {
        return Err(format!("{axes} axes sliced, the array has {}", shape.len()));
    }
    // ndarray's abs_index, refusing what would go past the start.
    let absolute = |len: usize, i: isize, what: &str| -> std::result::Result<usize, String> {
        if i >= 0 {
            Ok(i as usize)
        } else if i.unsigned_abs() <= len {
            Ok(len - i.unsigned_abs())
        } else {
            Err(format!("{what} {i} is before the start of an axis of length {len}"))
        }
    };
    let mut axis = 0;
    for e in elems {
        match *e {
            SliceInfoElem::NewAxis => out(1),
            SliceInfoElem::Index(i) => {
                let len = shape[axis];
                let at = absolute(len, i, "index")?;
                if at >= len {
                    return Err(format!("index {i} is past the end of axis {axis} of length {len}"));
                }
                axis += 1;
            }
            SliceInfoElem::Slice { start, end, step } => {
                let len = shape[axis];
                let from = absolute(len, start, "slice start")?;
                let to = absolute(len, end.unwrap_or(len as isize), "slice end")?.max(from);
                if from > len || to > len {
                    return Err(format!("slice {}..{} is past the end of axis {axis} of length {len}", start, end.map_or(String::new(), |e| e.to_string())));
                }
                if step == 0 {
                    return Err("a slice's step must not be zero".into());
                }
                // (A unit step, the common case, needs no division: a slice of a small array
                // is checked on every call of a loop.)
                out(if step == 1 { to - from } else { (to - from).div_ceil(step.unsigned_abs()) });
                axis += 1;
            }
        }
    }
    Ok(())
}

pub(crate) fn slice_op(elems: Vec<SliceInfoElem>, shape: Vec<usize>) -> Arc<Annotation> {
    oa("slice")
        .family(Family::Layout)
        .unsplittable()
        .shape(move |m: &[Meta]| Ok(Meta::new(m[0].dtype, shape.clone())))
        .cpu(move |_, args| {
            let e = &elems[..];
            Ok(match &args[0] {
                ValueRef::F64(a) => Value::from(a.slice(e).to_owned()),
                ValueRef::F32(a) => Value::from(a.slice(e).to_owned()),
                ValueRef::I64(a) => Value::from(a.slice(e).to_owned()),
                ValueRef::Bool(a) => Value::from(a.slice(e).to_owned()),
                ValueRef::Opaque(_) | ValueRef::Device(_) => return Err(BachError::dtype("slice", "host array", "opaque or device value")),
            })
        })
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick check says what the check with reasons says, for every element kind,
    /// negative and past-the-end indices and ends, zero and negative steps, and `NewAxis`.
    #[test]
    fn the_quick_check_agrees_with_the_reasons() {
        let at: [isize; 8] = [-5, -4, -3, -1, 0, 1, 3, 5];
        let mut kinds = vec![SliceInfoElem::NewAxis];
        kinds.extend(at.iter().map(|&i| SliceInfoElem::Index(i)));
        for &start in &at {
            for end in [None, Some(-4), Some(-1), Some(0), Some(2), Some(4), Some(6)] {
                for step in [1, 2, -1, 0] {
                    kinds.push(SliceInfoElem::Slice { start, end, step });
                }
            }
        }
        let (mut fit, mut all) = (0, 0);
        for shape in [vec![], vec![0], vec![3], vec![4], vec![2, 3], vec![3, 1], vec![4, 4]] {
            let mut check = |elems: &[SliceInfoElem]| {
                let ok = walk_slice(&shape, elems, &mut |_| {}).is_ok();
                assert_eq!(fits(&shape, elems), ok, "{shape:?} {elems:?}");
                assert_eq!(fits_slice(&shape, elems).is_ok(), ok);
                fit += ok as usize;
                all += 1;
            };
            check(&[]);
            for a in &kinds {
                check(&[*a]);
                for b in &kinds {
                    check(&[*a, *b]);
                }
            }
        }
        // Both answers occur, many times each.
        assert!(fit > 1000 && all - fit > 1000, "{fit} of {all}");
    }

    /// The one-pass cut gives ndarray's view (first element, shape, strides) wherever the
    /// slice fits and no step or sliced stride is negative, on views of every layout, and
    /// declines (for ndarray to cut, or to say why not) everywhere else.
    #[test]
    fn the_one_pass_cut_is_ndarrays_slice() {
        let at: [isize; 6] = [-4, -1, 0, 1, 2, 4];
        let mut kinds = vec![SliceInfoElem::NewAxis];
        kinds.extend(at.iter().map(|&i| SliceInfoElem::Index(i)));
        for &start in &at {
            for end in [None, Some(-1), Some(0), Some(2), Some(5)] {
                for step in [1, 2, 3, -1, 0] {
                    kinds.push(SliceInfoElem::Slice { start, end, step });
                }
            }
        }
        let base = ndarray::Array::from_iter(0..60).into_shape_with_order((3, 4, 5)).unwrap();
        let mut writable = base.clone();
        // Views of every layout: a matrix, a transposed one, stepped and indexed, reversed
        // (a negative stride), a row, an empty one.
        fn layout<S: ndarray::RawData>(k: usize, a: ndarray::ArrayBase<S, ndarray::Ix3>) -> ndarray::ArrayBase<S, ndarray::IxDyn> {
            use ndarray::{s, Axis};
            match k {
                0 => a.index_axis_move(Axis(0), 1).into_dyn(),
                1 => a.index_axis_move(Axis(2), 2).reversed_axes().into_dyn(),
                2 => a.slice_move(s![.., 1..3, ..;2]).index_axis_move(Axis(2), 1).into_dyn(),
                3 => a.slice_move(s![.., ..;-1, 0]).into_dyn(),
                4 => a.slice_move(s![0, 0, ..]).into_dyn(),
                _ => a.slice_move(s![0, 0..0, ..]).into_dyn(),
            }
        }
        let (mut cut, mut declined) = (0, 0);
        for k in 0..6 {
            let v = &layout(k, base.view());
            let mut check = |elems: &[SliceInfoElem]| {
                let fits = fits_slice(v.shape(), elems).is_ok();
                let ours = cut_host::<_, _, ndarray::IxDyn>(v.view(), elems);
                let plain = elems.iter().all(|e| !matches!(e, SliceInfoElem::Slice { step, .. } if *step < 0));
                match ours {
                    Some(c) => {
                        let nd = v.view().slice_move(elems);
                        assert_eq!((c.shape(), c.strides(), c.as_ptr()), (nd.shape(), nd.strides(), nd.as_ptr()), "{:?} {:?} {elems:?}", v.shape(), v.strides());
                        let want = layout(k, writable.view_mut()).slice_move(elems).as_ptr();
                        let ours = cut_host_mut::<_, _, ndarray::IxDyn>(layout(k, writable.view_mut()), elems).expect("the same cut of a mutable view");
                        assert_eq!((ours.shape(), ours.strides(), ours.as_ptr()), (nd.shape(), nd.strides(), want));
                        cut += 1;
                    }
                    None => {
                        // Declined only where it does not fit, or a step or a stride is
                        // negative.
                        let negative_axis = v.strides().iter().any(|&s| s < 0);
                        assert!(!fits || !plain || negative_axis, "{:?} {:?} {elems:?}", v.shape(), v.strides());
                        declined += 1;
                    }
                }
            };
            for a in &kinds {
                check(&[*a]);
                for b in &kinds {
                    check(&[*a, *b]);
                    for c in [SliceInfoElem::NewAxis, SliceInfoElem::Index(0), SliceInfoElem::from(..)] {
                        check(&[*a, *b, c]);
                        check(&[*a, c, *b]);
                    }
                }
            }
        }
        assert!(cut > 1000 && declined > 1000, "{cut} cut, {declined} declined");
        // Static dimensions: a row of a matrix, a block, and a new axis.
        let m = ndarray::Array2::from_shape_fn((4, 2), |(i, j)| (10 * i + j) as f64);
        let row: ArrayView<'_, f64, ndarray::Ix1> = cut_host(m.view(), ndarray::s![-1, ..].as_ref()).unwrap();
        assert_eq!(row, m.row(3));
        let block: ArrayView<'_, f64, ndarray::Ix2> = cut_host(m.t(), ndarray::s![.., ..-1].as_ref()).unwrap();
        assert_eq!(block, m.slice(ndarray::s![..-1, ..]).t());
        assert!(cut_host::<_, _, ndarray::Ix2>(m.view(), ndarray::s![.., 0].as_ref()).is_none(), "a cut of another dimension declines");
    }
}
