// source: imeka/ndarray-ndimage src/filters/median.rs, src/lib.rs @a49a8e33 (MIT OR Apache-2.0)
{
    use ndarray::{s, Array, Array3, ArrayBase, Data, Dimension, Ix3, ShapeBuilder, Zip};
    /// 3D mask
    pub type Mask = Array3<bool>;

    /// Utility function that returns a new *n*-dimensional array of dimension `shape` with the same
    /// datatype and memory order as the input `arr`.
    pub fn array_like<S, A, D, Sh>(arr: &ArrayBase<S, D>, shape: Sh, elem: A) -> Array<A, D>
    where
        S: Data<Elem = A>,
        A: Clone,
        D: Dimension,
        Sh: ShapeBuilder<Dim = D>,
    {
        // TODO `is_standard_layout` only works on owned arrays. Change it if using `ArrayBase`.
        if arr.is_standard_layout() {
            Array::from_elem(shape, elem)
        } else {
            Array::from_elem(shape.f(), elem)
        }
    }

    /// Utilitary function that returns the mask dimension minus 1 on all dimensions.
    pub fn dim_minus<S, A>(mask: &ArrayBase<S, Ix3>, n: usize) -> (usize, usize, usize)
    where
        S: Data<Elem = A>,
        A: Clone,
    {
        let (width, height, depth) = mask.dim();
        (width - n, height - n, depth - n)
    }


    /// Binary median filter.
    ///
    /// A 3x3 structuring element (`Kernel3d::Full`) is used except on the borders, where a smaller
    /// structuring element is used.
    pub fn median_filter<S>(mask: &ArrayBase<S, Ix3>) -> Mask
    where
        S: Data<Elem = bool>,
    {
        let range = |i, max| {
            if i == 0 {
                0..2
            } else if i == max {
                max - 1..max + 1
            } else {
                i - 1..i + 2
            }
        };

        let (width, height, depth) = dim_minus(mask, 1);
        let ranges_x: Vec<_> = (0..=width).map(|x| range(x, width)).collect();
        let ranges_y: Vec<_> = (0..=height).map(|y| range(y, height)).collect();
        let ranges_z: Vec<_> = (0..=depth).map(|z| range(z, depth)).collect();

        // `from_shape_fn` is strangely much slower here
        let mut new_mask = array_like(mask, mask.dim(), false);
        Zip::indexed(&mut new_mask).for_each(|idx, new_mask| {
            let r_x = &ranges_x[idx.0];
            let r_y = &ranges_y[idx.1];
            let r_z = &ranges_z[idx.2];

            // For binary images, the median filter can be replaced with a simple majority vote
            let nb_required = ((r_x.len() * r_y.len() * r_z.len()) as u8 - 1) / 2;
            *new_mask = mask
                .slice(s![r_x.clone(), r_y.clone(), r_z.clone()])
                .iter()
                .fold(0, |acc, &m| acc + m as u8)
                > nb_required;
        });
        new_mask
    }

    // a noisy 5 x 6 x 4 mask: a solid box with a few holes and isolated voxels
    let mask = Array3::from_shape_fn((5, 6, 4), |(x, y, z)| {
        let inside = (1..4).contains(&x) && (1..5).contains(&y);
        let noise = (x * 7 + y * 13 + z * 5) % 11 == 0;
        inside ^ noise
    });
    let filtered = median_filter(&mask);
    let show = |m: &Mask| {
        for z in [0, 2] {
            println!("  z = {}:", z);
            for x in 0..m.dim().0 {
                println!("    {}", (0..m.dim().1).map(|y| if m[[x, y, z]] { '#' } else { '.' }).collect::<String>());
            }
        }
    };
    println!("input ({} set):", mask.iter().filter(|&&b| b).count());
    show(&mask);
    println!("median filtered ({} set):", filtered.iter().filter(|&&b| b).count());
    show(&filtered);
    let f_order = Array3::from_shape_vec((5, 6, 4).f(), mask.t().iter().cloned().collect()).unwrap();
    println!("fortran-order input gives fortran-order output: {}", !median_filter(&f_order).is_standard_layout());
    println!("on a view: {}", median_filter(&mask.slice(s![.., 1.., ..])).iter().filter(|&&b| b).count());
    println!("dim_minus = {:?}", dim_minus(&mask, 1));
}
