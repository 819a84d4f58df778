// source: raskr/rust-autograd src/tensor_ops/reduction_ops.rs, src/ndarray_ext.rs @53dbc95d (MIT)
{
    use ndarray;
    use std::mem;
    use ndarray::{array, Array3, IxDyn};
    // changed: the crate's Float trait is a local trait over ndarray's NdFloat and its OpOutput
    // a local two-variant enum; `ndarray_ext::` / `crate::` paths shortened to the local items
    pub trait Float: ndarray::NdFloat {}
    impl Float for f32 {}
    impl Float for f64 {}
    pub type NdArray<T> = ndarray::Array<T, ndarray::IxDyn>;
    pub type NdArrayView<'a, T> = ndarray::ArrayView<'a, T, ndarray::IxDyn>;
    pub enum OpOutput<T> {
        View(ndarray::RawArrayView<T, ndarray::IxDyn>),
        Owned(NdArray<T>),
    }
    fn show<T: Float>(o: OpOutput<T>) -> String {
        match o {
            OpOutput::View(v) => format!("view of shape {:?}", v.shape()),
            OpOutput::Owned(a) => format!("{:.3}", a),
        }
    }

    #[inline]
    pub(crate) fn expand_dims<T: Float>(x: NdArray<T>, axis: usize) -> NdArray<T> {
        let mut shape = x.shape().to_vec();
        shape.insert(axis, 1);
        x.into_shape(shape).unwrap()
    }
    #[inline]
    pub(crate) fn roll_axis<T: Float>(arg: &mut NdArray<T>, to: ndarray::Axis, from: ndarray::Axis) {
        let i = to.index();
        let mut j = from.index();
        if j > i {
            while i != j {
                arg.swap_axes(i, j);
                j -= 1;
            }
        } else {
            while i != j {
                arg.swap_axes(i, j);
                j += 1;
            }
        }
    }
    #[inline]
    pub(crate) fn normalize_negative_axis(axis: isize, ndim: usize) -> usize {
        if axis < 0 {
            (ndim as isize + axis) as usize
        } else {
            axis as usize
        }
    }
    #[inline]
    pub(crate) fn is_scalar_shape(shape: &[usize]) -> bool {
        shape.len() == 0 || shape == [0]
    }

    macro_rules! impl_reduce_forward {
        ($forward_name:ident, $reduce_fn_name:ident, $reduce_default:ident) => {
            fn $forward_name<'v, T: Float>(
                x: &NdArrayView<'v, T>,
                mut axes: Vec<usize>,
                keep_dims: bool,
            ) -> OpOutput<T> {
                let x_shape = x.shape();

                if is_scalar_shape(x_shape) {
                    // case of 0 rank
                    OpOutput::View(x.raw_view())
                } else {
                    // reduction axes are empty => do nothing
                    if axes.is_empty() {
                        return OpOutput::View(x.raw_view());
                    }

                    // -- main logic --
                    let mut folded: Option<NdArray<T>> = None;
                    axes.sort();

                    for axis in axes.into_iter().rev() {
                        let func = T::$reduce_fn_name;

                        let ret = match folded {
                            Some(ref a) => {
                                a.fold_axis(ndarray::Axis(axis), T::$reduce_default(), move |&l, &r| {
                                    func(l, r)
                                })
                            }
                            None => {
                                x.fold_axis(ndarray::Axis(axis), T::$reduce_default(), move |&l, &r| {
                                    func(l, r)
                                })
                            }
                        };

                        if keep_dims {
                            mem::swap(&mut folded, &mut Some(expand_dims(ret, axis)));
                        } else {
                            mem::swap(&mut folded, &mut Some(ret));
                        }
                    }

                    OpOutput::Owned(folded.unwrap_or_else(|| x.to_owned()))
                }
            }
        };
    }

    impl_reduce_forward!(compute_reduce_sum, add, zero);
    impl_reduce_forward!(compute_reduce_min, min, max_value);
    impl_reduce_forward!(compute_reduce_max, max, min_value);
    impl_reduce_forward!(compute_reduce_prod, mul, one);


    fn argx_helper<T: Float>(
        x: &NdArrayView<T>,
        comp_fn: fn(T, T) -> T,
        default_val: T,
        keep_dim: bool,
        axis: isize,
    ) -> NdArray<T> {
        let axis = normalize_negative_axis(axis, x.ndim());
        let x_shape = x.shape();
        // 1. Make binary mask tensor (maximums are 1s)
        let mut mask = {
            let maxed = x.fold_axis(ndarray::Axis(axis), default_val, move |&a, &b| {
                comp_fn(a, b)
            });
            let mut mask = x.to_owned();
            let mut found = ndarray::Array::<bool, ndarray::IxDyn>::from_elem(maxed.shape(), false);
            for mut sub in mask.axis_iter_mut(ndarray::Axis(axis)) {
                ndarray::Zip::from(&mut sub)
                    .and(&mut found)
                    .and(&maxed)
                    .for_each(|r, f, m| {
                        let z = r == m && !*f;
                        if z {
                            *f = true;
                        }
                        *r = T::from(z as i32).unwrap();
                    });
            }
            mask
        };

        // 2. Reshape the mask to 2-ranked. e.g. (2, 3, 4) -> (8, 3) (let `axis` be 1)
        let mask = {
            // move the `axis` to first, and put remaining together on the 2nd axis
            let reduction_len = x_shape[axis];
            roll_axis(&mut mask, ndarray::Axis(0), ndarray::Axis(axis));
            let shape2d = (reduction_len, mask.len() / reduction_len);
            let mut mask = mask.into_shape(shape2d).unwrap();
            mask.swap_axes(0, 1);
            mask
        };

        // 3. Make the indices (vertical vector)
        let indices = {
            let cols = mask.shape()[1];
            ndarray::Array::range(T::zero(), T::from(cols).unwrap(), T::one())
                .into_shape((cols, 1))
                .unwrap()
        };

        // 4. Dot product between mask and index-tensor
        let mat = mask.dot(&indices);

        // 5. Reshape it
        let mut final_shape = x_shape.to_vec();
        if keep_dim {
            final_shape[axis] = 1;
        } else {
            final_shape.remove(axis);
        }
        // unwrap is safe (95% confidence...)
        mat.into_dyn()
            .into_shape(ndarray::IxDyn(final_shape.as_slice()))
            .unwrap()
    }

    let x = Array3::<f64>::from_shape_fn((2, 3, 4), |(i, j, k)| ((i * 5 + j * 7 + k * 3) % 10) as f64 - 4.5).into_dyn();
    println!("sum over axis 2 = {}", show(compute_reduce_sum(&x.view(), vec![2], false)));
    println!("max over axes 0, 2 (keep dims) = {}", show(compute_reduce_max(&x.view(), vec![2, 0], true)));
    println!("min over axis 1 = {}", show(compute_reduce_min(&x.view(), vec![1], false)));
    println!("prod over axes 0, 1 = {}", show(compute_reduce_prod(&x.view(), vec![0, 1], false)));
    println!("no axes: {}", show(compute_reduce_sum(&x.view(), vec![], false)));
    // (the helper reshapes after rolling the axis to the front, which needs a contiguous layout:
    // axis 0 of a 3-d array, or either axis of a matrix)
    println!("argmax over axis 0 =\n{}", argx_helper(&x.view(), f64::max, f64::MIN, false, 0));
    println!("argmin over axis 0 (keep) shape {:?}", argx_helper(&x.view(), f64::min, f64::MAX, true, 0).shape());
    let plane = x.index_axis(ndarray::Axis(0), 1).to_owned();
    println!("argmin over axis -1 of a plane = {}", argx_helper(&plane.view(), f64::min, f64::MAX, false, -1));
    let m = array![[1.0f32, 3.0, 2.0], [4.0, 4.0, 0.0]].into_dyn();
    println!("argmax of a matrix rows = {}", argx_helper(&m.view(), f32::max, f32::MIN, false, 1));
    let mut r = NdArray::<f32>::zeros(IxDyn(&[2, 3, 4, 5]));
    roll_axis(&mut r, ndarray::Axis(0), ndarray::Axis(2));
    println!("roll_axis: {:?}, expand_dims: {:?}", r.shape(), expand_dims(m.clone(), 1).shape());
}
