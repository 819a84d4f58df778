// source: finalfusion/finalfrontier src/hogwild.rs @fb2d6723 (Apache-2.0 OR BlueOak-1.0.0)
{
    use std::cell::UnsafeCell;
    use std::ops::{Deref, DerefMut};
    use std::sync::Arc;

    use ndarray::{Array, ArrayView, ArrayViewMut, Axis, Dimension, Ix, Ix2, RemoveAxis};
    use ndarray::{Array2, Array3, Ix3};

    #[derive(Clone)]
    pub struct HogwildArray<A, D>(Arc<UnsafeCell<Array<A, D>>>);

    impl<A, D> HogwildArray<A, D> {
        #[inline]
        fn as_mut(&mut self) -> &mut Array<A, D> {
            let ptr = self.0.as_ref().get();
            unsafe { &mut *ptr }
        }

        #[inline]
        fn as_ref(&self) -> &Array<A, D> {
            let ptr = self.0.as_ref().get();
            unsafe { &*ptr }
        }

        pub fn into_inner(self) -> Arc<UnsafeCell<Array<A, D>>> {
            self.0
        }
    }

    impl<A, D> HogwildArray<A, D>
    where
        D: Dimension + RemoveAxis,
    {
        #[inline]
        pub fn subview(&self, axis: Axis, index: Ix) -> ArrayView<A, D::Smaller> {
            self.as_ref().index_axis(axis, index)
        }

        #[inline]
        pub fn subview_mut(&mut self, axis: Axis, index: Ix) -> ArrayViewMut<A, D::Smaller> {
            self.as_mut().index_axis_mut(axis, index)
        }
    }

    impl<A, D> HogwildArray<A, D>
    where
        D: Dimension,
    {
        #[inline]
        pub fn view(&self) -> ArrayView<A, D> {
            self.as_ref().view()
        }
    }

    impl<A, D> From<Array<A, D>> for HogwildArray<A, D> {
        fn from(a: Array<A, D>) -> Self {
            HogwildArray(Arc::new(UnsafeCell::new(a)))
        }
    }

    unsafe impl<A, D> Send for HogwildArray<A, D> {}

    unsafe impl<A, D> Sync for HogwildArray<A, D> {}

    pub type HogwildArray2<A> = HogwildArray<A, Ix2>;

    #[derive(Clone)]
    pub struct Hogwild<T>(Arc<UnsafeCell<T>>);

    impl<T> Default for Hogwild<T>
    where
        T: Default,
    {
        fn default() -> Self {
            Hogwild(Arc::new(UnsafeCell::new(T::default())))
        }
    }

    impl<T> Deref for Hogwild<T> {
        type Target = T;

        fn deref(&self) -> &Self::Target {
            let ptr = self.0.as_ref().get();
            unsafe { &*ptr }
        }
    }

    impl<T> DerefMut for Hogwild<T> {
        fn deref_mut(&mut self) -> &mut T {
            let ptr = self.0.as_ref().get();
            unsafe { &mut *ptr }
        }
    }

    unsafe impl<T> Send for Hogwild<T> {}

    unsafe impl<T> Sync for Hogwild<T> {}

    // four worker threads update disjoint slabs of a shared 3-d array (Hogwild!-style)
    let shared: HogwildArray<f32, Ix3> = Array3::<f32>::zeros((4, 3, 5)).into();
    let counter: Hogwild<usize> = Hogwild::default();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let mut arr = shared.clone();
            thread_spawn(move || {
                let mut slab = arr.subview_mut(Axis(0), t);
                for ((i, j), v) in slab.indexed_iter_mut() {
                    *v = (t * 100 + i * 10 + j) as f32;
                }
                slab.row_mut(1).mapv_inplace(|v| -v);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut c = counter.clone();
    *c += 4;
    println!("counter seen through the other handle = {}", *counter);
    println!("slab 2 =\n{}", shared.subview(Axis(0), 2));
    println!("sum = {}, view shape {:?}", shared.view().sum(), shared.view().shape());
    let matrix: HogwildArray2<f64> = Array2::from_elem((2, 3), 1.5).into();
    let mut m2 = matrix.clone();
    m2.subview_mut(Axis(1), 2).fill(-1.0);
    println!("2-d shared update =\n{}", matrix.view());
    let inner = matrix.into_inner();
    println!("strong references to the matrix: {}", Arc::strong_count(&inner));

    fn thread_spawn<F: FnOnce() + Send + 'static>(f: F) -> std::thread::JoinHandle<()> {
        std::thread::spawn(f)
    }
}
