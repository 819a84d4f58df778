// source: raskr/rust-autograd src/tensor_ops/activation_ops.rs @53dbc95d (MIT)
{
    use ndarray;
    use ndarray::{Array4, Axis, IxDyn};
    // changed: the crate's Float trait is a local trait over ndarray's NdFloat; the graph's
    // op::Op / ComputeContext replaced by a minimal local `op` module (inputs as dynamic views;
    // outputs, views included, collected as owned arrays) so that the `compute` bodies run as
    // written; the MKL branch (cfg'd out by default) and the `grad` halves dropped
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
            pub fn append_output(&mut self, y: ndarray::Array<T, ndarray::IxDyn>) {
                self.outputs.push(y);
            }
            pub fn append_output_view(&mut self, y: ndarray::ArrayView<'v, T, ndarray::IxDyn>) {
                self.outputs.push(y.to_owned());
            }
        }
        #[derive(Debug)]
        pub enum OpError {}
        pub trait Op<T> {
            fn compute(&self, ctx: &mut ComputeContext<T>) -> Result<(), OpError>;
        }
    }

    pub struct ELU<T> {
        pub alpha: T,
    }

    pub struct ELUGrad<T> {
        pub alpha: T,
    }

    pub struct Identity;

    pub struct ReLU;

    pub struct Sigmoid;

    pub struct Softplus;



    impl<T: Float> op::Op<T> for Softplus {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let ret = ctx.input(0).map(move |a| (a.exp() + T::one()).ln());
            ctx.append_output(ret);
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for Sigmoid {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let ret;
            {
                let half = T::from(0.5).unwrap();
                ret = ctx
                    .input(0)
                    .mapv(move |a| ((a * half).tanh() * half) + half);
            }
            ctx.append_output(ret);
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for ReLU {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let ret = ctx.input(0).map(|a| a.max(T::zero()));
            ctx.append_output(ret);
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for Identity {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            // do nothing
            let ret = ctx.input(0);
            ctx.append_output_view(ret);
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for ELU<T> {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let ret = ctx.input(0).mapv(move |a| {
                if a > T::zero() {
                    a
                } else {
                    self.alpha * (a.exp() - T::one())
                }
            });
            ctx.append_output(ret);
            Ok(())
        }
    }

    impl<T: Float> op::Op<T> for ELUGrad<T> {
        fn compute(&self, ctx: &mut op::ComputeContext<T>) -> Result<(), op::OpError> {
            let x = &ctx.input(0);
            let a = x.mapv(move |a| {
                if a > T::zero() {
                    T::one()
                } else {
                    self.alpha * (a.exp() - T::one()) + self.alpha
                }
            });
            let ret = a * &ctx.input(1);
            ctx.append_output(ret);
            Ok(())
        }
    }

    fn run<T: Float>(op: &dyn op::Op<T>, inputs: Vec<NdArrayView<T>>) -> NdArray<T> {
        let mut ctx = op::ComputeContext { inputs, outputs: Vec::new() };
        op.compute(&mut ctx).unwrap();
        ctx.outputs.pop().unwrap()
    }

    // a batch of 2 feature maps with 2 channels of 2 x 3 pre-activations
    let x = Array4::<f64>::from_shape_fn((2, 2, 2, 3), |(n, c, i, j)| (n as f64 - 0.5) * 2.0 + c as f64 - i as f64 * 1.5 + j as f64 * 0.75).into_dyn();
    let sample = |a: &NdArray<f64>| format!("{:.4}", a.index_axis(Axis(0), 0).index_axis(Axis(0), 1));
    println!("x[0, 1] =\n{}", sample(&x));
    println!("relu =\n{}", sample(&run(&ReLU, vec![x.view()])));
    println!("sigmoid =\n{}", sample(&run(&Sigmoid, vec![x.view()])));
    println!("softplus =\n{}", sample(&run(&Softplus, vec![x.view()])));
    println!("elu(0.5) =\n{}", sample(&run(&ELU { alpha: 0.5 }, vec![x.view()])));
    let gy = NdArray::from_elem(IxDyn(&[2, 2, 2, 3]), 2.0);
    println!("elu grad =\n{}", sample(&run(&ELUGrad { alpha: 0.5 }, vec![x.view(), gy.view()])));
    println!("identity equals input: {}", run(&Identity, vec![x.view()]) == x);
    println!("sigmoid sum = {:.6}", run(&Sigmoid, vec![x.view()]).sum());
}
