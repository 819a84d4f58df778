//! Recycled buffers for small results (the operators' at-once path, `elementwise.rs`).
//!
//! ndarray code over small arrays (a 3-vector Runge-Kutta step) makes and drops an array per
//! operator. An ndarray array is one allocation; a Bach array's value is ndarray's shared
//! array (`ArcArray`: the elements and a counted header, two allocations), which doubled the
//! allocator's share of a small op. So the float types keep, per thread, a few spent values
//! of each small length: an operator's small result takes one and writes its elements into
//! it, and the handle that held it gives it back when it is dropped, when no one else shares
//! it (`ArcArray::is_unique`: no other handle, node or ndarray clone) and no lazy view of it
//! is kept. The PyTorch and CuPy caching allocators do the same for device memory.
//!
//! Bounded: lengths 1 to [`MAX_LEN`], at most [`KEEP`] values each (about 260 KB of f64 at
//! most per thread); everything else is allocated and freed as before. Compiled once per
//! float type, in Bach (`Pooled`): a cell compiles only the calls.

use ndarray::{ArcArray, Dimension, Ix1};

/// The longest value kept.
pub(crate) const MAX_LEN: usize = 64;
/// The most values kept of one length.
pub(crate) const KEEP: usize = 8;

/// A float type whose small values are recycled (f64, f32; a supertrait of
/// [`crate::real::Real`]): its thread's spent values, and the way back to them, compiled once in
/// Bach for each.
#[doc(hidden)]
pub trait Pooled: Copy + 'static {
    /// This thread's spent small values of this type.
    fn buffers() -> &'static std::thread::LocalKey<std::cell::RefCell<Pool<Self>>>;
    /// A spent value back to [`Pooled::buffers`] when no one else holds it (taken from
    /// `slot` then; else left there, to be dropped).
    fn give_back(slot: &mut Option<ArcArray<Self, Ix1>>);
}
macro_rules! pooled {
    ($($t:ty),*) => {$(
        impl Pooled for $t {
            fn buffers() -> &'static std::thread::LocalKey<std::cell::RefCell<Pool<$t>>> {
                thread_local!(static BUFFERS: std::cell::RefCell<Pool<$t>> = const { std::cell::RefCell::new(Pool::new()) });
                &BUFFERS
            }
            fn give_back(slot: &mut Option<ArcArray<$t, Ix1>>) {
                keep(slot)
            }
        }
    )*};
}
pooled!(f64, f32);

/// One thread's spent values of one float type, by length.
#[doc(hidden)]
pub struct Pool<A> {
    by_len: [Vec<ArcArray<A, Ix1>>; MAX_LEN + 1],
}

impl<A> Pool<A> {
    pub(crate) const fn new() -> Self {
        Pool { by_len: [const { Vec::new() }; MAX_LEN + 1] }
    }
}

/// A value of `len` elements that no one else holds, to be written whole (through
/// [`elements`]); `None` when none is kept (the caller allocates).
pub(crate) fn take<A: Pooled>(len: usize) -> Option<ArcArray<A, Ix1>> {
    if len == 0 || len > MAX_LEN {
        return None;
    }
    A::buffers().try_with(|p| p.borrow_mut().by_len[len].pop()).ok().flatten()
}

/// [`take`] in code generic over its element type: `None` also when `A` is not pooled.
pub(crate) fn take_as<A>(len: usize) -> Option<ArcArray<A, Ix1>> {
    use crate::array::{same_type, type_id};
    crate::array::f64_or_f32::<A, _>(
        || (type_id::<A>() == type_id::<f64>()).then(|| take::<f64>(len).map(same_type)).flatten(),
        || (type_id::<A>() == type_id::<f32>()).then(|| take::<f32>(len).map(same_type)).flatten(),
    )
}

/// [`give_back`] for `A`, when `A` is pooled (f64, f32), for code generic over its element
/// type.
pub(crate) fn give_back_of<A, D: Dimension>() -> Option<crate::array::GiveBack<A, D>> {
    use crate::array::{same_type, type_id, GiveBack};
    crate::array::f64_or_f32::<A, _>(
        || (type_id::<A>() == type_id::<f64>()).then(|| same_type::<GiveBack<f64, D>, GiveBack<A, D>>(give_back::<f64, D>)),
        || (type_id::<A>() == type_id::<f32>()).then(|| same_type::<GiveBack<f32, D>, GiveBack<A, D>>(give_back::<f32, D>)),
    )
}

/// The elements of a value [`take`] gave, or of a handle's value it checked (in standard
/// layout, `is_unique`: `Handle::small_unique_mut`), to write (no second uniqueness check:
/// ndarray's `as_slice_mut` pays two atomic operations for it, a third of a small op).
pub(crate) fn elements<A, D: Dimension>(v: &mut ArcArray<A, D>) -> &mut [A] {
    debug_assert!(v.is_standard_layout());
    // SAFETY: the value is contiguous in row-major order from `as_ptr` and held by no one
    // else: a kept value is 1-d with stride 1, `keep` checked `is_unique`, and since then
    // only this thread's pool held it, then the caller, who holds it by `&mut`; a handle's
    // value was checked by its caller, who holds it by `&mut`. Its pointer came from
    // ndarray's own (writable) allocation.
    unsafe { std::slice::from_raw_parts_mut(v.as_ptr() as *mut A, v.len()) }
}

/// The value in `slot` back to this thread's values when it is 1-d, small and contiguous
/// and no one else holds it; else it is left in `slot`, to be dropped. The generic part is
/// this shell only, and the value is not moved until it is kept (moving it through two
/// calls cost more than the pool saved).
pub(crate) fn give_back<A: Pooled, D: Dimension>(slot: &mut Option<ArcArray<A, D>>) {
    if crate::array::type_id::<D>() == crate::array::type_id::<Ix1>() {
        A::give_back(crate::array::same_type::<&mut Option<ArcArray<A, D>>, &mut Option<ArcArray<A, Ix1>>>(slot));
    } else if slot.as_ref().is_some_and(|v| v.ndim() == 1) {
        // A 1-d value of dynamic dimensions (Bach's own `Array<f64>`).
        A::give_back(&mut slot.take().and_then(|v| v.into_dimensionality::<Ix1>().ok()));
    }
}

/// [`give_back`]'s work (compiled once per float type: `Pooled::give_back`).
pub(crate) fn keep<A: Pooled>(slot: &mut Option<ArcArray<A, Ix1>>) {
    let Some(v) = slot.as_ref() else { return };
    let len = v.len();
    if len == 0 || len > MAX_LEN || (len > 1 && v.strides()[0] != 1) || !v.is_unique() {
        return;
    }
    // Left in `slot` (dropped by its owner) when the length's values are full, or when the
    // thread's values are gone (the thread is ending).
    let _ = A::buffers().try_with(|p| {
        let kept = &mut p.borrow_mut().by_len[len];
        if kept.len() < KEEP {
            kept.reserve(1);
            // Moved from `slot` into the pool's memory directly: through a temporary on the
            // stack (`slot.take()`), reading the value back stalled on the stores just made,
            // a third of the cost of giving back.
            // SAFETY: `slot` holds a value (checked above); it is copied once into the
            // reserved room past `kept`'s length, which then counts it, and `slot` is
            // overwritten with `None` without dropping it: one owner throughout.
            unsafe {
                let v: *const ArcArray<A, Ix1> = slot.as_ref().expect("checked above");
                std::ptr::copy_nonoverlapping(v, kept.as_mut_ptr().add(kept.len()), 1);
                kept.set_len(kept.len() + 1);
                std::ptr::write(slot, None);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_given_back_is_taken_again_and_a_shared_one_is_not() {
        let a: ArcArray<f64, Ix1> = ndarray::ArcArray::from_vec(vec![1.0; 6]);
        let ptr = a.as_ptr();
        let shared = a.clone();
        keep(&mut Some(a));
        // Shared: not kept.
        assert!(take::<f64>(6).is_none_or(|t| t.as_ptr() != ptr));
        keep(&mut Some(shared));
        let t = take::<f64>(6).expect("kept");
        assert_eq!(t.as_ptr(), ptr);
        assert_eq!(t.shape(), &[6]);
        assert!(t.is_unique());
        let mut t = t;
        elements(&mut t)[5] = 2.0;
        assert_eq!(t[5], 2.0);
        assert!(take::<f64>(6).is_none());
        // Too long, 2-d, or strided: not kept.
        keep::<f64>(&mut Some(ndarray::ArcArray::zeros(MAX_LEN + 1)));
        assert!(take::<f64>(MAX_LEN + 1).is_none());
        give_back(&mut Some(ndarray::ArcArray::<f64, _>::zeros((3, 2))));
        assert!(take::<f64>(6).is_none());
        keep(&mut Some(ndarray::ArcArray::<f64, _>::zeros(12).slice_move(ndarray::s![..;2])));
        assert!(take::<f64>(6).is_none());
        // At most KEEP of one length.
        for _ in 0..KEEP + 3 {
            give_back(&mut Some(ndarray::ArcArray::<f32, _>::zeros(5).into_dyn()));
        }
        let mut n = 0;
        while take::<f32>(5).is_some() {
            n += 1;
        }
        assert_eq!(n, KEEP);
    }
}
