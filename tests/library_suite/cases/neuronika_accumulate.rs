// source: neuronika/neuronika neuronika-variable/src/utils.rs @a5e37b21 (MIT OR Apache-2.0)
{
    use ndarray::{Array, Axis, DimMax, Dimension};
    use ndarray::{Array1, Array2, Array3, Ix3};
    // changed: `into_shape` updated to `into_shape_with_order`
    /// A broadcasted ndarray's dimension.
    pub(crate) type Broadcast<D, E> = <D as DimMax<E>>::Output;

    pub(crate) fn cobroadcast<D, E>(left: D, right: E) -> Broadcast<D, E>
    where
        D: Dimension + DimMax<E>,
        E: Dimension,
    {
        let (bigger, smaller) = if left.ndim() >= right.ndim() {
            (left.slice(), right.slice())
        } else {
            (right.slice(), left.slice())
        };

        let mut out = <D as DimMax<E>>::Output::zeros(bigger.len());
        out.slice_mut()
            .iter_mut()
            .zip(bigger)
            .for_each(|(l, &r)| *l = r);

        out.slice_mut()
            .iter_mut()
            .skip(bigger.len() - smaller.len())
            .zip(smaller)
            .filter(|(l, r)| l != r)
            .for_each(|(l, &r)| match l {
                1 => *l = r,
                _ => assert_eq!(r, 1, "The two tensors have incompatible shape."),
            });

        out
    }

    pub(crate) fn cobroadcasted_zeros<D, E>(
        left: &Array<f32, D>,
        right: &Array<f32, E>,
    ) -> Array<f32, Broadcast<D, E>>
    where
        D: Dimension + DimMax<E>,
        E: Dimension,
    {
        Array::zeros(cobroadcast(left.raw_dim(), right.raw_dim()))
    }

    pub(crate) fn accumulate<D, E>(target: &mut Array<f32, D>, source: &Array<f32, E>)
    where
        D: Dimension,
        E: Dimension,
    {
        debug_assert!(target.ndim() <= source.ndim());

        if source.shape() == target.shape() {
            *target += source;
            return;
        }

        // Computes the difference between the number of dimensions
        let target_dims = target.ndim();
        let source_shape = source.shape();
        let k = source_shape.len() - target_dims;
        let mut reshape = D::Larger::zeros(target_dims + 1);
        reshape[0] = source_shape[..k].iter().product();
        reshape
            .slice_mut()
            .iter_mut()
            .skip(1)
            .zip(source_shape.iter().skip(k))
            .for_each(|(r, &s)| *r = s);

        // Reshapes such that the sub-views match the dimensionality of target
        let view = source.view().into_shape_with_order(reshape).unwrap();
        let axis = Axis(target_dims - 1);
        let mut lanes_v = view.lanes(axis).into_iter();
        while lanes_v.len() > 0 {
            for mut lane_t in target.lanes_mut(axis) {
                if let Some(lane_v) = lanes_v.next() {
                    if lane_t.len() == 1 {
                        lane_t[0] += lane_v.sum();
                    } else {
                        lane_t += &lane_v;
                    }
                }
            }
        }
    }

    // the forward pass of `a + b` broadcasts a bias over a batch; the backward pass reduces it
    let x = Array3::<f32>::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as f32 * 0.5);
    let bias = Array1::<f32>::from(vec![1.0, -1.0, 0.5, 2.0]);
    let shape: Ix3 = cobroadcast(x.raw_dim(), bias.raw_dim());
    println!("cobroadcast shape = {:?}", shape.slice());
    let mut sum = cobroadcasted_zeros(&x, &bias);
    sum += &x;
    sum += &bias;
    println!("sum[1] =\n{}", sum.index_axis(Axis(0), 1));

    // gradients flowing back into operands of other shapes
    let grad = Array3::<f32>::from_shape_fn((2, 3, 4), |(i, j, k)| (1 + i + j * k) as f32);
    let mut keep_grad = Array3::<f32>::zeros((2, 3, 1));
    accumulate(&mut keep_grad, &grad);
    println!("(2, 3, 1) grad = {}", keep_grad.index_axis(Axis(2), 0));
    let mut col_grad = Array2::<f32>::zeros((3, 1));
    accumulate(&mut col_grad, &grad);
    println!("column grad = {}", col_grad.t());
    let mut full = Array3::<f32>::ones((2, 3, 4));
    accumulate(&mut full, &grad);
    println!("full grad sum = {}", full.sum());
    println!("2-d with 2-d: {:?}", cobroadcast(Array2::<f32>::zeros((3, 1)).raw_dim(), Array2::<f32>::zeros((1, 5)).raw_dim()).slice());
}
