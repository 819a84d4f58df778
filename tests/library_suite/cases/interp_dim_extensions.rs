// source: jonasBoss/ndarray-interp src/dim_extensions.rs @9f9f8261 (MIT)
{
    use ndarray::{Dimension, IntoDimension, Ix, Ix0, Ix1, Ix2, Ix3, Ix4, Ix5, Ix6, IxDyn};
    use ndarray::{Array, Array4, Axis};


    pub trait DimExtension: Dimension {
        /// create the dimension from an iterator without any size checking
        /// when the iterator yields more values than the number of dimensions,
        /// those get ignored. When the iterator yields less values,
        /// the remaining dimensions will have lenght 0
        ///
        /// for dynamic dimensions the dimension will match the number of yielded elements
        fn new<T: Iterator<Item = Ix>>(ix: T) -> Self;
    }

    macro_rules! impl_dim_extension {
        ($dim:ty) => {
            impl DimExtension for $dim {
                #[inline]
                fn new<T: Iterator<Item = Ix>>(ix: T) -> Self {
                    let mut dim = <$dim>::default();
                    dim.as_array_view_mut()
                        .into_iter()
                        .zip(ix)
                        .for_each(|(a, b)| *a = b);
                    dim
                }
            }
        };
    }

    impl_dim_extension!(Ix0);
    impl_dim_extension!(Ix1);
    impl_dim_extension!(Ix2);
    impl_dim_extension!(Ix3);
    impl_dim_extension!(Ix4);
    impl_dim_extension!(Ix5);
    impl_dim_extension!(Ix6);

    impl DimExtension for IxDyn {
        #[inline]
        fn new<T: Iterator<Item = Ix>>(ix: T) -> Self {
            ix.collect::<Vec<_>>().into_dimension()
        }
    }


    // build dimensions from iterators, as the interpolators do for their query shapes
    println!("Ix0 from a long iterator: {:?}", Ix0::new(vec![1, 2, 3].into_iter()).slice());
    println!("Ix2 from a short iterator: {:?}", Ix2::new(vec![7].into_iter()).slice());
    println!("Ix3: {:?}", Ix3::new(vec![2, 3, 4, 5].into_iter()).slice());
    println!("IxDyn: {:?}", IxDyn::new(vec![4, 1, 2].into_iter()).slice());
    // drop the first axis of a 4-d array's shape, and reshape its data accordingly
    let data = Array4::from_shape_fn((1, 2, 3, 4), |(a, b, c, d)| (a + b * 12 + c * 4 + d) as f64);
    let shape = Ix3::new(data.shape().iter().skip(1).cloned());
    let squeezed = data.clone().into_shape_with_order(shape).unwrap();
    println!("squeezed shape {:?}, [1, 2, 3] = {}", squeezed.shape(), squeezed[[1, 2, 3]]);
    // a generic helper over any dimension: the shape with a given axis removed
    fn without_axis<D: DimExtension + ndarray::RemoveAxis>(dim: &D, axis: usize) -> D::Smaller
    where
        D::Smaller: DimExtension,
    {
        D::Smaller::new(dim.slice().iter().enumerate().filter(|(i, _)| *i != axis).map(|(_, &n)| n))
    }
    let smaller = without_axis(&data.raw_dim(), 2);
    println!("without axis 2: {:?}", smaller.slice());
    let summed = data.sum_axis(Axis(2));
    println!("sum over axis 2 has that shape: {}", summed.raw_dim() == smaller);
    let dynamic = Array::from_shape_vec(IxDyn::new(vec![3, 8].into_iter()), (0..24).collect()).unwrap();
    println!("dynamic {:?}, last row {}", dynamic.shape(), dynamic.index_axis(Axis(0), 2));
}
