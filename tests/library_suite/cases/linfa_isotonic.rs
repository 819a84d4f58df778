// source: rust-ml/linfa algorithms/linfa-linear/src/isotonic.rs @7fe5c86e (MIT OR Apache-2.0)
{
    use ndarray::{s, Array1, ArrayBase, Axis, Data, Ix1, Ix2};
    use ndarray::{array, NdFloat};
    use std::cmp::Ordering;
    // changed: linfa's Float trait replaced by a small local one (NdFloat + Sum + `cast`); the
    // Fit/Predict impls replaced by the driver code below, which follows them; the file's
    // `#![allow(non_snake_case)]` dropped (an inner attribute cannot open a cell's block)
    pub trait AsF64 {
        fn as_f64(self) -> f64;
    }
    impl AsF64 for f64 { fn as_f64(self) -> f64 { self } }
    impl AsF64 for f32 { fn as_f64(self) -> f64 { self as f64 } }
    impl AsF64 for usize { fn as_f64(self) -> f64 { self as f64 } }
    pub trait Float: NdFloat + std::iter::Sum + AsF64 {
        fn cast<T: AsF64>(x: T) -> Self;
    }
    impl Float for f64 {
        fn cast<T: AsF64>(x: T) -> Self { x.as_f64() }
    }
    impl Float for f32 {
        fn cast<T: AsF64>(x: T) -> Self { x.as_f64() as f32 }
    }

    fn pva<F, D>(
        ys: &ArrayBase<D, Ix1>,
        weights: Option<&[f32]>,
        index: &[usize],
    ) -> (Vec<F>, Vec<usize>)
    where
        F: Float,
        D: Data<Elem = F>,
    {
        let n = ys.len();
        let mut V = Vec::<F>::new();
        let mut W = Vec::<F>::new();
        let mut J_index: Vec<usize> = (0..n).collect();
        let mut i = 0;
        let (mut AvB_zero, mut W_B_zero) = waverage(ys, weights, i, i, index);
        while i < n {
            // Step 1
            let j = J_index[i];
            let k = j + 1;
            if k == n {
                break;
            }
            let l = J_index[k];
            let (AvB_plus, W_B_plus) = waverage(ys, weights, k, l, index);
            if AvB_zero <= AvB_plus {
                V.push(AvB_zero);
                W.push(W_B_zero);
                AvB_zero = AvB_plus;
                W_B_zero = W_B_plus;
                i = k;
            } else {
                // Step 2
                J_index[i] = l;
                J_index[l] = i;
                AvB_zero = AvB_zero * W_B_zero + AvB_plus * W_B_plus;
                W_B_zero += W_B_plus;
                AvB_zero /= W_B_zero;

                // Step 2.1
                let mut AvB_minus = *V.last().unwrap_or(&F::neg_infinity());
                while !V.is_empty() && AvB_zero < AvB_minus {
                    AvB_minus = V.pop().unwrap();
                    let W_B_minus = W.pop().unwrap();
                    i = J_index[J_index[l] - 1];
                    J_index[l] = i;
                    J_index[i] = l;
                    AvB_zero = AvB_zero * W_B_zero + AvB_minus * W_B_minus;
                    W_B_zero += W_B_minus;
                    AvB_zero /= W_B_zero;
                }
            }
        }

        // Last block average
        let (AvB_minus, _) = waverage(ys, weights, i, J_index[i], index);
        V.push(AvB_minus);

        (V, J_index)
    }

    fn waverage<F, D>(
        vs: &ArrayBase<D, Ix1>,
        ws: Option<&[f32]>,
        start: usize,
        end: usize,
        index: &[usize],
    ) -> (F, F)
    where
        F: Float,
        D: Data<Elem = F>,
    {
        let mut wsum = F::zero();
        let mut avg = F::zero();
        for kk in &index[start..=end] {
            let w = if let Some(ws) = ws {
                F::cast(ws[*kk])
            } else {
                F::one()
            };
            wsum += w;
            avg += vs[*kk] * w;
        }
        avg /= wsum;
        (avg, wsum)
    }

    fn argsort_by<S, F>(arr: &ArrayBase<S, Ix1>, mut compare: F) -> Vec<usize>
    where
        S: Data,
        F: FnMut(&S::Elem, &S::Elem) -> Ordering,
    {
        let mut indices: Vec<usize> = (0..arr.len()).collect();
        indices.sort_unstable_by(move |&i, &j| compare(&arr[i], &arr[j]));
        indices
    }

    // fit: sort by x, pool adjacent violators, and keep the right end of each block
    let X = array![[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0]];
    let y = array![1.0, 3.0, 2.0, 4.0, 3.5, 5.0, 4.5, 6.0];
    let x = X.column(0);
    let indices = argsort_by(&x, |a, b| a.partial_cmp(b).unwrap_or(Ordering::Greater));
    let (V, J_index) = pva(&y, None, &indices);
    println!("block means = {:?}", V.iter().map(|v| format!("{:.4}", v)).collect::<Vec<_>>());
    let n = y.len();
    let mut W = Vec::<f64>::new();
    let mut i = 0;
    while i < n {
        let j = J_index[i];
        let x = X
            .slice(s![i..=j, -1])
            .into_iter()
            .max_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Greater))
            .unwrap();
        W.push(*x);
        i = j + 1
    }
    println!("regressor = {:?}", W);
    // weighted, f32 data given in reverse order through a view
    let yw: Array1<f32> = array![5.0, 1.0, 4.0, 2.0, 3.0];
    let weights = [1.0f32, 4.0, 1.0, 1.0, 2.0];
    let order = argsort_by(&yw.slice(s![..;-1]), |a, b| b.partial_cmp(a).unwrap());
    println!("argsort (descending) of the reversed view = {:?}", order);
    let (Vw, Jw) = pva(&yw, Some(&weights), &[0, 1, 2, 3, 4]);
    println!("weighted blocks = {:?}, J = {:?}", Vw.iter().map(|v| format!("{:.4}", v)).collect::<Vec<_>>(), Jw);
    println!("waverage of 1..=3 = {:?}", waverage(&yw, Some(&weights), 1, 3, &[0, 1, 2, 3, 4]));
}
