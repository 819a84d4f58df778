// source: neuronika/neuronika neuronika-variable/src/node/pad/{mod.rs,padding_mode.rs,reflective/mod.rs,replicative/mod.rs} @a5e37b21 (MIT OR Apache-2.0)
{
    use ndarray::{Array, ArrayView, ArrayViewMut, Dimension, Ix4, RemoveAxis};
    use ndarray::Array4;
    use std::cell::RefCell;
    use std::rc::Rc;
    // changed: the crate's Shared and Forward items defined locally; the rayon parallel
    // iteration in `forward` made sequential (`.into_par_iter()` dropped); `into_shape` updated
    // to `into_shape_with_order`; only the Ix4 (2-d images) padding modes kept
    type Shared<T> = Rc<RefCell<T>>;
    trait Forward {
        fn forward(&self);
    }

    type SampleDim<D> = <<D as Dimension>::Smaller as Dimension>::Smaller;

    /// Padding mode.
    pub trait PaddingMode<D>: Send + Sync + Copy
    where
        D: Dimension,
        D::Smaller: RemoveAxis,
    {
        fn pad(
            &self,
            padded: &mut ArrayViewMut<f32, SampleDim<D>>,
            base: &ArrayView<f32, SampleDim<D>>,
            padding: SampleDim<D>,
        );
    }

    /// Reflective padding.
    #[derive(Copy, Clone, Debug)]
    pub struct Reflective;

    impl PaddingMode<Ix4> for Reflective {
        fn pad(
            &self,
            padded: &mut ArrayViewMut<f32, SampleDim<Ix4>>,
            base: &ArrayView<f32, SampleDim<Ix4>>,
            padding: SampleDim<Ix4>,
        ) {
            let (mut pos_x, mut pos_y);

            let (len_x, len_y) = {
                let base_shape = base.shape();
                (base_shape[0], base_shape[1])
            };

            let (pad_x, pad_y) = padding.into_pattern();
            let (out_len_x, out_len_y) = (len_x + pad_x * 2, len_y + pad_y * 2);
            let (slice_in, slice_out) = (base.as_slice().unwrap(), padded.as_slice_mut().unwrap());

            for i in 0..out_len_x {
                for j in 0..out_len_y {
                    if j < pad_y {
                        pos_x = pad_y * 2 - j;
                    } else if j >= pad_y && j < len_y + pad_y {
                        pos_x = j;
                    } else {
                        pos_x = (len_y + pad_y - 1) * 2 - j;
                    }
                    pos_x -= pad_y;

                    if i < pad_x {
                        pos_y = pad_x * 2 - i;
                    } else if i >= pad_x && i < len_x + pad_x {
                        pos_y = i;
                    } else {
                        pos_y = (len_x + pad_x - 1) * 2 - i;
                    }

                    pos_y -= pad_x;
                    slice_out[i * out_len_y + j] = slice_in[pos_y * len_y + pos_x];
                }
            }
        }
    }

    /// Replicative padding.
    #[derive(Copy, Clone, Debug)]
    pub struct Replicative;

    impl PaddingMode<Ix4> for Replicative {
        fn pad(
            &self,
            padded: &mut ArrayViewMut<f32, SampleDim<Ix4>>,
            base: &ArrayView<f32, SampleDim<Ix4>>,
            padding: SampleDim<Ix4>,
        ) {
            let (mut pos_x, mut pos_y);
            let (len_x, len_y) = {
                let base_shape = base.shape();
                (base_shape[0], base_shape[1])
            };

            let (pad_x, pad_y) = padding.into_pattern();
            let (out_len_x, out_len_y) = (len_x + pad_x * 2, len_y + pad_y * 2);
            let (slice_in, slice_out) = (base.as_slice().unwrap(), padded.as_slice_mut().unwrap());

            for i in 0..out_len_x {
                for j in 0..out_len_y {
                    if j < pad_y {
                        pos_x = pad_y;
                    } else if j >= pad_y && j < len_y + pad_y {
                        pos_x = j;
                    } else {
                        pos_x = len_y + pad_y - 1;
                    }
                    pos_x -= pad_y;

                    if i < pad_x {
                        pos_y = pad_x;
                    } else if i >= pad_x && i < len_x + pad_x {
                        pos_y = i;
                    } else {
                        pos_y = len_x + pad_x - 1;
                    }
                    pos_y -= pad_x;
                    slice_out[i * out_len_y + j] = slice_in[pos_y * len_y + pos_x];
                }
            }
        }
    }

    pub(crate) struct Pad<D, T>
    where
        D: Dimension,
        D::Smaller: RemoveAxis,
        SampleDim<D>: Copy,
        T: PaddingMode<D>,
    {
        operand_data: Shared<Array<f32, D>>,
        data: Shared<Array<f32, D>>,
        mode: T,
        padding: SampleDim<D>,
        batch_collapsed_dim: D::Smaller,
        batch_collapsed_padded_dim: D::Smaller,
    }

    impl<D, T> Pad<D, T>
    where
        D: Dimension,
        D::Smaller: RemoveAxis,
        SampleDim<D>: Copy,
        T: PaddingMode<D>,
    {
        pub(crate) fn new(
            operand_data: Shared<Array<f32, D>>,
            data: Shared<Array<f32, D>>,
            mode: T,
            padding: SampleDim<D>,
        ) -> Self {
            let operand_data_dim = operand_data.borrow().raw_dim();
            let data_dim = data.borrow().raw_dim();

            let (mut batch_collapsed_dim, mut batch_collapsed_padded_dim) = (
                <D as Dimension>::Smaller::zeros(operand_data_dim.ndim() - 1),
                <D as Dimension>::Smaller::zeros(data_dim.ndim() - 1),
            );

            let outer_dimension: usize = operand_data_dim.slice().iter().take(2).product();

            batch_collapsed_dim[0] = outer_dimension;
            batch_collapsed_padded_dim[0] = outer_dimension;

            let (sample_dim, padded_sample_dim) = (
                operand_data_dim.slice().iter().skip(2),
                data_dim.slice().iter().skip(2),
            );

            batch_collapsed_dim
                .slice_mut()
                .iter_mut()
                .skip(1)
                .zip(sample_dim)
                .for_each(|(view_dim, inner_dim)| *view_dim = *inner_dim);
            batch_collapsed_padded_dim
                .slice_mut()
                .iter_mut()
                .skip(1)
                .zip(padded_sample_dim)
                .for_each(|(view_dim, inner_dim)| *view_dim = *inner_dim);

            Self {
                operand_data,
                data,
                mode,
                padding,
                batch_collapsed_dim,
                batch_collapsed_padded_dim,
            }
        }
    }

    impl<D, T> Forward for Pad<D, T>
    where
        D: Dimension,
        D::Smaller: RemoveAxis,
        SampleDim<D>: Copy,
        T: PaddingMode<D>,
    {
        fn forward(&self) {
            let operand_data = self.operand_data.borrow();
            let mut data = self.data.borrow_mut();

            let batch_collapsed_padded_dim = self.batch_collapsed_padded_dim.clone();
            let batch_collapsed_dim = self.batch_collapsed_dim.clone();

            let (mut data_view_mut, operand_data_view) = (
                data.view_mut()
                    .into_shape_with_order(batch_collapsed_padded_dim)
                    .unwrap(),
                operand_data.view().into_shape_with_order(batch_collapsed_dim).unwrap(),
            );

            let mode = self.mode;
            let padding = self.padding;

            data_view_mut
                .outer_iter_mut()
                .zip(operand_data_view.outer_iter())
                .for_each(|(mut padded_sample, base_sample)| {
                    mode.pad(&mut padded_sample, &base_sample, padding)
                });
        }
    }

    // a batch of 2 images with 2 channels of 3 x 4 pixels
    let images = Array4::from_shape_fn((2, 2, 3, 4), |(n, c, i, j)| (n * 100 + c * 20 + i * 4 + j) as f32);
    let operand = Rc::new(RefCell::new(images));
    let reflected = Rc::new(RefCell::new(Array4::<f32>::zeros((2, 2, 5, 8))));
    let node = Pad::new(operand.clone(), reflected.clone(), Reflective, ndarray::Dim([1, 2]));
    node.forward();
    println!("reflective, image 1 channel 0 =\n{}", reflected.borrow().slice(ndarray::s![1, 0, .., ..]));
    let replicated = Rc::new(RefCell::new(Array4::<f32>::zeros((2, 2, 7, 6))));
    Pad::new(operand.clone(), replicated.clone(), Replicative, ndarray::Dim([2, 1])).forward();
    println!("replicative, image 0 channel 1 =\n{}", replicated.borrow().slice(ndarray::s![0, 1, .., ..]));
    println!("sums = {} {}", reflected.borrow().sum(), replicated.borrow().sum());
}
