// source: cool-japan/scirs scirs2-signal/src/image_features/utils.rs @a176b462 (MIT OR Apache-2.0)
{
    use ndarray::Array2;

    pub fn calculate_skewness(data: &[f64], mean: f64, std_dev: f64) -> f64 {
        if std_dev <= 0.0 || data.len() < 3 {
            return 0.0;
        }

        let n = data.len() as f64;
        let sum_cubed_diff: f64 = data.iter().map(|&x| (x - mean).powi(3)).sum();

        sum_cubed_diff / ((n - 1.0) * std_dev.powi(3))
    }

    pub fn calculate_kurtosis(data: &[f64], mean: f64, std_dev: f64) -> f64 {
        if std_dev <= 0.0 || data.len() < 4 {
            return 0.0;
        }

        let n = data.len() as f64;
        let sum_quartic_diff: f64 = data.iter().map(|&x| (x - mean).powi(4)).sum();

        sum_quartic_diff / ((n - 1.0) * std_dev.powi(4)) - 3.0 // Excess kurtosis
    }

    pub fn calculate_raw_moment(image: &Array2<f64>, p: usize, q: usize) -> f64 {
        let shape = image.shape();
        let height = shape[0];
        let width = shape[1];

        let mut moment = 0.0;
        for i in 0..height {
            for j in 0..width {
                moment += (i as f64).powi(p as i32) * (j as f64).powi(q as i32) * image[[i, j]];
            }
        }
        moment
    }

    pub fn compute_glcm(image: &Array2<f64>, distance: usize, num_levels: usize) -> Array2<f64> {
        let shape = image.shape();
        let height = shape[0];
        let width = shape[1];

        if height <= distance || width <= distance {
            return Array2::zeros((num_levels, num_levels));
        }

        // Find min and max values for scaling
        let min_val = image.iter().fold(f64::MAX, |a, &b| a.min(b));
        let max_val = image.iter().fold(f64::MIN, |a, &b| a.max(b));

        // Initialize GLCM
        let mut glcm = Array2::zeros((num_levels, num_levels));

        // Compute GLCM for horizontal direction (0 degrees)
        for i in 0..height {
            for j in 0..width - distance {
                // Scale pixel values to [0, num_levels-1]
                let row: usize;
                let col: usize;

                if (max_val - min_val).abs() < 1e-10 {
                    row = 0;
                    col = 0;
                } else {
                    row = ((image[[i, j]] - min_val) / (max_val - min_val) * (num_levels - 1) as f64)
                        .round() as usize;
                    col = ((image[[i, j + distance]] - min_val) / (max_val - min_val)
                        * (num_levels - 1) as f64)
                        .round() as usize;
                }

                // Bound checks (shouldn't be necessary but added for safety)
                let row_idx = row.min(num_levels - 1);
                let col_idx = col.min(num_levels - 1);

                glcm[[row_idx, col_idx]] += 1.0;
            }
        }

        // Make GLCM symmetric (add transpose)
        for i in 0..num_levels {
            for j in 0..i {
                let sum = glcm[[i, j]] + glcm[[j, i]];
                glcm[[i, j]] = sum;
                glcm[[j, i]] = sum;
            }
        }

        glcm
    }

    // an 6 x 6 image with a diagonal gradient and a bright square
    let mut image = Array2::from_shape_fn((6, 6), |(i, j)| (i + j) as f64 * 0.1);
    image.slice_mut(ndarray::s![2..4, 3..5]).fill(2.0);
    let glcm = compute_glcm(&image, 1, 4);
    println!("glcm (d = 1, 4 levels) =\n{}", glcm);
    println!("glcm (d = 2, 3 levels) =\n{}", compute_glcm(&image, 2, 3));
    let m00 = calculate_raw_moment(&image, 0, 0);
    let cy = calculate_raw_moment(&image, 1, 0) / m00;
    let cx = calculate_raw_moment(&image, 0, 1) / m00;
    println!("m00 = {:.4}, centroid = ({:.4}, {:.4})", m00, cy, cx);
    let data: Vec<f64> = image.iter().cloned().collect();
    let mean = data.iter().sum::<f64>() / data.len() as f64;
    let sd = (data.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (data.len() - 1) as f64).sqrt();
    println!("skewness = {:.6}, kurtosis = {:.6}", calculate_skewness(&data, mean, sd), calculate_kurtosis(&data, mean, sd));
    println!("flat image glcm sum = {}", compute_glcm(&Array2::from_elem((3, 3), 1.0), 1, 2).sum());
}
