// source: rust-cv/ndarray-vision src/processing/filter.rs @de424b53 (MIT OR Apache-2.0)
{
    use ndarray::prelude::*;
    use ndarray::{Data, IntoDimension, OwnedRepr, Zip};
    // changed: ndarray_stats' Quantile1dExt::quantile_mut (with noisy_float's n64 and the Linear
    // interpolation) replaced by a small local equivalent; the num_traits bound Num replaced by a
    // small local trait over ndarray's LinalgScalar (implemented for u8 and i32, with the midpoint
    // the Linear interpolation computes), FromPrimitive/ToPrimitive by empty local traits; the
    // impl for the crate's Image type dropped
    pub trait Num: ndarray::LinalgScalar + Ord {
        fn lerp_half(a: Self, b: Self) -> Self;
    }
    impl Num for u8 {
        fn lerp_half(a: Self, b: Self) -> Self { ((a as f64 + b as f64) / 2.0) as u8 }
    }
    impl Num for i32 {
        fn lerp_half(a: Self, b: Self) -> Self { ((a as f64 + b as f64) / 2.0) as i32 }
    }
    pub trait FromPrimitive {}
    impl<T> FromPrimitive for T {}
    pub trait ToPrimitive {}
    impl<T> ToPrimitive for T {}
    pub struct Linear {}
    fn n64(x: f64) -> f64 {
        x
    }
    pub trait Quantile1dExt<T> {
        fn quantile_mut(&mut self, q: f64, i: &Linear) -> Result<T, ()>;
    }
    impl<T: Num> Quantile1dExt<T> for Array1<T> {
        fn quantile_mut(&mut self, q: f64, _i: &Linear) -> Result<T, ()> {
            if self.is_empty() {
                return Err(());
            }
            let mut v = self.to_vec();
            v.sort();
            let pos = q * (v.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            Ok(if lo == hi { v[lo] } else { T::lerp_half(v[lo], v[hi]) })
        }
    }

    /// Median filter, given a region to move over the image, each pixel is given
    /// the median value of itself and it's neighbours
    pub trait MedianFilterExt {
        type Output;
        /// Run the median filter given the region. Median is assumed to be calculated
        /// independently for each channel.
        fn median_filter<E>(&self, region: E) -> Self::Output
        where
            E: IntoDimension<Dim = Ix2>;
    }

    impl<T, U> MedianFilterExt for ArrayBase<U, Ix3>
    where
        U: Data<Elem = T>,
        T: Copy + Clone + FromPrimitive + ToPrimitive + Num + Ord,
    {
        type Output = ArrayBase<OwnedRepr<T>, Ix3>;

        fn median_filter<E>(&self, region: E) -> Self::Output
        where
            E: IntoDimension<Dim = Ix2>,
        {
            let shape = region.into_dimension();
            let r_offset = shape[0] / 2;
            let c_offset = shape[1] / 2;
            let region = (shape[0], shape[1], 1);
            let mut result = Array3::<T>::zeros(self.dim());
            Zip::indexed(self.windows(region)).for_each(|(i, j, k), window| {
                let mut flat_window = Array::from_iter(window.iter()).mapv(|x| *x);
                if let Ok(v) = flat_window.quantile_mut(n64(0.5f64), &Linear {}) {
                    if let Some(r) = result.get_mut([i + r_offset, j + c_offset, k]) {
                        *r = v;
                    }
                }
            });
            result
        }
    }


    // a 5 x 6 RGB image with salt-and-pepper noise in the red channel
    let mut pixels = Array3::<u8>::from_shape_fn((5, 6, 3), |(r, c, ch)| (r * 20 + c * 10 + ch * 5) as u8);
    pixels[[1, 2, 0]] = 255;
    pixels[[3, 4, 0]] = 0;
    pixels[[2, 2, 0]] = 250;
    let filtered = pixels.median_filter((3, 3));
    println!("red before =\n{}", pixels.index_axis(Axis(2), 0));
    println!("red after 3x3 median =\n{}", filtered.index_axis(Axis(2), 0));
    println!("blue after 3x3 median =\n{}", filtered.index_axis(Axis(2), 2));
    let row = Array3::from_shape_vec((7, 1, 1), vec![1i32, 2, 3, 4, 5, 6, 7]).unwrap();
    println!("7x1 column, 3x1 median = {:?}", row.median_filter((3, 1)).iter().collect::<Vec<_>>());
    println!("2x2 median of a view, channel 1 =\n{}", pixels.slice(s![.., 1.., ..]).median_filter((2, 2)).index_axis(Axis(2), 1));
}
