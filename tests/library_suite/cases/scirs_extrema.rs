// source: cool-japan/scirs scirs2-ndimage/src/measurements/extrema.rs @a176b462 (MIT OR Apache-2.0)
{
    use ndarray::{Array, Dimension};
    use ndarray::{arr1, Array2, Array3};
    use std::fmt::Debug;
    // changed: num_traits::Float replaced by ndarray's NdFloat, and the unused num_traits bounds
    // FromPrimitive + NumAssign dropped; the crate's NdimageError/Result replaced by local ones
    use ndarray::NdFloat as Float;
    #[derive(Debug)]
    pub enum NdimageError {
        InvalidInput(String),
        DimensionError(String),
    }
    pub type Result<T> = std::result::Result<T, NdimageError>;

    pub fn extrema<T, D>(input: &Array<T, D>) -> Result<(T, T, Vec<usize>, Vec<usize>)>
    where
        T: Float + Debug + PartialOrd,
        D: Dimension,
    {
        // Validate inputs
        if input.ndim() == 0 {
            return Err(NdimageError::InvalidInput(
                "Input array cannot be 0-dimensional".into(),
            ));
        }

        if input.is_empty() {
            return Err(NdimageError::InvalidInput("Input array is empty".into()));
        }

        // Convert to dynamic array for easier indexing
        let input_dyn = input.clone().into_dyn();

        let mut min_val = None;
        let mut max_val = None;
        let mut min_loc = vec![0; input.ndim()];
        let mut max_loc = vec![0; input.ndim()];

        // Find min and max values and their locations
        for (idx, &value) in input_dyn.indexed_iter() {
            let idx_vec: Vec<usize> = idx.as_array_view().to_vec();

            match min_val {
                None => {
                    min_val = Some(value);
                    max_val = Some(value);
                    min_loc = idx_vec.clone();
                    max_loc = idx_vec;
                }
                Some(current_min) => {
                    if value < current_min {
                        min_val = Some(value);
                        min_loc = idx_vec.clone();
                    }
                    if let Some(current_max) = max_val {
                        if value > current_max {
                            max_val = Some(value);
                            max_loc = idx_vec;
                        }
                    }
                }
            }
        }

        match (min_val, max_val) {
            (Some(min), Some(max)) => Ok((min, max, min_loc, max_loc)),
            _ => {
                // This should not happen since we check for empty array above
                let origin = vec![0; input.ndim()];
                Ok((T::zero(), T::zero(), origin.clone(), origin))
            }
        }
    }

    pub fn local_extrema<T, D>(
        input: &Array<T, D>,
        size: Option<&[usize]>,
        mode: Option<&str>,
    ) -> Result<(Array<bool, D>, Array<bool, D>)>
    where
        T: Float + Debug + PartialOrd,
        D: Dimension,
    {
        // Validate inputs
        if input.ndim() == 0 {
            return Err(NdimageError::InvalidInput(
                "Input array cannot be 0-dimensional".into(),
            ));
        }

        if input.is_empty() {
            return Err(NdimageError::InvalidInput("Input array is empty".into()));
        }

        if let Some(s) = size {
            if s.len() != input.ndim() {
                return Err(NdimageError::DimensionError(format!(
                    "Size must have same length as input dimensions (got {} expected {})",
                    s.len(),
                    input.ndim()
                )));
            }

            for &val in s {
                if val == 0 || val % 2 == 0 {
                    return Err(NdimageError::InvalidInput(
                        "Size values must be positive odd integers".into(),
                    ));
                }
            }
        }

        let m = mode.unwrap_or("both");
        if m != "min" && m != "max" && m != "both" {
            return Err(NdimageError::InvalidInput(format!(
                "Mode must be 'min', 'max', or 'both', got '{}'",
                m
            )));
        }

        // Placeholder implementation
        let minima = Array::<bool, _>::from_elem(input.raw_dim(), false);
        let maxima = Array::<bool, _>::from_elem(input.raw_dim(), false);

        Ok((minima, maxima))
    }

    let volume = Array3::from_shape_fn((3, 4, 5), |(i, j, k)| ((i * 7 + j * 3 + k * 11) % 17) as f64 - 8.0 + 0.25 * i as f64);
    let (min, max, min_loc, max_loc) = extrema(&volume).unwrap();
    println!("3-d: min {} at {:?}, max {} at {:?}", min, min_loc, max, max_loc);
    let plane = volume.index_axis(ndarray::Axis(0), 2).to_owned();
    println!("2-d: {:?}", extrema(&plane).unwrap());
    let signal = arr1(&[0.5f32, 3.0, -1.0, 2.5, -1.0]);
    println!("1-d f32: {:?}", extrema(&signal).unwrap());
    println!("empty: {:?}", extrema(&Array2::<f64>::zeros((0, 3))).err());
    let (minima, maxima) = local_extrema(&volume, Some(&[3, 3, 3]), Some("both")).unwrap();
    println!("local extrema shapes {:?} {:?}", minima.shape(), maxima.shape());
    println!("{:?}", local_extrema(&volume, Some(&[3, 2, 3]), None).err());
    println!("{:?}", local_extrema(&volume, None, Some("median")).err());
}
