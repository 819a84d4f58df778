// source: pykeio/ort src/tensor/ndarray.rs @95d520a6 (MIT OR Apache-2.0)
{
    use ndarray::{arr1, arr2, arr3, Axis};
    // changed: the #[cfg(feature = "std")] attributes dropped

    pub trait ArrayExtensions<S, T, D> {
        /// Calculate the [softmax](https://en.wikipedia.org/wiki/Softmax_function) of the tensor along a given axis.
        fn softmax(&self, axis: ndarray::Axis) -> ndarray::Array<T, D>
        where
            D: ndarray::RemoveAxis,
            S: ndarray::RawData + ndarray::Data + ndarray::RawData<Elem = T>,
            <S as ndarray::RawData>::Elem: Clone,
            T: ndarray::NdFloat + core::ops::SubAssign + core::ops::DivAssign;
    }

    impl<S, T, D> ArrayExtensions<S, T, D> for ndarray::ArrayBase<S, D>
    where
        D: ndarray::RemoveAxis,
        S: ndarray::RawData + ndarray::Data + ndarray::RawData<Elem = T>,
        <S as ndarray::RawData>::Elem: Clone,
        T: ndarray::NdFloat + core::ops::SubAssign + core::ops::DivAssign,
    {
        fn softmax(&self, axis: ndarray::Axis) -> ndarray::Array<T, D> {
            let mut new_array: ndarray::Array<T, D> = self.to_owned();
            // FIXME: Change to non-overflowing formula
            // e = np.exp(A - np.sum(A, axis=1, keepdims=True))
            // np.exp(a) / np.sum(np.exp(a))
            new_array.map_inplace(|v| *v = v.exp());
            let sum = new_array.sum_axis(axis).insert_axis(axis);
            new_array /= &sum;

            new_array
        }
    }

    let array = arr1(&[1.0_f32, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0]);
    println!("1-d: {:.6}", array.softmax(Axis(0)));
    let logits = arr2(&[[1.0_f64, 2.0, 3.0], [0.5, 0.5, 4.0], [-1.0, 0.0, 1.0]]);
    println!("rows:\n{:.6}", logits.softmax(Axis(1)));
    println!("columns of a transposed view:\n{:.6}", logits.t().softmax(Axis(0)));
    let scores = arr3(&[
        [[1.0_f32, 2.0, 3.0, 4.0], [0.0, 0.0, 1.0, 1.0]],
        [[4.0, 3.0, 2.0, 1.0], [-2.0, 2.0, -2.0, 2.0]],
    ]);
    let s = scores.softmax(Axis(2));
    println!("3-d over the last axis:\n{:.5}", s);
    println!("sums: {:.5}", s.sum_axis(Axis(2)));
    println!("3-d over axis 0:\n{:.5}", scores.softmax(Axis(0)));
}
