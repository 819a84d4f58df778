// source: rust-cv/ndarray-vision src/processing/threshold.rs @de424b53 (MIT OR Apache-2.0)
{
    use ndarray::{prelude::*, Data};
    // changed: ndarray_stats' histogram (Grid, Bins, Edges, HistogramExt) and QuantileExt::max
    // replaced by small local equivalents; the num_traits traits (Num, NumAssignOps,
    // ToPrimitive, FromPrimitive) by small local ones; the crate's Error type is a local enum;
    // the Mean thresholding and the impls for the crate's Image type dropped
    pub trait ToPrimitive {
        fn to_f64(&self) -> Option<f64>;
        fn to_u8(&self) -> Option<u8> {
            self.to_f64().and_then(|x| if x >= 0.0 && x < 256.0 { Some(x as u8) } else { None })
        }
    }
    impl ToPrimitive for u8 { fn to_f64(&self) -> Option<f64> { Some(*self as f64) } }
    impl ToPrimitive for u16 { fn to_f64(&self) -> Option<f64> { Some(*self as f64) } }
    impl ToPrimitive for usize { fn to_f64(&self) -> Option<f64> { Some(*self as f64) } }
    impl ToPrimitive for f64 { fn to_f64(&self) -> Option<f64> { Some(*self) } }
    pub trait FromPrimitive {}
    impl FromPrimitive for u8 {}
    impl FromPrimitive for u16 {}
    pub trait Num: Copy + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {}
    impl<T: Copy + std::ops::Add<Output = T> + std::ops::Mul<Output = T>> Num for T {}
    pub trait NumAssignOps: Sized + std::ops::AddAssign {}
    impl<T: std::ops::AddAssign> NumAssignOps for T {}
    pub trait QuantileExt<A> {
        fn max(&self) -> Result<&A, ()>;
    }
    impl<A: Ord, S: Data<Elem = A>, D: Dimension> QuantileExt<A> for ArrayBase<S, D> {
        fn max(&self) -> Result<&A, ()> {
            self.iter().max().ok_or(())
        }
    }
    pub struct Edges(Vec<u8>);
    impl From<Vec<u8>> for Edges {
        fn from(mut v: Vec<u8>) -> Self {
            v.sort();
            v.dedup();
            Edges(v)
        }
    }
    pub struct Bins(Edges);
    impl Bins {
        pub fn new(edges: Edges) -> Self {
            Bins(edges)
        }
    }
    pub struct Grid(Vec<Bins>);
    impl From<Vec<Bins>> for Grid {
        fn from(bins: Vec<Bins>) -> Self {
            Grid(bins)
        }
    }
    pub struct Histogram(ArrayD<usize>);
    impl Histogram {
        pub fn counts(&self) -> ArrayViewD<'_, usize> {
            self.0.view()
        }
    }
    pub trait HistogramExt {
        fn histogram(&self, grid: Grid) -> Histogram;
    }
    impl<S: Data<Elem = u8>> HistogramExt for ArrayBase<S, Ix2> {
        fn histogram(&self, grid: Grid) -> Histogram {
            let edges = &(grid.0[0].0).0;
            let mut counts = ArrayD::zeros(IxDyn(&[edges.len() - 1]));
            for obs in self.rows() {
                let x = obs[0];
                if let Some(i) = edges.windows(2).position(|w| w[0] <= x && x < w[1]) {
                    counts[[i]] += 1;
                }
            }
            Histogram(counts)
        }
    }
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum Error {
        ChannelDimensionMismatch,
        InvalidParameter,
    }

    /// Runs the Otsu thresholding algorithm on a type `T`.
    pub trait ThresholdOtsuExt<T> {
        /// The Otsu thresholding output is a binary image.
        type Output;

        /// Run the Otsu threshold algorithm.
        ///
        /// Due to Otsu threshold algorithm specifying a greyscale image, all
        /// current implementations assume a single channel image; otherwise, an
        /// error is returned.
        ///
        /// # Errors
        ///
        /// Returns a `ChannelDimensionMismatch` error if more than one channel
        /// exists.
        fn threshold_otsu(&self) -> Result<Self::Output, Error>;
    }

    /// Applies an upper and lower limit threshold on a type `T`.
    pub trait ThresholdApplyExt<T> {
        /// The output is a binary image.
        type Output;

        /// Apply the threshold with the given limits.
        ///
        /// An image is segmented into background and foreground
        /// elements, where any pixel value within the limits are considered
        /// foreground elements and any pixels with a value outside the limits are
        /// considered part of the background. The upper and lower limits are
        /// inclusive.
        ///
        /// If only a lower limit threshold is to be applied, the `f64::INFINITY`
        /// value can be used for the upper limit.
        ///
        /// # Errors
        ///
        /// The current implementation assumes a single channel image, i.e.,
        /// greyscale image. Thus, if more than one channel is present, then
        /// a `ChannelDimensionMismatch` error occurs.
        ///
        /// An `InvalidParameter` error occurs if the `lower` limit is greater than
        /// the `upper` limit.
        fn threshold_apply(&self, lower: f64, upper: f64) -> Result<Self::Output, Error>;
    }

    impl<T, U> ThresholdOtsuExt<T> for ArrayBase<U, Ix3>
    where
        U: Data<Elem = T>,
        T: Copy + Clone + Ord + Num + NumAssignOps + ToPrimitive + FromPrimitive,
    {
        type Output = Array3<bool>;

        fn threshold_otsu(&self) -> Result<Self::Output, Error> {
            if self.shape()[2] > 1 {
                Err(Error::ChannelDimensionMismatch)
            } else {
                let value = calculate_threshold_otsu(self)?;
                self.threshold_apply(value, f64::INFINITY)
            }
        }
    }

    /// Calculates Otsu's threshold.
    ///
    /// Works per channel, but currently assumes greyscale.
    ///
    /// See the Errors section for the `ThresholdOtsuExt` trait if the number of
    /// channels is greater than one (1), i.e., single channel; otherwise, we would
    /// need to output all three threshold values.
    ///
    /// TODO: Add optional nbins
    fn calculate_threshold_otsu<T, U>(mat: &ArrayBase<U, Ix3>) -> Result<f64, Error>
    where
        U: Data<Elem = T>,
        T: Copy + Clone + Ord + Num + NumAssignOps + ToPrimitive + FromPrimitive,
    {
        let mut threshold = 0.0;
        let n_bins = 255;
        for c in mat.axis_iter(Axis(2)) {
            let scale_factor = (n_bins) as f64 / (c.max().unwrap().to_f64().unwrap());
            let edges_vec: Vec<u8> = (0..n_bins).collect();
            let grid = Grid::from(vec![Bins::new(Edges::from(edges_vec))]);

            // get the histogram
            let flat = Array::from_iter(c.iter()).insert_axis(Axis(1));
            let flat2 = flat.mapv(|x| ((*x).to_f64().unwrap() * scale_factor).to_u8().unwrap());
            let hist = flat2.histogram(grid);
            // Straight out of wikipedia:
            let counts = hist.counts();
            let total = counts.sum().to_f64().unwrap();
            let counts = Array::from_iter(counts.iter());
            // NOTE: Could use the cdf generation for skimage-esque implementation
            // which entails a cumulative sum of the standard histogram
            let mut sum_b = 0.0;
            let mut weight_b = 0.0;
            let mut maximum = 0.0;
            let mut level = 0.0;
            let mut sum_intensity = 0.0;
            for (index, count) in counts.indexed_iter() {
                sum_intensity += (index as f64) * (*count).to_f64().unwrap();
            }
            for (index, count) in counts.indexed_iter() {
                weight_b += count.to_f64().unwrap();
                sum_b += (index as f64) * count.to_f64().unwrap();
                let weight_f = total - weight_b;
                if (weight_b > 0.0) && (weight_f > 0.0) {
                    let mean_f = (sum_intensity - sum_b) / weight_f;
                    let val = weight_b
                        * weight_f
                        * ((sum_b / weight_b) - mean_f)
                        * ((sum_b / weight_b) - mean_f);
                    if val > maximum {
                        level = 1.0 + (index as f64);
                        maximum = val;
                    }
                }
            }
            threshold = level / scale_factor;
        }
        Ok(threshold)
    }

    impl<T, U> ThresholdApplyExt<T> for ArrayBase<U, Ix3>
    where
        U: Data<Elem = T>,
        T: Copy + Clone + Ord + Num + NumAssignOps + ToPrimitive + FromPrimitive,
    {
        type Output = Array3<bool>;

        fn threshold_apply(&self, lower: f64, upper: f64) -> Result<Self::Output, Error> {
            if self.shape()[2] > 1 {
                Err(Error::ChannelDimensionMismatch)
            } else if lower > upper {
                Err(Error::InvalidParameter)
            } else {
                Ok(apply_threshold(self, lower, upper))
            }
        }
    }

    fn apply_threshold<T, U>(data: &ArrayBase<U, Ix3>, lower: f64, upper: f64) -> Array3<bool>
    where
        U: Data<Elem = T>,
        T: Copy + Clone + Num + NumAssignOps + ToPrimitive + FromPrimitive,
    {
        data.mapv(|x| x.to_f64().unwrap() >= lower && x.to_f64().unwrap() <= upper)
    }


    // a bimodal 6 x 8 greyscale image: a dark background with a bright blob
    let image = Array3::from_shape_fn((6, 8, 1), |(r, c, _)| {
        let d2 = (r as i32 - 3).pow(2) + (c as i32 - 4).pow(2);
        if d2 <= 5 { (180 + (r * 7 + c * 3) % 40) as u8 } else { (20 + (r * 5 + c * 11) % 50) as u8 }
    });
    let t = calculate_threshold_otsu(&image).unwrap();
    println!("otsu threshold = {:.4}", t);
    let mask = image.threshold_otsu().unwrap();
    for row in mask.index_axis(Axis(2), 0).rows() {
        println!("  {}", row.iter().map(|&b| if b { '#' } else { '.' }).collect::<String>());
    }
    let band = image.threshold_apply(40.0, 60.0).unwrap();
    println!("pixels in [40, 60] = {}", band.iter().filter(|&&b| b).count());
    let wide: Array3<u16> = image.mapv(|x| x as u16 * 4);
    println!("u16 otsu threshold = {:.4}", calculate_threshold_otsu(&wide.view()).unwrap());
    println!("bad limits: {:?}", image.threshold_apply(10.0, 5.0).err());
    let rgb = Array3::<u8>::zeros((2, 2, 3));
    println!("three channels: {:?}", rgb.threshold_otsu().err());
}
