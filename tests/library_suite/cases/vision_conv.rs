// source: rust-cv/ndarray-vision src/processing/conv.rs, src/core/padding.rs, src/processing/kernels.rs, src/core/util.rs @de424b53 (MIT OR Apache-2.0)
{
    use ndarray::prelude::*;
    use ndarray::{Data, DataMut, IntoDimension, OwnedRepr, Zip};
    use core::mem::MaybeUninit;
    use core::ops::Neg;
    use std::marker::Sized;
    // changed: the num_traits traits used (Zero, One, Num, NumAssignOps, NumOps, FromPrimitive)
    // replaced by small local traits implemented for f64 and i32; the crate's Error type is a
    // local enum; the impls for the crate's Image type dropped
    pub trait Zero {
        fn zero() -> Self;
    }
    pub trait One {
        fn one() -> Self;
    }
    pub trait FromPrimitive: Sized {
        fn from_f64(x: f64) -> Option<Self>;
        fn from_i8(x: i8) -> Option<Self>;
    }
    impl Zero for f64 { fn zero() -> Self { 0.0 } }
    impl One for f64 { fn one() -> Self { 1.0 } }
    impl FromPrimitive for f64 {
        fn from_f64(x: f64) -> Option<Self> { Some(x) }
        fn from_i8(x: i8) -> Option<Self> { Some(x as f64) }
    }
    impl Zero for i32 { fn zero() -> Self { 0 } }
    impl One for i32 { fn one() -> Self { 1 } }
    impl FromPrimitive for i32 {
        fn from_f64(x: f64) -> Option<Self> { Some(x as i32) }
        fn from_i8(x: i8) -> Option<Self> { Some(x as i32) }
    }
    pub trait Num: Sized + Zero + One + PartialEq + core::ops::Add<Output = Self> + core::ops::Sub<Output = Self> + core::ops::Mul<Output = Self> + core::ops::Div<Output = Self> {}
    impl<T: Zero + One + PartialEq + core::ops::Add<Output = T> + core::ops::Sub<Output = T> + core::ops::Mul<Output = T> + core::ops::Div<Output = T>> Num for T {}
    pub trait NumAssignOps: Sized + core::ops::AddAssign + core::ops::MulAssign {}
    impl<T: core::ops::AddAssign + core::ops::MulAssign> NumAssignOps for T {}
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum Error {
        ChannelDimensionMismatch,
        InvalidDimensions,
        InvalidParameter,
        NumericError,
    }

    /// Get the centre of a kernel. Determines the pixel to be
    /// modified as a window is moved over an image
    pub fn kernel_centre(rows: usize, cols: usize) -> (usize, usize) {
        let row_offset = rows / 2 - ((rows % 2 == 0) as usize);
        let col_offset = cols / 2 - ((cols % 2 == 0) as usize);
        (row_offset, col_offset)
    }

    /// Defines a method for padding the data of an image applied directly to the
    /// ndarray type internally. Padding is symmetric
    pub trait PaddingStrategy<T>
    where
        T: Copy,
    {
        /// Taking in the image data and the margin to apply to rows and columns
        /// returns a padded image
        fn pad(
            &self,
            image: ArrayView<T, Ix3>,
            padding: (usize, usize),
        ) -> ArrayBase<OwnedRepr<T>, Ix3>;

        /// Taking in the image data and row and column return the pixel value
        /// if the coordinates are within the image bounds this should probably not
        /// be used in the name of performance
        fn get_pixel(&self, image: ArrayView<T, Ix3>, index: (isize, isize)) -> Option<Array1<T>>;

        /// Gets a value for a channel rows and columns can exceed bounds but the channel index must be
        /// present
        fn get_value(&self, image: ArrayView<T, Ix3>, index: (isize, isize, usize)) -> Option<T>;

        /// Returns true if the padder will return a value for (row, col) or if None if it can pad
        /// an image at all. `NoPadding` is a special instance which will always be false
        fn will_pad(&self, _coord: Option<(isize, isize)>) -> bool {
            true
        }
    }

    /// Doesn't apply any padding to the image returning it unaltered regardless
    /// of padding value
    #[derive(Clone, Copy, Eq, PartialEq, Hash, Debug)]
    pub struct NoPadding;

    /// Pad the image with a constant value
    #[derive(Clone, Eq, PartialEq, Hash, Debug)]
    pub struct ConstantPadding<T>(T)
    where
        T: Copy;

    /// Pad the image with zeros. Uses ConstantPadding internally
    #[derive(Clone, Eq, PartialEq, Hash, Debug)]
    pub struct ZeroPadding;

    #[inline]
    fn is_out_of_bounds(dim: (usize, usize, usize), index: (isize, isize, usize)) -> bool {
        index.0 < 0
            || index.1 < 0
            || index.0 >= dim.0 as isize
            || index.1 >= dim.1 as isize
            || index.2 >= dim.2
    }

    impl<T> PaddingStrategy<T> for NoPadding
    where
        T: Copy,
    {
        fn pad(
            &self,
            image: ArrayView<T, Ix3>,
            _padding: (usize, usize),
        ) -> ArrayBase<OwnedRepr<T>, Ix3> {
            image.to_owned()
        }

        fn get_pixel(&self, image: ArrayView<T, Ix3>, index: (isize, isize)) -> Option<Array1<T>> {
            let index = (index.0, index.1, 0);
            if is_out_of_bounds(image.dim(), index) {
                None
            } else {
                Some(image.slice(s![index.0, index.1, ..]).to_owned())
            }
        }

        fn get_value(&self, image: ArrayView<T, Ix3>, index: (isize, isize, usize)) -> Option<T> {
            if is_out_of_bounds(image.dim(), index) {
                None
            } else {
                image
                    .get((index.0 as usize, index.1 as usize, index.2))
                    .copied()
            }
        }

        fn will_pad(&self, _coord: Option<(isize, isize)>) -> bool {
            false
        }
    }

    impl<T> PaddingStrategy<T> for ConstantPadding<T>
    where
        T: Copy,
    {
        fn pad(
            &self,
            image: ArrayView<T, Ix3>,
            padding: (usize, usize),
        ) -> ArrayBase<OwnedRepr<T>, Ix3> {
            let shape = (
                image.shape()[0] + padding.0 * 2,
                image.shape()[1] + padding.1 * 2,
                image.shape()[2],
            );

            let mut result = Array::from_elem(shape, self.0);
            result
                .slice_mut(s![
                    padding.0..shape.0 - padding.0,
                    padding.1..shape.1 - padding.1,
                    ..
                ])
                .assign(&image);

            result
        }

        fn get_pixel(&self, image: ArrayView<T, Ix3>, index: (isize, isize)) -> Option<Array1<T>> {
            let index = (index.0, index.1, 0);
            if is_out_of_bounds(image.dim(), index) {
                let v = vec![self.0; image.dim().2];
                Some(Array1::from(v))
            } else {
                Some(image.slice(s![index.0, index.1, ..]).to_owned())
            }
        }

        fn get_value(&self, image: ArrayView<T, Ix3>, index: (isize, isize, usize)) -> Option<T> {
            if is_out_of_bounds(image.dim(), index) {
                Some(self.0)
            } else {
                image
                    .get((index.0 as usize, index.1 as usize, index.2))
                    .copied()
            }
        }
    }

    impl<T> PaddingStrategy<T> for ZeroPadding
    where
        T: Copy + Zero,
    {
        fn pad(
            &self,
            image: ArrayView<T, Ix3>,
            padding: (usize, usize),
        ) -> ArrayBase<OwnedRepr<T>, Ix3> {
            let padder = ConstantPadding(T::zero());
            padder.pad(image, padding)
        }

        fn get_pixel(&self, image: ArrayView<T, Ix3>, index: (isize, isize)) -> Option<Array1<T>> {
            let padder = ConstantPadding(T::zero());
            padder.get_pixel(image, index)
        }

        fn get_value(&self, image: ArrayView<T, Ix3>, index: (isize, isize, usize)) -> Option<T> {
            let padder = ConstantPadding(T::zero());
            padder.get_value(image, index)
        }
    }

    /// Padding extension for images
    pub trait PaddingExt<T> {
        /// Type of the output image
        type Output;
        /// Pad the object with the given padding and strategy
        fn pad(&self, padding: (usize, usize), strategy: &dyn PaddingStrategy<T>) -> Self::Output;
    }

    impl<T, U> PaddingExt<T> for ArrayBase<U, Ix3>
    where
        U: Data<Elem = T>,
        T: Copy,
    {
        type Output = ArrayBase<OwnedRepr<T>, Ix3>;

        fn pad(&self, padding: (usize, usize), strategy: &dyn PaddingStrategy<T>) -> Self::Output {
            strategy.pad(self.view(), padding)
        }
    }


    /// Perform image convolutions
    pub trait ConvolutionExt<T: Copy>
    where
        Self: Sized,
    {
        /// Type for the output as data will have to be allocated
        type Output;

        /// Perform a convolution returning the resultant data
        /// applies the default padding of zero padding
        fn conv2d<U: Data<Elem = T>>(&self, kernel: ArrayBase<U, Ix3>) -> Result<Self::Output, Error>;
        /// Performs the convolution inplace mutating the containers data
        /// applies the default padding of zero padding
        fn conv2d_inplace<U: Data<Elem = T>>(&mut self, kernel: ArrayBase<U, Ix3>)
            -> Result<(), Error>;
        /// Perform a convolution returning the resultant data
        /// applies the default padding of zero padding
        fn conv2d_with_padding<U: Data<Elem = T>>(
            &self,
            kernel: ArrayBase<U, Ix3>,
            strategy: &impl PaddingStrategy<T>,
        ) -> Result<Self::Output, Error>;
        /// Performs the convolution inplace mutating the containers data
        /// applies the default padding of zero padding
        fn conv2d_inplace_with_padding<U: Data<Elem = T>>(
            &mut self,
            kernel: ArrayBase<U, Ix3>,
            strategy: &impl PaddingStrategy<T>,
        ) -> Result<(), Error>;
    }

    fn apply_edge_convolution<T>(
        array: ArrayView3<T>,
        kernel: ArrayView3<T>,
        coord: (usize, usize),
        strategy: &impl PaddingStrategy<T>,
    ) -> Vec<T>
    where
        T: Copy + Num + NumAssignOps,
    {
        let out_of_bounds =
            |r, c| r < 0 || c < 0 || r >= array.dim().0 as isize || c >= array.dim().1 as isize;
        let (row_offset, col_offset) = kernel_centre(kernel.dim().0, kernel.dim().1);

        let top = coord.0 as isize - row_offset as isize;
        let bottom = (coord.0 + row_offset + 1) as isize;
        let left = coord.1 as isize - col_offset as isize;
        let right = (coord.1 + col_offset + 1) as isize;
        let channels = array.dim().2;
        let mut res = vec![T::zero(); channels];
        'processing: for (kr, r) in (top..bottom).enumerate() {
            for (kc, c) in (left..right).enumerate() {
                let oob = out_of_bounds(r, c);
                if oob && !strategy.will_pad(Some((r, c))) {
                    for chan in 0..channels {
                        res[chan] = array[[coord.0, coord.1, chan]];
                    }
                    break 'processing;
                }
                for chan in 0..channels {
                    // TODO this doesn't work on no padding
                    if oob {
                        if let Some(val) = strategy.get_value(array, (r, c, chan)) {
                            res[chan] += kernel[[kr, kc, chan]] * val;
                        } else {
                            unreachable!()
                        }
                    } else {
                        res[chan] += kernel[[kr, kc, chan]] * array[[r as usize, c as usize, chan]];
                    }
                }
            }
        }
        res
    }

    impl<T, U> ConvolutionExt<T> for ArrayBase<U, Ix3>
    where
        U: DataMut<Elem = T>,
        T: Copy + Clone + Num + NumAssignOps,
    {
        type Output = Array<T, Ix3>;

        fn conv2d<B: Data<Elem = T>>(&self, kernel: ArrayBase<B, Ix3>) -> Result<Self::Output, Error> {
            self.conv2d_with_padding(kernel, &NoPadding {})
        }

        fn conv2d_inplace<B: Data<Elem = T>>(
            &mut self,
            kernel: ArrayBase<B, Ix3>,
        ) -> Result<(), Error> {
            self.assign(&self.conv2d_with_padding(kernel, &NoPadding {})?);
            Ok(())
        }

        #[inline]
        fn conv2d_with_padding<B: Data<Elem = T>>(
            &self,
            kernel: ArrayBase<B, Ix3>,
            strategy: &impl PaddingStrategy<T>,
        ) -> Result<Self::Output, Error> {
            if self.shape()[2] != kernel.shape()[2] {
                Err(Error::ChannelDimensionMismatch)
            } else {
                let k_s = kernel.shape();
                // Bit icky but handles fact that uncentred convolutions will cross the bounds
                // otherwise
                let (row_offset, col_offset) = kernel_centre(k_s[0], k_s[1]);
                let shape = (self.shape()[0], self.shape()[1], self.shape()[2]);

                if shape.0 > 0 && shape.1 > 0 {
                    let mut result = Self::Output::uninit(shape);

                    Zip::indexed(self.windows(kernel.dim())).for_each(|(i, j, _), window| {
                        let mut temp;
                        for channel in 0..k_s[2] {
                            temp = T::zero();
                            for r in 0..k_s[0] {
                                for c in 0..k_s[1] {
                                    temp += window[[r, c, channel]] * kernel[[r, c, channel]];
                                }
                            }
                            unsafe {
                                *result.uget_mut([i + row_offset, j + col_offset, channel]) =
                                    MaybeUninit::new(temp);
                            }
                        }
                    });
                    for c in 0..shape.1 {
                        for r in 0..row_offset {
                            let pixel =
                                apply_edge_convolution(self.view(), kernel.view(), (r, c), strategy);
                            for chan in 0..k_s[2] {
                                unsafe {
                                    *result.uget_mut([r, c, chan]) = MaybeUninit::new(pixel[chan]);
                                }
                            }
                            let bottom = shape.0 - r - 1;
                            let pixel = apply_edge_convolution(
                                self.view(),
                                kernel.view(),
                                (bottom, c),
                                strategy,
                            );
                            for chan in 0..k_s[2] {
                                unsafe {
                                    *result.uget_mut([bottom, c, chan]) = MaybeUninit::new(pixel[chan]);
                                }
                            }
                        }
                    }
                    for r in (row_offset)..(shape.0 - row_offset) {
                        for c in 0..col_offset {
                            let pixel =
                                apply_edge_convolution(self.view(), kernel.view(), (r, c), strategy);
                            for chan in 0..k_s[2] {
                                unsafe {
                                    *result.uget_mut([r, c, chan]) = MaybeUninit::new(pixel[chan]);
                                }
                            }
                            let right = shape.1 - c - 1;
                            let pixel = apply_edge_convolution(
                                self.view(),
                                kernel.view(),
                                (r, right),
                                strategy,
                            );
                            for chan in 0..k_s[2] {
                                unsafe {
                                    *result.uget_mut([r, right, chan]) = MaybeUninit::new(pixel[chan]);
                                }
                            }
                        }
                    }
                    Ok(unsafe { result.assume_init() })
                } else {
                    Err(Error::InvalidDimensions)
                }
            }
        }

        fn conv2d_inplace_with_padding<B: Data<Elem = T>>(
            &mut self,
            kernel: ArrayBase<B, Ix3>,
            strategy: &impl PaddingStrategy<T>,
        ) -> Result<(), Error> {
            self.assign(&self.conv2d_with_padding(kernel, strategy)?);
            Ok(())
        }
    }


    /// Builds a convolutioon kernel given a shape and optional parameters
    pub trait KernelBuilder<T> {
        /// Parameters used in construction of the kernel
        type Params;
        /// Build a kernel with a given dimension given sensible defaults for any
        /// parameters
        fn build<D>(shape: D) -> Result<Array3<T>, Error>
        where
            D: Copy + IntoDimension<Dim = Ix3>;
        /// For kernels with optional parameters use build with params otherwise
        /// appropriate default parameters will be chosen
        fn build_with_params<D>(shape: D, _p: Self::Params) -> Result<Array3<T>, Error>
        where
            D: Copy + IntoDimension<Dim = Ix3>,
        {
            Self::build(shape)
        }
    }

    /// Create a kernel with a fixed dimension
    pub trait FixedDimensionKernelBuilder<T> {
        /// Parameters used in construction of the kernel
        type Params;
        /// Build a fixed size kernel
        fn build() -> Result<Array3<T>, Error>;
        /// Build a fixed size kernel with the given parameters
        fn build_with_params(_p: Self::Params) -> Result<Array3<T>, Error> {
            Self::build()
        }
    }


    /// Builds a Gaussian kernel taking the covariance as a parameter. Covariance
    /// is given as 2 values for the x and y variance.
    #[derive(Copy, Clone, Eq, PartialEq, Hash, Debug)]
    pub struct GaussianFilter;

    impl<T> KernelBuilder<T> for GaussianFilter
    where
        T: Copy + Clone + FromPrimitive + Num,
    {
        /// The parameter for the Gaussian filter is the horizontal and vertical
        /// covariances to form the covariance matrix.
        /// ```text
        /// [ Params[0], 0]
        /// [ 0, Params[1]]
        /// ```
        type Params = [f64; 2];

        fn build<D>(shape: D) -> Result<Array3<T>, Error>
        where
            D: Copy + IntoDimension<Dim = Ix3>,
        {
            // This recommendation was taken from OpenCV 2.4 docs
            let s = shape.into_dimension();
            let sig = 0.3 * (((std::cmp::max(s[0], 1) - 1) as f64) * 0.5 - 1.0) + 0.8;
            Self::build_with_params(shape, [sig, sig])
        }

        fn build_with_params<D>(shape: D, covar: Self::Params) -> Result<Array3<T>, Error>
        where
            D: Copy + IntoDimension<Dim = Ix3>,
        {
            let is_even = |x| x & 1 == 0;
            let s = shape.into_dimension();
            if is_even(s[0]) || is_even(s[1]) || s[0] != s[1] || s[2] == 0 {
                Err(Error::InvalidDimensions)
            } else if covar[0] <= 0.0f64 || covar[1] <= 0.0f64 {
                Err(Error::InvalidParameter)
            } else {
                let centre: isize = (s[0] as isize + 1) / 2 - 1;
                let gauss = |coord, covar| ((coord - centre) as f64).powi(2) / (2.0f64 * covar);

                let mut temp = Array2::from_shape_fn((s[0], s[1]), |(r, c)| {
                    f64::exp(-(gauss(r as isize, covar[1]) + gauss(c as isize, covar[0])))
                });

                let sum = temp.sum();

                temp *= 1.0f64 / sum;

                let temp = temp.mapv(T::from_f64);

                if temp.iter().any(|x| x.is_none()) {
                    Err(Error::NumericError)
                } else {
                    let temp = temp.mapv(|x| x.unwrap());
                    Ok(Array3::from_shape_fn(shape, |(r, c, _)| temp[[r, c]]))
                }
            }
        }
    }


    /// Builder to create either a horizontal or vertical Sobel filter for the Sobel
    /// operator
    #[derive(Copy, Clone, Eq, PartialEq, Hash, Debug)]
    pub struct SobelFilter;

    /// Orientation of the filter
    #[derive(Copy, Clone, Eq, PartialEq, Hash, Debug)]
    pub enum Orientation {
        /// Obtain the vertical derivatives of an image
        Vertical,
        /// Obtain the horizontal derivatives of an image
        Horizontal,
    }

    impl<T> FixedDimensionKernelBuilder<T> for SobelFilter
    where
        T: Copy + Clone + Num + Neg<Output = T> + FromPrimitive,
    {
        /// Orientation of the filter. Default is vertical
        type Params = Orientation;
        /// Build a fixed size kernel
        fn build() -> Result<Array3<T>, Error> {
            // Arbitary decision
            Self::build_with_params(Orientation::Vertical)
        }

        /// Build a fixed size kernel with the given parameters
        fn build_with_params(p: Self::Params) -> Result<Array3<T>, Error> {
            let two = T::from_i8(2).ok_or(Error::NumericError)?;
            // Gets the gradient along the horizontal axis
            #[rustfmt::skip]
            let horz_sobel = arr2(&[
                [T::one(),  T::zero(), -T::one()],
                [two,       T::zero(), -two],
                [T::one(),  T::zero(), -T::one()],
            ]);
            let sobel = match p {
                Orientation::Vertical => horz_sobel.t().to_owned(),
                Orientation::Horizontal => horz_sobel,
            };
            Ok(sobel.insert_axis(Axis(2)))
        }
    }


    // a 6 x 7 image with 2 channels
    let image = Array3::from_shape_fn((6, 7, 2), |(r, c, ch)| ((r * 7 + c * 3 + ch * 5) % 10) as f64);
    let gauss: Array3<f64> = GaussianFilter::build_with_params([3, 3, 2], [0.8, 0.8]).unwrap();
    println!("gaussian kernel channel 0 =\n{:.4}", gauss.index_axis(Axis(2), 0));
    let blurred = image.conv2d(gauss.view()).unwrap();
    println!("blurred (no padding) channel 0 =\n{:.3}", blurred.index_axis(Axis(2), 0));
    let blurred_zero = image.conv2d_with_padding(gauss.view(), &ZeroPadding {}).unwrap();
    println!("blurred (zero padding) channel 1 =\n{:.3}", blurred_zero.index_axis(Axis(2), 1));
    let gray = image.slice(s![.., .., 0..1]).mapv(|x| x as i32);
    let sobel: Array3<i32> = SobelFilter::build_with_params(Orientation::Horizontal).unwrap();
    let edges = gray.conv2d_with_padding(sobel, &ConstantPadding(1)).unwrap();
    println!("horizontal sobel =\n{}", edges.index_axis(Axis(2), 0));
    println!("padded = {:?}", image.pad((1, 2), &ZeroPadding {}).shape());
    println!("mismatch: {:?}", image.conv2d(sobel_like(&gray)).err());
    println!("even kernel: {:?}", <GaussianFilter as KernelBuilder<f64>>::build([4, 4, 1]).err());

    fn sobel_like(g: &Array3<i32>) -> Array3<f64> {
        Array3::zeros((3, 3, g.dim().2))
    }
}
