// source: raskr/rust-autograd src/tensor_ops/activation_ops.rs, src/tensor_ops/math_ops.rs, src/tensor_ops/xent_ops.rs, src/ndarray_ext.rs @53dbc95d (MIT)
{
    use ndarray;
    use ndarray::{array, Axis, IxDyn};
    // changed: the crate's Float trait is a local trait over ndarray's NdFloat; the graph's
    // op::Op / ComputeContext replaced by a minimal local `op` module (inputs as dynamic views,
    // outputs collected in a Vec) so that the `compute` bodies run as written, with the paths
    // `crate::tensor_ops::math_ops::logsumexp_forward` shortened to `logsumexp_forward`; the MKL
    // branches (cfg'd out by default) dropped; the `grad` halves of the ops dropped
    pub trait Float: ndarray::NdFloat {}
    impl Float for f32 {}
    impl Float for f64 {}
    /// alias for `ndarray::Array<T, IxDyn>`
    pub type NdArray<T> = ndarray::Array<T, ndarray::IxDyn>;
    /// alias for `ndarray::ArrayView<T, IxDyn>`
    pub type NdArrayView<'a, T> = ndarray::ArrayView<'a, T, ndarray::IxDyn>;
    mod op {
        pub struct ComputeContext<'v, T> {
            pub inputs: Vec<ndarray::ArrayView<'v, T, ndarray::IxDyn>>,
            pub outputs: Vec<ndarray::Array<T, ndarray::IxDyn>>,
        }
        impl<'v, T> ComputeContext<'v, T> {
            pub fn input(&self, i: usize) -> ndarray::ArrayView<'v, T, ndarray::IxDyn> {
                self.inputs[i].clone()
            }
            pub fn append_output(&mut self, y: ndarray::Array<T, ndarray::IxDyn>) {
                self.outputs.push(y);
            }
        }
        #[derive(Debug)]
        pub enum OpError {
            IncompatibleShape(String),
        }
        pub trait Op<T> {
            fn compute(&self, ctx: &mut ComputeContext<T>) -> Result<(), OpError>;
        }
    }

    #[inline]
    pub fn softmax_impl<T: Float>(x: &NdArrayView<T>, axis: isize) -> NdArray<T> {
        let axis = if axis < 0 {
            (x.ndim() as isize + axis) as usize
        } else {
            axis as usize
        };

        let mut a = x.shape().to_vec();
        a[axis] = 1;
        let reduced_shape = a.as_slice();
        let max_fn = T::max;
        // unwrap is safe
        let max = &x
            .fold_axis(ndarray::Axis(axis), T::min_value(), move |&a, &b| {
                max_fn(a, b)
            })
            .into_shape(ndarray::IxDyn(reduced_shape))
            .unwrap();
        // subtract `max` to prevent overflow
        let mut tmp = x - max;
        {
            tmp.mapv_inplace(move |a| a.exp());
        }
        // unwrap is safe
        let sum = tmp
            .sum_axis(ndarray::Axis(axis))
            .into_shape(ndarray::IxDyn(reduced_shape))
            .unwrap();
        tmp /= &sum;
        tmp
    }

    pub fn logsumexp_forward<T: Float>(x: &NdArrayView<T>, axis: isize, keep_dims: bool) -> NdArray<T> {
        let axis = if axis < 0 {
            (x.ndim() as isize + axis) as usize
        } else {
            axis as usize
        };

        let mut a = x.shape().to_vec();
        if keep_dims {
            a[axis] = 1;
        } else {
            a.remove(axis);
        }
        let reduced_shape = a.as_slice();

        let max_fn = T::max;
        let min_val = T::min_value();
        let max = &x
            .fold_axis(ndarray::Axis(axis), min_val, move |&a, &b| max_fn(a, b))
            .into_shape(ndarray::IxDyn(reduced_shape))
            .unwrap();

        let exp = {
            // subtract `max` to prevent overflow of exp
            let mut tmp = x - max;
            {
                tmp.mapv_inplace(move |a| a.exp());
            }
            tmp
        };

        // unwrap is safe
        let mut sum = exp
            .sum_axis(ndarray::Axis(axis))
            .into_shape(ndarray::IxDyn(reduced_shape))
            .unwrap();

        {
            sum.mapv_inplace(move |a| a.ln());
            sum += max;
            sum
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
    pub(crate) fn shape_of_view<T: Float>(x: &NdArrayView<T>) -> NdArray<T> {
        let shape = x
            .shape()
            .iter()
            .map(|&a| T::from(a).unwrap())
            .collect::<Vec<T>>();
        let rank = shape.len();
        // safe unwrap
        NdArray::from_shape_vec(ndarray::IxDyn(&[rank]), shape).unwrap()
    }
    pub struct LogSoftmax {
        pub axis: isize,
    }
    pub struct SigmoidCrossEntropy;
    pub struct SparseSoftmaxCrossEntropy;

    impl<T: Float> op::Op<T> for LogSoftmax {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let x = &ctx.input(0);
            ctx.append_output(x - &logsumexp_forward(&x, self.axis, true));
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for SigmoidCrossEntropy {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let x: &NdArrayView<T> = &ctx.input(0);
            let t: &NdArrayView<T> = &ctx.input(1);

            assert_eq!(x.shape(), t.shape(), "x.shape must match t.shape");

            let max_fn = T::max;
            let mut tmp: NdArray<T> =
                x.mapv(move |a| ((-a.abs()).exp() + T::one()).ln() + max_fn(T::zero(), a));
            tmp -= &(t * x);
            ctx.append_output(tmp);
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for SparseSoftmaxCrossEntropy {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let (x, t) = (&ctx.input(0), &ctx.input(1));
            let log_x: NdArray<T> = x - &logsumexp_forward(x, 1, true);

            // validation
            {
                let t_shape = t.shape();
                if log_x.ndim() != 2 {
                    return Err(op::OpError::IncompatibleShape(format!(
                        "SparseSoftmaxCrossEntropy: given first argument's ndim is not 2: shape={:?}",
                        log_x.shape()
                    )));
                }
                let t_rank = t_shape.len();
                if t_rank == 2 {
                    // example label shape: [batch_size, 1]
                    if t_shape[1] != 1 {
                        return Err(op::OpError::IncompatibleShape(
                            format!("SparseSoftmaxCrossEntropy: second argument's shape must be (batch_size, 1) or (batch_size,). given shape={:?}", t_shape)
                        ));
                    }
                } else if t_rank != 1 {
                    // example label shape: [batch_size]
                    return Err(op::OpError::IncompatibleShape(
                        format!("SparseSoftmaxCrossEntropy: second argument's shape must be (batch_size, 1) or (batch_size,). given shape={:?}", t_shape)
                    ));
                }
            }

            let mut t_iter = t.iter();
            // loops batch size times.
            let ret = log_x
                .map_axis(ndarray::Axis(1), move |row| {
                    -*row
                        .get(
                            t_iter
                                .next()
                                .expect("Batch size mismatch: inputs vs labels")
                                .to_usize()
                                .expect("Invalid label value: can't cast to usize"),
                        )
                        .expect("Wrong label value")
                })
                .into_shape(ndarray::IxDyn(&[log_x.shape()[0], 1]))
                .unwrap();

            ctx.append_output(ret);
            ctx.append_output(log_x);
            Ok(())
        }
    }

    fn run<T: Float>(op: &dyn op::Op<T>, inputs: Vec<NdArrayView<T>>) -> Result<Vec<NdArray<T>>, op::OpError> {
        let mut ctx = op::ComputeContext { inputs, outputs: Vec::new() };
        op.compute(&mut ctx)?;
        Ok(ctx.outputs)
    }

    let logits = array![[2.0, 1.0, 0.1], [0.5, 2.5, -1.0], [1.0, 1.0, 1.0], [-2.0, 0.0, 3.0]].into_dyn();
    println!("softmax(axis -1) =\n{:.5}", softmax_impl(&logits.view(), -1));
    println!("logsumexp(axis 1, keep) = {:.5}", logsumexp_forward(&logits.view(), 1, true).t());
    println!("logsumexp(axis 0) = {:.5}", logsumexp_forward(&logits.view(), 0, false));
    let out = run(&LogSoftmax { axis: 1 }, vec![logits.view()]).unwrap();
    println!("log_softmax =\n{:.5}", out[0]);
    let labels = array![0.0, 1.0, 2.0, 2.0].into_dyn();
    let out = run(&SparseSoftmaxCrossEntropy, vec![logits.view(), labels.view()]).unwrap();
    println!("sparse softmax cross entropy = {:.5}", out[0].t());
    let targets = array![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]].into_dyn();
    let out = run(&SigmoidCrossEntropy, vec![logits.view(), targets.view()]).unwrap();
    println!("sigmoid cross entropy =\n{:.5}", out[0]);
    let bad = array![[[1.0f32]]].into_dyn();
    println!("{:?}", run(&SparseSoftmaxCrossEntropy, vec![bad.view(), array![0.0f32].into_dyn().view()]).err().is_some());
    // the same on a 3-d batch, softmax over the middle axis
    let cube = NdArray::from_shape_fn(IxDyn(&[2, 3, 2]), |d| (d[0] * 6 + d[1] * 2 + d[2]) as f32 * 0.25);
    println!("3-d softmax sums = {:.4}", softmax_impl(&cube.view(), 1).sum_axis(Axis(1)));
    let mut e = expand_dims(cube.clone(), 0);
    println!("expand_dims shape {:?}", e.shape());
    roll_axis(&mut e, Axis(0), Axis(3));
    println!("roll_axis shape {:?}, shape_of_view {}", e.shape(), shape_of_view(&e.view()));
}
