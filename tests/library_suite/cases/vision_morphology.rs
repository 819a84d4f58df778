// source: rust-cv/ndarray-vision src/morphology/mod.rs, src/core/util.rs @de424b53 (MIT OR Apache-2.0)
{
    use ndarray::{prelude::*, DataMut, Zip};
    // changed: the impl for the crate's Image type dropped

    /// Get the centre of a kernel. Determines the pixel to be
    /// modified as a window is moved over an image
    pub fn kernel_centre(rows: usize, cols: usize) -> (usize, usize) {
        let row_offset = rows / 2 - ((rows % 2 == 0) as usize);
        let col_offset = cols / 2 - ((cols % 2 == 0) as usize);
        (row_offset, col_offset)
    }

    pub trait MorphologyExt {
        type Output;

        fn erode(&self, kernel: ArrayView2<bool>) -> Self::Output;

        fn erode_inplace(&mut self, kernel: ArrayView2<bool>);

        fn dilate(&self, kernel: ArrayView2<bool>) -> Self::Output;

        fn dilate_inplace(&mut self, kernel: ArrayView2<bool>);

        fn union(&self, other: &Self) -> Self::Output;

        fn union_inplace(&mut self, other: &Self);

        fn intersection(&self, other: &Self) -> Self::Output;

        fn intersection_inplace(&mut self, other: &Self);
    }

    impl<U> MorphologyExt for ArrayBase<U, Ix3>
    where
        U: DataMut<Elem = bool>,
    {
        type Output = Array<bool, Ix3>;

        fn erode(&self, kernel: ArrayView2<bool>) -> Self::Output {
            let sh = kernel.shape();
            let (ro, co) = kernel_centre(sh[0], sh[1]);
            let mut result = Self::Output::from_elem(self.dim(), false);
            if self.shape()[0] >= sh[0] && self.shape()[1] >= sh[1] {
                Zip::indexed(self.slice(s![.., .., 0]).windows(kernel.dim())).for_each(
                    |(i, j), window| {
                        result[[i + ro, j + co, 0]] = (&kernel & &window) == kernel;
                    },
                );
            }
            result
        }

        fn erode_inplace(&mut self, kernel: ArrayView2<bool>) {
            self.assign(&self.erode(kernel));
        }

        fn dilate(&self, kernel: ArrayView2<bool>) -> Self::Output {
            let sh = kernel.shape();
            let (ro, co) = kernel_centre(sh[0], sh[1]);
            let mut result = Self::Output::from_elem(self.dim(), false);
            if self.shape()[0] >= sh[0] && self.shape()[1] >= sh[1] {
                Zip::indexed(self.slice(s![.., .., 0]).windows(kernel.dim())).for_each(
                    |(i, j), window| {
                        result[[i + ro, j + co, 0]] = (&kernel & &window).iter().any(|x| *x);
                    },
                );
            }
            result
        }

        fn dilate_inplace(&mut self, kernel: ArrayView2<bool>) {
            self.assign(&self.dilate(kernel));
        }

        fn union(&self, other: &Self) -> Self::Output {
            self | other
        }

        fn union_inplace(&mut self, other: &Self) {
            *self |= other;
        }

        fn intersection(&self, other: &Self) -> Self::Output {
            self & other
        }

        fn intersection_inplace(&mut self, other: &Self) {
            *self &= other;
        }
    }


    // a 7 x 8 binary image (one channel) holding a filled rectangle and a single speck
    let mut image = Array3::from_elem((7, 8, 1), false);
    image.slice_mut(s![1..5, 2..7, 0]).fill(true);
    image[[6, 0, 0]] = true;
    let show = |a: &Array3<bool>| {
        for row in a.index_axis(Axis(2), 0).rows() {
            println!("  {}", row.iter().map(|&b| if b { '#' } else { '.' }).collect::<String>());
        }
    };
    let cross = arr2(&[[false, true, false], [true, true, true], [false, true, false]]);
    println!("eroded:");
    show(&image.erode(cross.view()));
    println!("dilated:");
    show(&image.dilate(cross.view()));
    let square = Array2::from_elem((2, 2), true);
    let mut opened = image.erode(square.view());
    opened.dilate_inplace(square.view());
    println!("opened with a 2x2 square:");
    show(&opened);
    let mut other = Array3::from_elem((7, 8, 1), false);
    other.slice_mut(s![3..7, 0..4, 0]).fill(true);
    println!("union / intersection counts = {} / {}",
        image.union(&other).iter().filter(|&&b| b).count(),
        image.intersection(&other).iter().filter(|&&b| b).count());
    image.union_inplace(&other);
    println!("in place union count = {}", image.iter().filter(|&&b| b).count());
}
