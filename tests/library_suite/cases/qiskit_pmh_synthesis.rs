// source: Qiskit/qiskit crates/synthesis/src/linear/pmh.rs, crates/synthesis/src/linear/utils.rs @301a22ce (Apache-2.0)
{
    // This code is part of Qiskit.
    //
    // (C) Copyright IBM 2024
    //
    // This code is licensed under the Apache License, Version 2.0. You may
    // obtain a copy of this license in the LICENSE.txt file in the root directory
    // of this source tree or at https://www.apache.org/licenses/LICENSE-2.0.
    //
    // Any modifications or derivative works of this code must retain this
    // copyright notice, and modified files need to carry a notice indicating
    // that they have been altered from the originals.

    use ndarray::{Array1, Array2, ArrayViewMut2, Axis, s};
    use ndarray::{array, ArrayView2};
    use std::cmp;
    use std::collections::HashMap;
    // changed: hashbrown's HashMap replaced by std's; synth_cnot_count_full_pmh takes an
    // ArrayView2 instead of a NumPy array and returns the (control, target) list of CX gates
    // instead of building a circuit (pyo3/qiskit_circuit parts dropped)

    pub fn _add_row_or_col(mut mat: ArrayViewMut2<bool>, add_cols: &bool, ctrl: usize, trgt: usize) {
        // get the two rows (or columns)
        let info = if *add_cols {
            (s![.., ctrl], s![.., trgt])
        } else {
            (s![ctrl, ..], s![trgt, ..])
        };
        let (row0, mut row1) = mat.multi_slice_mut(info);

        // add them inplace
        row1.zip_mut_with(&row0, |x, &y| *x ^= y);
    }

    fn _index(transpose: bool, i: usize, j: usize) -> (usize, usize) {
        if transpose { (j, i) } else { (i, j) }
    }

    fn _ceil_fraction(numerator: usize, denominator: usize) -> usize {
        let mut fraction = numerator / denominator;
        if !numerator.is_multiple_of(denominator) {
            fraction += 1;
        }
        fraction
    }

    fn lower_cnot_synth(
        mut matrix: ArrayViewMut2<bool>,
        section_size: usize,
        transpose: bool,
    ) -> Vec<(usize, usize)> {
        // The vector of CNOTs to be applied. Called ``circuit`` here for consistency with the paper.
        let mut circuit: Vec<(usize, usize)> = Vec::new();
        let cutoff = 1;

        // to apply to the transposed matrix, we can just set axis = 1
        let row_axis = if transpose { Axis(1) } else { Axis(0) };

        // get number of columns (same as rows) and the number of sections
        let n = matrix.raw_dim()[0];
        let num_sections = _ceil_fraction(n, section_size);

        // iterate over the columns
        for section in 1..num_sections + 1 {
            // store sub section row patterns here, which we saw already
            let mut patterns: HashMap<Array1<bool>, usize> = HashMap::new();
            let section_slice = s![(section - 1) * section_size..cmp::min(section * section_size, n)];

            // iterate over the rows (note we only iterate from the diagonal downwards)
            for row_idx in (section - 1) * section_size..n {
                // we need to keep track of the rows we saw already, called ``pattern`` here
                let pattern: Array1<bool> = matrix
                    .index_axis(row_axis, row_idx)
                    .slice(section_slice)
                    .to_owned();

                // skip if the row is empty (i.e. all elements are false)
                if pattern.iter().any(|&el| el) {
                    if patterns.contains_key(&pattern) {
                        // store CX location
                        circuit.push((patterns[&pattern], row_idx));
                        // remove the row
                        _add_row_or_col(matrix.view_mut(), &transpose, patterns[&pattern], row_idx);
                    } else {
                        // if we have not seen this pattern yet, keep track of it
                        patterns.insert(pattern, row_idx);
                    }
                }
            }

            // gaussian eliminate the remainder of the section
            for col_idx in (section - 1) * section_size..cmp::min(section * section_size, n) {
                let mut diag_el = matrix[[col_idx, col_idx]];

                for r in col_idx + 1..n {
                    if matrix[_index(transpose, r, col_idx)] {
                        if !diag_el {
                            _add_row_or_col(matrix.view_mut(), &transpose, r, col_idx);
                            circuit.push((r, col_idx));
                            diag_el = true
                        }
                        _add_row_or_col(matrix.view_mut(), &transpose, col_idx, r);
                        circuit.push((col_idx, r));
                    }

                    // back-reduce to the pivot row: this one-line-magic checks if the logical AND
                    // between the two target rows has more ``true`` elements is larger than the cutoff
                    if matrix
                        .index_axis(row_axis, col_idx)
                        .iter()
                        .zip(matrix.index_axis(row_axis, r).iter())
                        .map(|(&i, &j)| i & j)
                        .filter(|&x| x)
                        .count()
                        > cutoff
                    {
                        _add_row_or_col(matrix.view_mut(), &transpose, r, col_idx);
                        circuit.push((r, col_idx));
                    }
                }
            }
        }
        circuit
    }

    pub fn synth_cnot_count_full_pmh(
        matrix: ArrayView2<bool>,
        section_size: Option<i64>,
    ) -> Vec<(usize, usize)> {
        let arrayview = matrix;
        let mut mat: Array2<bool> = arrayview.to_owned();
        let num_qubits = mat.nrows(); // is a quadratic matrix

        // If given, use the user-specified input size. If None, we default to
        // alpha * log2(num_qubits), as suggested in the paper, where the coefficient alpha
        // is calibrated to minimize the upper bound on the number of row operations.
        // In addition, we at least set a block size of 2, which, in practice, minimizes the bound
        // until ~100 qubits.
        let alpha = 0.56;
        let blocksize = match section_size {
            Some(section_size) => section_size as usize,
            None => std::cmp::max(2, (alpha * (num_qubits as f64).log2()).floor() as usize),
        };

        // compute the synthesis for the lower triangular part of the matrix, and then
        // apply it on the transposed part for the full synthesis
        let lower_cnots = lower_cnot_synth(mat.view_mut(), blocksize, false);
        let upper_cnots = lower_cnot_synth(mat.view_mut(), blocksize, true);

        // iterator over the gates
        let instructions = upper_cnots
            .iter()
            .map(|(i, j)| (*j, *i))
            .chain(lower_cnots.into_iter().rev())
            .collect();
        instructions
    }


    // a 5-qubit linear reversible circuit (an invertible binary matrix built from row operations)
    let mut m = Array2::from_shape_fn((5, 5), |(i, j)| i == j);
    for (c, t) in [(0, 1), (3, 2), (1, 4), (4, 0), (2, 3), (0, 2), (4, 1)] {
        _add_row_or_col(m.view_mut(), &false, c, t);
    }
    for section_size in [None, Some(1), Some(3)] {
        let cx = synth_cnot_count_full_pmh(m.view(), section_size);
        // replay the CX gates on the identity: each (c, t) adds row c to row t
        let mut acc = Array2::from_shape_fn((5, 5), |(i, j)| i == j);
        for &(c, t) in cx.iter() {
            _add_row_or_col(acc.view_mut(), &false, c, t);
        }
        println!("section {:?}: {} CX gates {:?}; reproduces the matrix: {}", section_size, cx.len(), cx, acc == m);
    }
    println!("ceil fractions: {} {} {}", _ceil_fraction(7, 2), _ceil_fraction(8, 2), _ceil_fraction(1, 3));
}
