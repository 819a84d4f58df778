// source: neuronika/neuronika neuronika-variable/src/node/softmax/mod.rs @a5e37b21 (MIT OR Apache-2.0)
{
    use ndarray::{Array, Axis, Dimension, Zip};
    use ndarray::Array3;
    use std::cell::RefCell;
    use std::rc::Rc;
    // changed: the crate's Shared/Forward/Backward items defined locally, and its Gradient
    // type replaced by a Shared array (`.borrow_mut()` as before)
    type Shared<T> = Rc<RefCell<T>>;
    fn new_shared<T>(item: T) -> Rc<RefCell<T>> {
        Rc::new(RefCell::new(item))
    }
    trait Forward {
        fn forward(&self);
    }
    trait Backward {
        fn backward(&self);
    }

    pub(crate) struct Softmax<D>
    where
        D: Dimension,
    {
        operand_data: Shared<Array<f32, D>>,
        data: Shared<Array<f32, D>>,
        axis: Axis,
    }

    impl<D> Softmax<D>
    where
        D: Dimension,
    {
        pub(crate) fn new(
            operand_data: Shared<Array<f32, D>>,
            data: Shared<Array<f32, D>>,
            axis: usize,
        ) -> Self {
            Self {
                operand_data,
                data,
                axis: Axis(axis),
            }
        }
    }

    impl<D> Forward for Softmax<D>
    where
        D: Dimension,
    {
        fn forward(&self) {
            Zip::from(self.data.borrow_mut().lanes_mut(self.axis))
                .and(self.operand_data.borrow().lanes(self.axis))
                .for_each(|lane_v, lane_o| {
                    let max = lane_o.fold(f32::MIN, |x, &y| x.max(y));
                    let num = &lane_o.map(|&el| (el - max).exp());
                    let den = num.sum();
                    Zip::from(lane_v)
                        .and(num)
                        .for_each(|lane_v_el, &num_el| *lane_v_el = num_el / den);
                });
        }
    }

    pub(crate) struct SoftmaxBackward<D>
    where
        D: Dimension,
    {
        operand_gradient: Shared<Array<f32, D>>,
        data: Shared<Array<f32, D>>,
        gradient: Shared<Array<f32, D>>,
        axis: Axis,
    }

    impl<D> SoftmaxBackward<D>
    where
        D: Dimension,
    {
        pub(crate) fn new(
            operand_gradient: Shared<Array<f32, D>>,
            data: Shared<Array<f32, D>>,
            gradient: Shared<Array<f32, D>>,
            axis: usize,
        ) -> Self {
            Self {
                operand_gradient,
                data,
                gradient,
                axis: Axis(axis),
            }
        }
    }

    impl<D> Backward for SoftmaxBackward<D>
    where
        D: Dimension,
    {
        fn backward(&self) {
            Zip::from(self.operand_gradient.borrow_mut().lanes_mut(self.axis))
                .and(self.gradient.borrow().lanes(self.axis))
                .and(self.data.borrow().lanes(self.axis))
                .for_each(|mut op_grad_lane, grad_lane, data_lane| {
                    let sum = Zip::from(grad_lane)
                        .and(data_lane)
                        .fold(0., |acc, &grad_el, &data_el| acc + grad_el * data_el);
                    Zip::from(&mut op_grad_lane)
                        .and(&grad_lane)
                        .and(&data_lane)
                        .for_each(|op_grad_el, &grad_el, &data_el| {
                            *op_grad_el += data_el * (grad_el - sum)
                        });
                });
        }
    }

    // logits of a batch of 2 sequences x 3 positions x 4 classes, softmax over the classes
    let logits = Array3::from_shape_fn((2, 3, 4), |(b, t, c)| ((b * 7 + t * 3 + c * 5) % 11) as f32 * 0.3 - 1.0);
    let operand = new_shared(logits.clone());
    let data = new_shared(Array3::<f32>::zeros((2, 3, 4)));
    let node = Softmax::new(operand.clone(), data.clone(), 2);
    node.forward();
    println!("softmax over axis 2 =\n{:.4}", data.borrow());
    println!("sums = {:.4}", data.borrow().sum_axis(Axis(2)));

    let upstream = new_shared(Array3::from_shape_fn((2, 3, 4), |(b, t, c)| if c == (b + t) % 4 { 1.0f32 } else { 0.0 }));
    let op_grad = new_shared(Array3::<f32>::zeros((2, 3, 4)));
    let back = SoftmaxBackward::new(op_grad.clone(), data.clone(), upstream.clone(), 2);
    back.backward();
    println!("gradient =\n{:.4}", op_grad.borrow());

    // the same nodes over axis 0 of a matrix
    let m = new_shared(ndarray::arr2(&[[1.0f32, 2.0, 0.5], [3.0, -1.0, 0.5]]));
    let out = new_shared(Array::zeros((2, 3)));
    Softmax::new(m, out.clone(), 0).forward();
    println!("axis 0 of a matrix =\n{:.4}", out.borrow());
}
