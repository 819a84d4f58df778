// source: cool-japan/scirs scirs2-spatial/src/transform/spherical.rs @a176b462 (MIT OR Apache-2.0)
{
    use ndarray::{array, Array1, Array2, ArrayView1, ArrayView2};
    use std::f64::consts::{PI, TAU};
    // changed: the crate's SpatialError/SpatialResult replaced by local ones
    #[derive(Debug)]
    pub enum SpatialError {
        DimensionError(String),
        ValueError(String),
    }
    pub type SpatialResult<T> = Result<T, SpatialError>;

    pub fn cart_to_spherical(cart: &ArrayView1<f64>) -> SpatialResult<Array1<f64>> {
        if cart.len() != 3 {
            return Err(SpatialError::DimensionError(format!(
                "Cartesian coordinates must have 3 elements, got {}",
                cart.len()
            )));
        }

        let x = cart[0];
        let y = cart[1];
        let z = cart[2];

        // Compute r (radius)
        let r = (x * x + y * y + z * z).sqrt();

        // Handle the case where r is close to zero
        if r < 1e-10 {
            // Return [0, 0, 0] for the origin
            return Ok(Array1::zeros(3));
        }

        // Compute theta (polar angle)
        let theta = if r < 1e-10 {
            0.0 // Default to 0 when at origin
        } else {
            (z / r).acos()
        };

        // Compute phi (azimuthal angle)
        let phi = if x.abs() < 1e-10 && y.abs() < 1e-10 {
            0.0 // Default to 0 when on z-axis
        } else {
            let raw_phi = y.atan2(x);
            // Ensure phi is in [0, 2π)
            if raw_phi < 0.0 {
                raw_phi + TAU
            } else {
                raw_phi
            }
        };

        Ok(array![r, theta, phi])
    }

    pub fn spherical_to_cart(spherical: &ArrayView1<f64>) -> SpatialResult<Array1<f64>> {
        if spherical.len() != 3 {
            return Err(SpatialError::DimensionError(format!(
                "Spherical coordinates must have 3 elements, got {}",
                spherical.len()
            )));
        }

        let r = spherical[0];
        let theta = spherical[1];
        let phi = spherical[2];

        // Check that r is non-negative
        if r < 0.0 {
            return Err(SpatialError::ValueError(format!(
                "Radius r must be non-negative, got {}",
                r
            )));
        }

        // Check that theta is within valid range
        if !(0.0..=PI).contains(&theta) {
            return Err(SpatialError::ValueError(format!(
                "Polar angle theta must be in [0, π], got {}",
                theta
            )));
        }

        // Convert to Cartesian coordinates
        let x = r * theta.sin() * phi.cos();
        let y = r * theta.sin() * phi.sin();
        let z = r * theta.cos();

        Ok(array![x, y, z])
    }

    pub fn cart_to_spherical_batch(cart: &ArrayView2<f64>) -> SpatialResult<Array2<f64>> {
        if cart.ncols() != 3 {
            return Err(SpatialError::DimensionError(format!(
                "Cartesian coordinates must have 3 columns, got {}",
                cart.ncols()
            )));
        }

        let n_points = cart.nrows();
        let mut result = Array2::zeros((n_points, 3));

        for (i, row) in cart.rows().into_iter().enumerate() {
            let spherical = cart_to_spherical(&row)?;
            result.row_mut(i).assign(&spherical);
        }

        Ok(result)
    }

    pub fn spherical_to_cart_batch(spherical: &ArrayView2<f64>) -> SpatialResult<Array2<f64>> {
        if spherical.ncols() != 3 {
            return Err(SpatialError::DimensionError(format!(
                "Spherical coordinates must have 3 columns, got {}",
                spherical.ncols()
            )));
        }

        let n_points = spherical.nrows();
        let mut result = Array2::zeros((n_points, 3));

        for (i, row) in spherical.rows().into_iter().enumerate() {
            let cart = spherical_to_cart(&row)?;
            result.row_mut(i).assign(&cart);
        }

        Ok(result)
    }

    let points = array![[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 1.0], [-1.0, -2.0, 0.5], [0.0, 0.0, -3.0], [0.0, 0.0, 0.0]];
    let sph = cart_to_spherical_batch(&points.view()).unwrap();
    println!("spherical =\n{:.6}", sph);
    let back = spherical_to_cart_batch(&sph.view()).unwrap();
    println!("round trip exact to 1e-12: {}", (&back - &points).iter().all(|x| x.abs() < 1e-12));
    println!("row 3 alone = {:.6}", cart_to_spherical(&points.row(3)).unwrap());
    println!("from a column slice = {:.6}", spherical_to_cart(&sph.t().column(2)).unwrap());
    println!("{:?}", cart_to_spherical(&array![1.0, 2.0].view()).err());
    println!("{:?}", cart_to_spherical_batch(&Array2::<f64>::zeros((2, 2)).view()).err());
}
