// source: TYPEmber/ndarray-conv src/padding/{mod.rs,dim.rs,half_dim.rs} and src/lib.rs @066680b0 (MIT OR Apache-2.0)
{
    use ndarray::{array, Array2, Array3, Axis};
    // changed: the crate's modules are nested in one local module `padding` (so that their
    // `super::` paths resolve), and `num::traits::NumAssign` is a small local trait of that
    // name over ndarray's LinalgScalar and the std assign operators
    mod padding {
        pub mod num {
            pub mod traits {
                use ndarray::LinalgScalar;
                pub trait NumAssign: LinalgScalar + std::ops::AddAssign + std::ops::SubAssign + std::ops::MulAssign + std::ops::DivAssign {}
                impl<T: LinalgScalar + std::ops::AddAssign + std::ops::SubAssign + std::ops::MulAssign + std::ops::DivAssign> NumAssign for T {}
            }
        }

        #[derive(Debug, Clone, Copy)]
        pub enum PaddingMode<const N: usize, T: num::traits::NumAssign + Copy> {
            Zeros,
            Const(T),
            Reflect,
            Replicate,
            Circular,
            Custom([BorderType<T>; N]),
            Explicit([[BorderType<T>; 2]; N]),
        }

        #[derive(Debug, Clone, Copy)]
        pub enum BorderType<T: num::traits::NumAssign + Copy> {
            Zeros,
            Const(T),
            Reflect,
            Replicate,
            Circular,
        }
        use ndarray::{
            Array, ArrayBase, Data, DataMut, Dim, IntoDimension, Ix, RemoveAxis, SliceArg, SliceInfo,
            SliceInfoElem,
        };
        use self::num::traits::NumAssign;


        pub type ExplicitPadding<const N: usize> = [[usize; 2]; N];

        pub trait PaddingExt<const N: usize, T: num::traits::NumAssign + Copy, Output> {
            fn padding(&self, mode: PaddingMode<N, T>, padding_size: ExplicitPadding<N>) -> Output;

            fn padding_in<SO: DataMut<Elem = T>, DO: RemoveAxis>(
                &self,
                buffer: &mut ArrayBase<SO, DO>,
                mode: PaddingMode<N, T>,
                padding_size: ExplicitPadding<N>,
            ) where
                T: NumAssign + Copy,
                [Ix; N]: IntoDimension<Dim = Dim<[Ix; N]>>,
                SliceInfo<[SliceInfoElem; N], Dim<[Ix; N]>, Dim<[Ix; N]>>: SliceArg<Dim<[Ix; N]>>,
                Dim<[Ix; N]>: RemoveAxis,
                SliceInfo<[SliceInfoElem; N], DO, DO>: SliceArg<DO>;
        }

        impl<const N: usize, T, S, D> PaddingExt<N, T, Array<T, Dim<[Ix; N]>>> for ArrayBase<S, D>
        where
            T: NumAssign + Copy,
            S: Data<Elem = T>,
            [Ix; N]: IntoDimension<Dim = Dim<[Ix; N]>>,
            SliceInfo<[SliceInfoElem; N], Dim<[Ix; N]>, Dim<[Ix; N]>>: SliceArg<Dim<[Ix; N]>>,
            Dim<[Ix; N]>: RemoveAxis,
            D: RemoveAxis + IntoDimension,
        {
            fn padding(
                &self,
                mode: PaddingMode<N, T>,
                explicit_padding: ExplicitPadding<N>,
            ) -> Array<T, Dim<[Ix; N]>> {
                let c = match mode {
                    PaddingMode::Const(c) => c,
                    _ => T::zero(),
                };

                let raw_dim = self.raw_dim();

                let output_dim =
                    std::array::from_fn(|i| raw_dim[i] + explicit_padding[i][0] + explicit_padding[i][1]);

                let mut output: Array<T, Dim<[Ix; N]>> = Array::from_elem(output_dim, c);

                padding_const(self, &mut output, explicit_padding);

                match mode {
                    PaddingMode::Replicate => padding_replicate(self, &mut output, explicit_padding),
                    PaddingMode::Reflect => padding_reflect(self, &mut output, explicit_padding),
                    PaddingMode::Circular => padding_circular(self, &mut output, explicit_padding),
                    PaddingMode::Custom(borders) => {
                        padding_custom(self, &mut output, explicit_padding, borders)
                    }
                    PaddingMode::Explicit(borders) => {
                        padding_explicit(self, &mut output, explicit_padding, borders)
                    }
                    _ => {}
                };

                output
            }

            fn padding_in<SO, DO>(
                &self,
                buffer: &mut ArrayBase<SO, DO>,
                mode: PaddingMode<N, T>,
                explicit_padding: ExplicitPadding<N>,
            ) where
                T: NumAssign + Copy,
                S: Data<Elem = T>,
                SO: DataMut<Elem = T>,
                [Ix; N]: IntoDimension<Dim = Dim<[Ix; N]>>,
                SliceInfo<[SliceInfoElem; N], DO, DO>: SliceArg<DO>,
                Dim<[Ix; N]>: RemoveAxis,
                DO: RemoveAxis,
            {
                padding_const(self, buffer, explicit_padding);

                match mode {
                    PaddingMode::Const(c) => {
                        explicit_padding
                            .iter()
                            .enumerate()
                            .for_each(|(dim, &explicit_padding)| {
                                dim::constant(self.raw_dim(), buffer, dim, explicit_padding, c);
                            })
                    }
                    PaddingMode::Replicate => padding_replicate(self, buffer, explicit_padding),
                    PaddingMode::Reflect => padding_reflect(self, buffer, explicit_padding),
                    PaddingMode::Circular => padding_circular(self, buffer, explicit_padding),
                    PaddingMode::Custom(borders) => padding_custom(self, buffer, explicit_padding, borders),
                    PaddingMode::Explicit(borders) => {
                        padding_explicit(self, buffer, explicit_padding, borders)
                    }
                    _ => {}
                };
            }
        }

        pub(crate) fn padding_const<const N: usize, T, S, D, SO, DO>(
            input: &ArrayBase<S, D>,
            output: &mut ArrayBase<SO, DO>,
            explicit_padding: ExplicitPadding<N>,
        ) where
            T: NumAssign + Copy,
            S: Data<Elem = T>,
            SO: DataMut<Elem = T>,
            [Ix; N]: IntoDimension<Dim = Dim<[Ix; N]>>,
            // SliceInfo<[SliceInfoElem; N], Dim<[Ix; N]>, Dim<[Ix; N]>>: SliceArg<Dim<[Ix; N]>>,
            SliceInfo<[SliceInfoElem; N], DO, DO>: SliceArg<DO>,
            Dim<[Ix; N]>: RemoveAxis,
            D: RemoveAxis,
            DO: RemoveAxis,
        {
            let mut output_slice = output.slice_mut(unsafe {
                SliceInfo::new(std::array::from_fn(|i| SliceInfoElem::Slice {
                    start: explicit_padding[i][0] as isize,
                    end: Some((explicit_padding[i][0] + input.raw_dim()[i]) as isize),
                    step: 1,
                }))
                .unwrap()
            });

            output_slice.assign(input);
        }

        fn padding_replicate<const N: usize, T, S, D, SO, DO>(
            input: &ArrayBase<S, D>,
            output: &mut ArrayBase<SO, DO>,
            explicit_padding: ExplicitPadding<N>,
        ) where
            T: NumAssign + Copy,
            S: Data<Elem = T>,
            SO: DataMut<Elem = T>,
            [Ix; N]: IntoDimension<Dim = Dim<[Ix; N]>>,
            SliceInfo<[SliceInfoElem; N], Dim<[Ix; N]>, Dim<[Ix; N]>>: SliceArg<Dim<[Ix; N]>>,
            Dim<[Ix; N]>: RemoveAxis,
            D: RemoveAxis + IntoDimension,
            DO: RemoveAxis,
        {
            explicit_padding
                .iter()
                .enumerate()
                .for_each(|(dim, &explicit_padding)| {
                    dim::replicate(input.raw_dim(), output, dim, explicit_padding);
                });
        }

        fn padding_reflect<const N: usize, T, S, D, SO, DO>(
            input: &ArrayBase<S, D>,
            output: &mut ArrayBase<SO, DO>,
            explicit_padding: ExplicitPadding<N>,
        ) where
            T: NumAssign + Copy,
            S: Data<Elem = T>,
            SO: DataMut<Elem = T>,
            [Ix; N]: IntoDimension<Dim = Dim<[Ix; N]>>,
            SliceInfo<[SliceInfoElem; N], Dim<[Ix; N]>, Dim<[Ix; N]>>: SliceArg<Dim<[Ix; N]>>,
            Dim<[Ix; N]>: RemoveAxis,
            D: RemoveAxis,
            DO: RemoveAxis,
        {
            explicit_padding
                .iter()
                .enumerate()
                .for_each(|(dim, &explicit_padding)| {
                    dim::reflect(input.raw_dim(), output, dim, explicit_padding);
                });
        }

        fn padding_circular<const N: usize, T, S, D, SO, DO>(
            input: &ArrayBase<S, D>,
            output: &mut ArrayBase<SO, DO>,
            explicit_padding: ExplicitPadding<N>,
        ) where
            T: NumAssign + Copy,
            S: Data<Elem = T>,
            SO: DataMut<Elem = T>,
            [Ix; N]: IntoDimension<Dim = Dim<[Ix; N]>>,
            SliceInfo<[SliceInfoElem; N], Dim<[Ix; N]>, Dim<[Ix; N]>>: SliceArg<Dim<[Ix; N]>>,
            Dim<[Ix; N]>: RemoveAxis,
            D: RemoveAxis,
            DO: RemoveAxis,
        {
            explicit_padding
                .iter()
                .enumerate()
                .for_each(|(dim, &explicit_padding)| {
                    dim::circular(input.raw_dim(), output, dim, explicit_padding);
                });
        }

        fn padding_custom<const N: usize, T, S, D, SO, DO>(
            input: &ArrayBase<S, D>,
            output: &mut ArrayBase<SO, DO>,
            explicit_padding: ExplicitPadding<N>,
            borders: [BorderType<T>; N],
        ) where
            T: NumAssign + Copy,
            S: Data<Elem = T>,
            SO: DataMut<Elem = T>,
            [Ix; N]: IntoDimension<Dim = Dim<[Ix; N]>>,
            SliceInfo<[SliceInfoElem; N], Dim<[Ix; N]>, Dim<[Ix; N]>>: SliceArg<Dim<[Ix; N]>>,
            Dim<[Ix; N]>: RemoveAxis,
            D: RemoveAxis,
            DO: RemoveAxis,
        {
            explicit_padding
                .iter()
                .zip(borders.iter())
                .enumerate()
                .for_each(|(dim, (&explicit_padding, border))| match border {
                    BorderType::Zeros => {
                        dim::constant(input.raw_dim(), output, dim, explicit_padding, T::zero())
                    }
                    BorderType::Const(c) => {
                        dim::constant(input.raw_dim(), output, dim, explicit_padding, *c)
                    }
                    BorderType::Reflect => dim::reflect(input.raw_dim(), output, dim, explicit_padding),
                    BorderType::Replicate => dim::replicate(input.raw_dim(), output, dim, explicit_padding),
                    BorderType::Circular => dim::circular(input.raw_dim(), output, dim, explicit_padding),
                });
        }

        fn padding_explicit<const N: usize, T, S, D, SO, DO>(
            input: &ArrayBase<S, D>,
            output: &mut ArrayBase<SO, DO>,
            explicit_padding: ExplicitPadding<N>,
            borders: [[BorderType<T>; 2]; N],
        ) where
            T: NumAssign + Copy,
            S: Data<Elem = T>,
            SO: DataMut<Elem = T>,
            [Ix; N]: IntoDimension<Dim = Dim<[Ix; N]>>,
            SliceInfo<[SliceInfoElem; N], Dim<[Ix; N]>, Dim<[Ix; N]>>: SliceArg<Dim<[Ix; N]>>,
            Dim<[Ix; N]>: RemoveAxis,
            D: RemoveAxis,
            DO: RemoveAxis,
        {
            explicit_padding
                .iter()
                .zip(borders.iter())
                .enumerate()
                .for_each(|(dim, (&explicit_padding, border))| {
                    match border[0] {
                        BorderType::Zeros => {
                            half_dim::constant_front(output, dim, explicit_padding, T::zero())
                        }
                        BorderType::Const(c) => half_dim::constant_front(output, dim, explicit_padding, c),
                        BorderType::Reflect => half_dim::reflect_front(output, dim, explicit_padding),
                        BorderType::Replicate => half_dim::replicate_front(output, dim, explicit_padding),
                        BorderType::Circular => half_dim::circular_front(output, dim, explicit_padding),
                    }
                    match border[1] {
                        BorderType::Zeros => half_dim::constant_back(
                            input.raw_dim(),
                            output,
                            dim,
                            explicit_padding,
                            T::zero(),
                        ),
                        BorderType::Const(c) => {
                            half_dim::constant_back(input.raw_dim(), output, dim, explicit_padding, c)
                        }
                        BorderType::Reflect => {
                            half_dim::reflect_back(input.raw_dim(), output, dim, explicit_padding)
                        }
                        BorderType::Replicate => {
                            half_dim::replicate_back(input.raw_dim(), output, dim, explicit_padding)
                        }
                        BorderType::Circular => {
                            half_dim::circular_back(input.raw_dim(), output, dim, explicit_padding)
                        }
                    }
                });
        }

        pub(crate) mod dim {
            use ndarray::{ArrayBase, DataMut, Dim, Ix, RemoveAxis};
            use super::num::traits::NumAssign;

            use super::half_dim;


            #[inline]
            pub fn constant<const N: usize, T, S, D, DO>(
                input_dim: D,
                buffer: &mut ArrayBase<S, DO>,
                dim: usize,
                padding: [usize; 2],
                constant: T,
            ) where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
                DO: RemoveAxis,
                Dim<[Ix; N]>: RemoveAxis,
            {
                half_dim::constant_front(buffer, dim, padding, constant);
                half_dim::constant_back(input_dim, buffer, dim, padding, constant);
            }

            #[inline]
            pub fn replicate<const N: usize, T, S, D, DO>(
                input_dim: D,
                buffer: &mut ArrayBase<S, DO>,
                dim: usize,
                padding: [usize; 2],
            ) where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
                DO: RemoveAxis,
                Dim<[Ix; N]>: RemoveAxis,
            {
                half_dim::replicate_front(buffer, dim, padding);
                half_dim::replicate_back(input_dim, buffer, dim, padding);
            }

            #[inline]
            pub fn reflect<const N: usize, T, S, D, DO>(
                input_dim: D,
                buffer: &mut ArrayBase<S, DO>,
                dim: usize,
                padding: [usize; 2],
            ) where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
                DO: RemoveAxis,
                Dim<[Ix; N]>: RemoveAxis,
            {
                half_dim::reflect_front(buffer, dim, padding);
                half_dim::reflect_back(input_dim, buffer, dim, padding);
            }

            #[inline]
            pub fn circular<const N: usize, T, S, D, DO>(
                input_dim: D,
                buffer: &mut ArrayBase<S, DO>,
                dim: usize,
                padding: [usize; 2],
            ) where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
                DO: RemoveAxis,
                Dim<[Ix; N]>: RemoveAxis,
            {
                half_dim::circular_front(buffer, dim, padding);
                half_dim::circular_back(input_dim, buffer, dim, padding);
            }
        }

        mod half_dim {
            use ndarray::{ArrayBase, Axis, DataMut, Dim, Ix, RemoveAxis};
            use super::num::traits::NumAssign;


            #[inline]
            pub fn constant_front<T, S, D>(
                buffer: &mut ArrayBase<S, D>,
                dim: usize,
                padding: [usize; 2],
                constant: T,
            ) where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
            {
                for j in 0..padding[0] {
                    unsafe {
                        let buffer_mut = (buffer as *const _ as *mut ArrayBase<S, D>)
                            .as_mut()
                            .unwrap();

                        buffer_mut.index_axis_mut(Axis(dim), j).fill(constant);
                    }
                }
            }

            #[inline]
            pub fn constant_back<const N: usize, T, S, D, DO>(
                input_dim: D,
                buffer: &mut ArrayBase<S, DO>,
                dim: usize,
                padding: [usize; 2],
                constant: T,
            ) where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
                DO: RemoveAxis,
                Dim<[Ix; N]>: RemoveAxis,
            {
                for j in input_dim[dim] + padding[0]..buffer.raw_dim()[dim] {
                    unsafe {
                        let buffer_mut = (buffer as *const _ as *mut ArrayBase<S, DO>)
                            .as_mut()
                            .unwrap();

                        buffer_mut.index_axis_mut(Axis(dim), j).fill(constant);
                    }
                }
            }

            #[inline]
            pub fn replicate_front<T, S, D>(buffer: &mut ArrayBase<S, D>, dim: usize, padding: [usize; 2])
            where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
            {
                let border = buffer.index_axis(Axis(dim), padding[0]);
                for j in 0..padding[0] {
                    unsafe {
                        let buffer_mut = (buffer as *const _ as *mut ArrayBase<S, D>)
                            .as_mut()
                            .unwrap();

                        buffer_mut.index_axis_mut(Axis(dim), j).assign(&border);
                    }
                }
            }

            #[inline]
            pub fn replicate_back<const N: usize, T, S, D, DO>(
                input_dim: D,
                buffer: &mut ArrayBase<S, DO>,
                dim: usize,
                padding: [usize; 2],
            ) where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
                DO: RemoveAxis,
                Dim<[Ix; N]>: RemoveAxis,
            {
                let border = buffer.index_axis(Axis(dim), buffer.raw_dim()[dim] - padding[1] - 1);
                for j in input_dim[dim] + padding[0]..buffer.raw_dim()[dim] {
                    unsafe {
                        let buffer_mut = (buffer as *const _ as *mut ArrayBase<S, D>)
                            .as_mut()
                            .unwrap();

                        buffer_mut.index_axis_mut(Axis(dim), j).assign(&border);
                    }
                }
            }

            #[inline]
            pub fn reflect_front<T, S, D>(buffer: &mut ArrayBase<S, D>, dim: usize, padding: [usize; 2])
            where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
            {
                let border_index = padding[0];
                for j in 0..padding[0] {
                    let reflect_j = (border_index - j) + border_index;
                    unsafe {
                        let output_mut = (buffer as *const _ as *mut ArrayBase<S, D>)
                            .as_mut()
                            .unwrap();

                        output_mut
                            .index_axis_mut(Axis(dim), j)
                            .assign(&buffer.index_axis(Axis(dim), reflect_j));
                    }
                }
            }

            #[inline]
            pub fn reflect_back<const N: usize, T, S, D, DO>(
                input_dim: D,
                buffer: &mut ArrayBase<S, DO>,
                dim: usize,
                padding: [usize; 2],
            ) where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
                DO: RemoveAxis,
                Dim<[Ix; N]>: RemoveAxis,
            {
                let border_index = buffer.raw_dim()[dim] - padding[1] - 1;
                for j in input_dim[dim] + padding[0]..buffer.raw_dim()[dim] {
                    let reflect_j = border_index - (j - border_index);
                    unsafe {
                        let output_mut = (buffer as *const _ as *mut ArrayBase<S, D>)
                            .as_mut()
                            .unwrap();

                        output_mut
                            .index_axis_mut(Axis(dim), j)
                            .assign(&buffer.index_axis(Axis(dim), reflect_j));
                    }
                }
            }

            #[inline]
            pub fn circular_front<T, S, D>(buffer: &mut ArrayBase<S, D>, dim: usize, padding: [usize; 2])
            where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
            {
                let border_index = padding[0];
                for j in 0..padding[0] {
                    let circular_j = buffer.raw_dim()[dim] - padding[1] - (border_index - j);
                    unsafe {
                        let output_mut = (buffer as *const _ as *mut ArrayBase<S, D>)
                            .as_mut()
                            .unwrap();

                        output_mut
                            .index_axis_mut(Axis(dim), j)
                            .assign(&buffer.index_axis(Axis(dim), circular_j));
                    }
                }
            }

            #[inline]
            pub fn circular_back<const N: usize, T, S, D, DO>(
                input_dim: D,
                buffer: &mut ArrayBase<S, DO>,
                dim: usize,
                padding: [usize; 2],
            ) where
                T: NumAssign + Copy,
                S: DataMut<Elem = T>,
                D: RemoveAxis,
                DO: RemoveAxis,
                Dim<[Ix; N]>: RemoveAxis,
            {
                let border_index = buffer.raw_dim()[dim] - padding[1] - 1;
                for j in input_dim[dim] + padding[0]..buffer.raw_dim()[dim] {
                    let circular_j = padding[0] + (j - border_index - 1);
                    unsafe {
                        let output_mut = (buffer as *const _ as *mut ArrayBase<S, DO>)
                            .as_mut()
                            .unwrap();

                        output_mut
                            .index_axis_mut(Axis(dim), j)
                            .assign(&buffer.index_axis(Axis(dim), circular_j));
                    }
                }
            }
        }
    }
    use padding::{BorderType, PaddingExt, PaddingMode};

    let a = array![[1, 2, 3], [4, 5, 6]];
    for (name, mode) in [("zeros", PaddingMode::Zeros), ("const 9", PaddingMode::Const(9)), ("replicate", PaddingMode::Replicate),
                         ("reflect", PaddingMode::Reflect), ("circular", PaddingMode::Circular)] {
        let p: Array2<i32> = a.padding(mode, [[1, 1], [2, 1]]);
        println!("{}:\n{}", name, p);
    }
    let custom: Array2<i32> = a.padding(PaddingMode::Custom([BorderType::Reflect, BorderType::Const(7)]), [[1, 0], [1, 2]]);
    println!("custom (reflect rows, const 7 columns):\n{}", custom);
    let explicit: Array2<i32> = a.padding(
        PaddingMode::Explicit([[BorderType::Zeros, BorderType::Replicate], [BorderType::Circular, BorderType::Reflect]]),
        [[1, 1], [2, 2]],
    );
    println!("explicit:\n{}", explicit);
    let vol = Array3::from_shape_fn((2, 2, 3), |(i, j, k)| (i * 100 + j * 10 + k) as f64);
    let pv: Array3<f64> = vol.padding(PaddingMode::Replicate, [[1, 0], [0, 1], [1, 1]]);
    println!("3-d replicate shape {:?}, plane 0 =\n{}", pv.shape(), pv.index_axis(Axis(0), 0));
    let pt: Array2<f64> = vol.index_axis(Axis(2), 1).t().padding(PaddingMode::Reflect, [[1, 1], [1, 1]]);
    println!("reflect of a transposed view =\n{}", pt);
}
