// source: neuronika/neuronika neuronika-variable/src/utils.rs and neuronika-variable/src/node/convolution/mod.rs @a5e37b21 (MIT OR Apache-2.0)
{
    use ndarray::{linalg::general_mat_mul, Array, ArrayBase, ArrayViewD, Axis, Data, DataMut, Dimension, Ix2, Ix3, RemoveAxis, ShapeBuilder, Slice, Zip};
    use ndarray::{Array4, Ix4};
    // changed: itertools::izip! replaced by a small local macro of the same name; rayon's
    // `par_for_each` made the sequential `for_each`; `into_shape` updated to
    // `into_shape_with_order`
    macro_rules! izip {
        ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr) => {
            $a.zip($b).zip($c).zip($d).zip($e).map(|((((a, b), c), d), e)| (a, b, c, d, e))
        };
    }

    pub(crate) fn padded_shape<D>(shape: D, padding: <D::Smaller as Dimension>::Smaller) -> D
    where
        D: Dimension,
    {
        let shape = shape.slice();
        let padding = padding.slice();

        // Checks that the number of spatial dimension and input dimensions is the same.
        assert!(shape.len() - 2 == padding.len());

        let mut padded_input_shape = D::zeros(shape.len());
        padded_input_shape[0] = shape[0]; // Copy batch size.
        padded_input_shape[1] = shape[1]; // Copy input channels.
        padded_input_shape
            .slice_mut()
            .iter_mut()
            .skip(2)
            .zip(shape.iter().skip(2))
            .zip(padding.iter())
            .for_each(|((padded_dim, original_dim), padding)| *padded_dim = original_dim + 2 * padding);

        padded_input_shape
    }

    pub(crate) fn conv_out_shape<D>(
        input_shape: &[usize],
        kernel_shape: &[usize],
        stride: &[usize],
        dilation: &[usize],
    ) -> D
    where
        D: Dimension,
    {
        // Initialize the dimension to be all 0s.
        let mut output_map_shape = D::zeros(input_shape.len());
        // Sets the batch size. The batch size doesn't change.
        output_map_shape[0] = input_shape[0];
        // Sets the output channels.
        output_map_shape[1] = kernel_shape[0];
        // First two components of the shape are always
        // the batch size and channels.
        izip!(
            output_map_shape.slice_mut().iter_mut().skip(2), // Skips batch size and out channels.
            input_shape.iter().skip(2),                      // Skips batch size and out channels.
            kernel_shape.iter().skip(2),                     // Skips out channels and in channels.
            stride,
            dilation
        )
        .for_each(
            |(output_map_dim, input_dim, kernel_dim, stride, dilation)| {
                *output_map_dim = (input_dim - dilation * (kernel_dim - 1) - 1) / stride + 1
            },
        );
        output_map_shape
    }

    fn compute_rolling_window_shape<D, S>(
        input: &ArrayBase<S, D>,
        window_shape: &[usize],
        stride: &[usize],
        dilation: &[usize],
    ) -> Vec<usize>
    where
        D: Dimension,
        S: Data<Elem = f32>,
    {
        let mut indices: D = conv_out_shape(input.shape(), window_shape, stride, dilation);
        indices[1] = 1;
        indices
            .slice()
            .iter()
            .chain(window_shape.iter().skip(1))
            .cloned()
            .collect()
    }

    fn compute_rolling_window_strides<D, S>(
        input: &ArrayBase<S, D>,
        stride: &[usize],
        dilation: &[usize],
    ) -> Vec<usize>
    where
        D: Dimension,
        S: Data<Elem = f32>,
    {
        let indexing_strides: Vec<isize> = {
            let view = input.slice_each_axis(|ax| {
                let axis_index = ax.axis.index();
                if axis_index == 0 || axis_index == 1 {
                    Slice::new(0, None, 1) // Batch stride and channel stride
                } else {
                    Slice::new(0, None, stride[ax.axis.index() - 2] as isize)
                }
            });
            let view_strides: &[isize] = ArrayBase::strides(&view);
            view_strides.to_vec()
        };
        // Number of in channels doesn't count for the window's strides,
        // it must be left unchanged.
        let window_strides: Vec<isize> = input
            .strides()
            .iter()
            .skip(1) // Skip out channels
            .enumerate()
            .map(|(i, input_stride)| {
                if i < 1 {
                    *input_stride
                } else {
                    *input_stride * (dilation[i - 1] as isize)
                }
            })
            .collect();
        indexing_strides
            .iter()
            .chain(window_strides.iter())
            .map(|s| *s as usize)
            .collect()
    }

    pub(crate) fn as_windows<'a, D, S>(
        input: &ArrayBase<S, D>,
        window_shape: &[usize],
        stride: &[usize],
        dilation: &[usize],
    ) -> ArrayViewD<'a, f32>
    where
        D: Dimension,
        S: Data<Elem = f32>,
    {
        let rolling_window_shape: Vec<usize> =
            compute_rolling_window_shape(input, window_shape, stride, dilation);
        let rolling_window_strides: Vec<usize> =
            compute_rolling_window_strides(input, stride, dilation);

        unsafe {
            ArrayViewD::from_shape_ptr(
                rolling_window_shape.strides(rolling_window_strides),
                input.as_ptr(),
            )
        }
    }

    pub(crate) fn columns_shape<D, S>(
        input: &ArrayBase<S, D>,
        kernel_shape: &[usize],
        stride: &[usize],
        dilation: &[usize],
    ) -> Ix3
    where
        D: Dimension,
        S: Data<Elem = f32>,
    {
        let output_map_shape = conv_out_shape::<D>(input.shape(), kernel_shape, stride, dilation);
        let mut columns_shape = Ix3::zeros(3);
        columns_shape[0] = output_map_shape[0];
        columns_shape[1] = output_map_shape.slice().iter().skip(2).product();
        columns_shape[2] = kernel_shape.iter().skip(1).product();

        columns_shape
    }

    fn flat_shape<D>(shape: D) -> Ix2
    where
        D: Dimension,
    {
        let mut flat_shape = Ix2::zeros(2);
        flat_shape[0] = shape[0];
        flat_shape[1] = shape.slice().iter().skip(1).product();
        flat_shape
    }

    fn convolution<
        D: Dimension + RemoveAxis,
        S: Data<Elem = f32>,
        U: Data<Elem = f32>,
        T: DataMut<Elem = f32>,
    >(
        input: &ArrayBase<S, D>,
        kernel: &ArrayBase<U, D>,
        output: &mut ArrayBase<T, D>,
        stride: &[usize],
        dilation: &[usize],
    ) {
        let (kernel_shape, flattened_kernel) = (
            kernel.shape(),
            kernel
                .view()
                .into_shape_with_order(flat_shape(kernel.raw_dim()))
                .unwrap(),
        );

        let input_windows = as_windows(input, kernel_shape, stride, dilation);
        let input_columns = input_windows
            .to_shape(columns_shape(input, kernel_shape, stride, dilation))
            .unwrap();

        Zip::from(input_columns.axis_iter(Axis(0)))
            .and(output.axis_iter_mut(Axis(0)))
            .for_each(|input_sample_columns, output_sample| {
                let flat_shape = flat_shape(output_sample.raw_dim());
                let mut flattened_sample_out_view_mut = output_sample.into_shape_with_order(flat_shape).unwrap();
                general_mat_mul(
                    1.,
                    &flattened_kernel,
                    &input_sample_columns.t(),
                    0.,
                    &mut flattened_sample_out_view_mut,
                );
            });
    }

    // a batch of 2 images, 2 input channels, 5 x 5 pixels; 3 output channels with 3 x 3 kernels
    let input = Array4::from_shape_fn((2, 2, 5, 5), |(n, c, i, j)| ((n * 50 + c * 25 + i * 5 + j) % 7) as f32 - 3.0);
    let kernel = Array4::from_shape_fn((3, 2, 3, 3), |(o, c, i, j)| ((o + 2 * c + i * j) % 3) as f32 - 1.0);
    println!("padded shape = {:?}", padded_shape(input.raw_dim(), ndarray::Dim([1, 2])));
    for (stride, dilation) in [([1, 1], [1, 1]), ([2, 2], [1, 1]), ([1, 1], [2, 2])] {
        let out_shape: Ix4 = conv_out_shape(input.shape(), kernel.shape(), &stride, &dilation);
        let mut output = Array4::<f32>::zeros(out_shape);
        convolution(&input, &kernel, &mut output, &stride, &dilation);
        println!("stride {:?} dilation {:?}: columns {:?}, output {:?}", stride, dilation,
            columns_shape(&input, kernel.shape(), &stride, &dilation).slice(), output.shape());
        println!("{}", output.index_axis(Axis(0), 1));
    }
    let windows = as_windows(&input, kernel.shape(), &[2, 2], &[1, 1]);
    println!("windows shape = {:?}, first window sum = {}", windows.shape(), windows.slice(ndarray::s![0, 0, 0, 0, .., .., ..]).sum());
}
