// source: raskr/rust-autograd src/tensor_ops/array_ops.rs, src/ndarray_ext.rs @53dbc95d (MIT)
{
    use ndarray;
    use ndarray::SliceInfoElem;
    use ndarray::Dimension;
    use ndarray::RemoveAxis;
    use ndarray::{array, Array3, IxDyn};
    use std::iter;
    // changed: the crate's Float trait is a local trait over ndarray's NdFloat; the graph's
    // op::Op / ComputeContext replaced by a minimal local `op` module (inputs as dynamic views;
    // outputs, views included, collected as owned arrays) so that the `compute` bodies run as
    // written; `ndarray_ext::` paths shortened to the local items; the `grad` halves dropped
    pub trait Float: ndarray::NdFloat {}
    impl Float for f32 {}
    impl Float for f64 {}
    pub type NdArray<T> = ndarray::Array<T, ndarray::IxDyn>;
    pub type NdArrayView<'a, T> = ndarray::ArrayView<'a, T, ndarray::IxDyn>;
    mod op {
        pub struct ComputeContext<'v, T> {
            pub inputs: Vec<ndarray::ArrayView<'v, T, ndarray::IxDyn>>,
            pub outputs: Vec<ndarray::Array<T, ndarray::IxDyn>>,
        }
        impl<'v, T: Clone> ComputeContext<'v, T> {
            pub fn input(&self, i: usize) -> ndarray::ArrayView<'v, T, ndarray::IxDyn> {
                self.inputs[i].clone()
            }
            pub fn num_inputs(&self) -> usize {
                self.inputs.len()
            }
            pub fn append_output(&mut self, y: ndarray::Array<T, ndarray::IxDyn>) {
                self.outputs.push(y);
            }
            pub fn append_output_view(&mut self, y: ndarray::ArrayView<'v, T, ndarray::IxDyn>) {
                self.outputs.push(y.to_owned());
            }
        }
        #[derive(Debug)]
        pub enum OpError {
            NdArrayError(String, ndarray::ShapeError),
        }
        pub trait Op<T> {
            fn compute(&self, ctx: &mut ComputeContext<T>) -> Result<(), OpError>;
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
    pub(crate) fn normalize_negative_axes<T: Float>(axes: &NdArrayView<T>, ndim: usize) -> Vec<usize> {
        let mut axes_ret: Vec<usize> = Vec::with_capacity(axes.len());
        for &axis in axes.iter() {
            let axis = if axis < T::zero() {
                (T::from(ndim).unwrap() + axis)
                    .to_usize()
                    .expect("Invalid index value")
            } else {
                axis.to_usize().expect("Invalid index value")
            };
            axes_ret.push(axis);
        }
        axes_ret
    }
    pub(crate) fn zip<I, J>(i: I, j: J) -> iter::Zip<I::IntoIter, J::IntoIter>
        where
            I: IntoIterator,
            J: IntoIterator,
    {
        i.into_iter().zip(j)
    }
    pub fn select<F: Clone>(param: &NdArrayView<F>, axis: ndarray::Axis, indices: &[ndarray::Ix]) -> NdArray<F>
    {
        let mut subs = vec![param.view(); indices.len()];
        for (&i, sub) in zip(indices, &mut subs[..]) {
            sub.collapse_axis(axis, i);
        }
        assert!(!subs.is_empty(), "Got empty indices for select");
        concatenate(axis, subs.as_slice()).unwrap()
    }
    pub fn concatenate<F: Clone>(axis: ndarray::Axis, arrays: &[NdArrayView<F>]) -> Result<NdArray<F>, ndarray::ShapeError>
    {
        if arrays.is_empty() {
            return Err(ndarray::ShapeError::from_kind(ndarray::ErrorKind::Unsupported));
        }
        let mut res_dim = arrays[0].raw_dim();
        if axis.index() >= res_dim.ndim() {
            return Err(ndarray::ShapeError::from_kind(ndarray::ErrorKind::OutOfBounds));
        }
        let common_dim = res_dim.remove_axis(axis);
        if arrays
            .iter()
            .any(|a| a.raw_dim().remove_axis(axis) != common_dim)
        {
            return Err(ndarray::ShapeError::from_kind(ndarray::ErrorKind::IncompatibleShape));
        }

        let stacked_dim = arrays.iter().fold(0, |acc, a| acc + a.len_of(axis));
        res_dim[axis.index()] = stacked_dim;
        // res_dim.set_axis(axis, stacked_dim);

        // we can safely use uninitialized values here because they are Copy
        // and we will only ever write to them
        let size = res_dim.size();
        let mut v = Vec::with_capacity(size);
        unsafe {
            v.set_len(size);
        }
        let mut res = ndarray::Array::from_shape_vec(res_dim, v)?;

        {
            let mut assign_view = res.view_mut();
            for array in arrays {
                let len = array.len_of(axis);
                let (mut front, rest) = assign_view.split_at(axis, len);
                front.assign(array);
                assign_view = rest;
            }
        }
        Ok(res)
    }

    pub struct Slice {
        pub indices: Vec<SliceInfoElem>,
    }

    pub struct Split {
        pub axis: isize,
        pub start_index: isize,
        pub end_index: isize,
    }

    pub struct Tile {
        pub axis: isize,
        pub num: usize,
    }

    pub struct Concat {
        pub axis: isize,
    }

    pub struct ConcatGrad {
        pub axis: isize,
        pub index: usize,
    }

    pub struct Gather {
        pub axis: isize,
        pub should_normalize_negative_indices: bool,
    }

    pub struct GatherGrad {
        pub axis: isize,
    }

    fn make_indices_for_split<T: Float>(
        x: &NdArrayView<T>,
        start_index: isize,
        end_index: isize,
        axis: usize,
    ) -> Vec<SliceInfoElem> {
        let ndim = x.ndim();
        assert!(ndim > axis, "Wrong split axis");
        (0..ndim)
            .map(|i| {
                if i == axis {
                    SliceInfoElem::Slice {
                        start: start_index,
                        end: Some(end_index),
                        step: 1,
                    }
                } else {
                    // full slice
                    SliceInfoElem::Slice {
                        start: 0,
                        end: None,
                        step: 1,
                    }
                }
            })
            .collect::<Vec<_>>()
    }

    impl<T: Float> op::Op<T> for Slice {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let mut y = ctx.input(0);
            y.slice_collapse(self.indices.as_slice());
            ctx.append_output_view(y);
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for Split {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let x = &ctx.input(0);
            let axis = normalize_negative_axis(self.axis, x.ndim());
            let mut ret = x.clone();
            let indices = make_indices_for_split(x, self.start_index, self.end_index, axis);
            ret.slice_collapse(indices.as_slice());
            ctx.append_output_view(ret);
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for Tile {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let x = ctx.input(0);
            let axis = normalize_negative_axis(self.axis, x.ndim());
            let views = vec![x.clone(); self.num];
            match ndarray::concatenate(ndarray::Axis(axis), views.as_slice()) {
                Ok(ret) => {
                    ctx.append_output(ret);
                    Ok(())
                }
                Err(e) => Err(op::OpError::NdArrayError("tile: ".to_string(), e)),
            }
        }
    }

    impl<T: Float> op::Op<T> for Concat {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let mut views = Vec::with_capacity(ctx.num_inputs());
            for i in 0..ctx.num_inputs() {
                views.push(ctx.input(i));
            }

            let axis = if self.axis < 0 {
                (ctx.input(0).ndim() as isize + self.axis) as usize
            } else {
                self.axis as usize
            };

            match ndarray::concatenate(ndarray::Axis(axis), views.as_slice()) {
                Ok(y) => {
                    ctx.append_output(y);
                    Ok(())
                }
                Err(e) => Err(op::OpError::NdArrayError("concat".to_string(), e)),
            }
        }
    }

    impl<T: Float> op::Op<T> for ConcatGrad {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let gy = ctx.input(0);

            let axis = if self.axis < 0 {
                (ctx.input(0).ndim() as isize + self.axis) as usize
            } else {
                self.axis as usize
            };

            // make slice indices
            let mut start_idx = 0;
            for i in 1..self.index {
                start_idx += ctx.input(i).shape()[axis];
            }
            let region_len = ctx.input(self.index + 1).shape()[axis] as isize;
            let indices = (0..gy.ndim())
                .map(move |_axis| {
                    if _axis == axis {
                        // partial region
                        SliceInfoElem::Slice {
                            start: start_idx as isize,
                            end: Some(region_len),
                            step: 1,
                        }
                    } else {
                        // full slice
                        SliceInfoElem::Slice {
                            start: 0,
                            end: None,
                            step: 1,
                        }
                    }
                })
                .collect::<Vec<_>>();

            // Clone the *view*
            unsafe {
                match ndarray::SliceInfo::<_, ndarray::IxDyn, ndarray::IxDyn>::new(indices) {
                    Ok(ok) => {
                        // do slice
                        let ret = gy.clone().slice_move(ok.as_ref());
                        ctx.append_output_view(ret);
                        Ok(())
                    }
                    Err(e) => Err(op::OpError::NdArrayError("ConcatGrad: ".to_string(), e)),
                }
            }
        }
    }

    impl<T: Float> op::Op<T> for Gather {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let param = &ctx.input(1);
            let indices = &ctx.input(0);
            let indices_shape = indices.shape();
            let param_shape = param.shape();
            let axis = normalize_negative_axis(self.axis, param.ndim());

            let output_shape: Vec<usize> = {
                let former: &[usize] = &param_shape[..axis];
                let latter: &[usize] = &param_shape[axis + 1..];
                // doing former + indices.shape() + latter
                former
                    .iter()
                    .chain(indices_shape)
                    .chain(latter)
                    .cloned()
                    .collect()
            };

            let flat_indices = if self.should_normalize_negative_indices {
                normalize_negative_axes(indices, param_shape[axis])
            } else {
                indices
                    .map(|a| a.to_usize().expect("Invalid index value"))
                    .into_raw_vec()
            };
            let selected = select(param, ndarray::Axis(axis), flat_indices.as_slice());
            let ret = selected.into_shape(output_shape.as_slice()).unwrap();
            ctx.append_output(ret);
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for GatherGrad {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let indices = ctx.input(0);
            let param = &ctx.input(1);
            let param_shape = param.shape();
            let gy = &ctx.input(2);
            let axis = if self.axis == -1 {
                param.ndim()
            } else {
                self.axis as usize
            };

            // get read-only view of gy and reshape it
            let gy = {
                let former = &param_shape[..axis];
                let latter = &param_shape[axis + 1..];
                let shape: Vec<usize> = former
                    .iter()
                    .chain(&[indices.len()])
                    .chain(latter)
                    .cloned()
                    .collect();
                gy.view().into_shape(shape).unwrap()
            };

            let mut gx = NdArray::zeros(param.shape());

            for (gy_sub, &i) in gy.axis_iter(ndarray::Axis(axis)).zip(indices) {
                let i = i.to_isize().unwrap();
                // get gx's sub view
                let gx_sliced = unsafe {
                    gx.slice_mut(
                        ndarray::SliceInfo::<_, ndarray::IxDyn, ndarray::IxDyn>::new(
                            (0..param.ndim())
                                .map(|dim| {
                                    if dim == axis {
                                        SliceInfoElem::Slice {
                                            start: i,
                                            end: Some(i + 1),
                                            step: 1,
                                        }
                                    } else {
                                        SliceInfoElem::Slice {
                                            start: 0,
                                            end: None,
                                            step: 1,
                                        }
                                    }
                                })
                                .collect::<Vec<_>>(),
                        )
                            .unwrap()
                            .as_ref(),
                    )
                };

                // squeeze
                let mut gx_sliced = gx_sliced.index_axis_move(ndarray::Axis(axis), 0);
                // assign gy to sliced view
                gx_sliced.zip_mut_with(&gy_sub, |gx, &gy| {
                    *gx += gy;
                });
            }

            ctx.append_output(gx);
            Ok(())
        }
    }

    fn run<T: Float>(op: &dyn op::Op<T>, inputs: Vec<NdArrayView<T>>) -> Result<Vec<NdArray<T>>, op::OpError> {
        let mut ctx = op::ComputeContext { inputs, outputs: Vec::new() };
        op.compute(&mut ctx)?;
        Ok(ctx.outputs)
    }

    let x = Array3::<f64>::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 100 + j * 10 + k) as f64).into_dyn();
    let s = run(&Slice { indices: vec![SliceInfoElem::Slice { start: 1, end: None, step: 1 }, SliceInfoElem::Index(1), SliceInfoElem::Slice { start: 0, end: None, step: 2 }] }, vec![x.view()]).unwrap();
    println!("slice [1.., 1, ..;2] = {}", s[0]);
    let sp = run(&Split { axis: -1, start_index: 1, end_index: 3 }, vec![x.view()]).unwrap();
    println!("split axis -1 [1..3] shape {:?}, [1] =\n{}", sp[0].shape(), sp[0].index_axis(ndarray::Axis(0), 1));
    let t = run(&Tile { axis: 0, num: 3 }, vec![x.view()]).unwrap();
    println!("tile x3 on axis 0: shape {:?}, sum {}", t[0].shape(), t[0].sum());
    let y = x.mapv(|v| -v);
    let c = run(&Concat { axis: 1 }, vec![x.view(), y.view()]).unwrap();
    println!("concat axis 1 shape {:?}", c[0].shape());
    let cg = run(&ConcatGrad { axis: 1, index: 1 }, vec![c[0].view(), x.view(), y.view()]).unwrap();
    println!("concat grad for the first input shape {:?}, equal to x: {}", cg[0].shape(), cg[0] == x);
    let indices = array![2.0, 0.0, -1.0].into_dyn();
    let g = run(&Gather { axis: 2, should_normalize_negative_indices: true }, vec![indices.view(), x.view()]).unwrap();
    println!("gather [2, 0, -1] on axis 2 =\n{}", g[0].index_axis(ndarray::Axis(0), 1));
    let gg = run(&GatherGrad { axis: 1 }, vec![array![0.0, 2.0, 0.0].into_dyn().view(), x.view(), NdArray::from_elem(IxDyn(&[2, 3, 4]), 1.0).view()]).unwrap();
    println!("gather grad (indices 0, 2, 0 on axis 1) =\n{}", gg[0].index_axis(ndarray::Axis(0), 0));
    println!("select rows 1, 1, 0 of a matrix =\n{}", select(&array![[1.0, 2.0], [3.0, 4.0]].into_dyn().view(), ndarray::Axis(0), &[1, 1, 0]));
}
