// source: Qiskit/qiskit crates/transpiler/src/passes/dense_layout.rs @301a22ce (Apache-2.0)
{
    // This code is part of Qiskit.
    //
    // (C) Copyright IBM 2022
    //
    // This code is licensed under the Apache License, Version 2.0. You may
    // obtain a copy of this license in the LICENSE.txt file in the root directory
    // of this source tree or at https://www.apache.org/licenses/LICENSE-2.0.
    //
    // Any modifications or derivative works of this code must retain this
    // copyright notice, and modified files need to carry a notice indicating
    // that they have been altered from the originals.
    use ndarray::prelude::*;
    use std::collections::{HashMap, HashSet};
    // changed: hashbrown's HashMap/HashSet replaced by std's; qiskit_util's IndexSet by a small
    // local insertion-ordered set; rayon's parallel reduce made a sequential fold (and
    // getenv_use_multiple_threads a local function); the pyo3 wrapper dropped
    #[derive(Default)]
    pub struct IndexSet<T> {
        items: Vec<T>,
        set: HashSet<T>,
    }
    impl<T: std::hash::Hash + Eq + Clone> IndexSet<T> {
        pub fn insert(&mut self, x: T) -> bool {
            if self.set.insert(x.clone()) {
                self.items.push(x);
                true
            } else {
                false
            }
        }
        pub fn is_empty(&self) -> bool {
            self.items.is_empty()
        }
    }
    impl<T> IntoIterator for IndexSet<T> {
        type Item = T;
        type IntoIter = std::vec::IntoIter<T>;
        fn into_iter(self) -> Self::IntoIter {
            self.items.into_iter()
        }
    }
    fn getenv_use_multiple_threads() -> bool {
        false
    }

    struct SubsetResult {
        pub count: usize,
        pub error: f64,
        pub map: Vec<usize>,
        pub subgraph: Vec<[usize; 2]>,
        pub index: usize,
    }

    fn bfs_sort(adj_matrix: ArrayView2<f64>, start: usize, num_qubits: usize) -> Vec<usize> {
        let n = adj_matrix.shape()[0];
        let mut next_level: IndexSet<usize> = IndexSet::default();
        let mut bfs_order = Vec::with_capacity(num_qubits);
        let mut seen: HashSet<usize> = HashSet::with_capacity(n);
        next_level.insert(start);
        while !next_level.is_empty() {
            let this_level = next_level;
            next_level = IndexSet::default();
            let mut found: Vec<usize> = Vec::new();
            for v in this_level {
                if !seen.contains(&v) {
                    seen.insert(v);
                    found.push(v);
                    bfs_order.push(v);
                    if bfs_order.len() == num_qubits {
                        return bfs_order;
                    }
                }
            }
            if seen.len() == n {
                return bfs_order;
            }
            for node in found {
                for (idx, v) in adj_matrix.index_axis(Axis(0), node).iter().enumerate() {
                    if *v != 0. {
                        next_level.insert(idx);
                    }
                }
                for (idx, v) in adj_matrix.index_axis(Axis(1), node).iter().enumerate() {
                    if *v != 0. {
                        next_level.insert(idx);
                    }
                }
            }
        }
        bfs_order
    }

    pub fn best_subset(
        num_qubits: usize,
        coupling_adj_mat: ArrayView2<f64>,
        num_meas: usize,
        num_cx: usize,
        use_error: bool,
        symmetric_coupling_map: bool,
        err: ArrayView2<f64>,
    ) -> [Vec<usize>; 3] {
        let coupling_shape = coupling_adj_mat.shape();
        let avg_meas_err = err.diag().mean().unwrap();

        let map_fn = |k| -> SubsetResult {
            let mut subgraph: Vec<[usize; 2]> = Vec::with_capacity(num_qubits);
            let bfs = bfs_sort(coupling_adj_mat, k, num_qubits);
            let bfs_set: HashSet<usize> = bfs.iter().copied().collect();
            let mut connection_count = 0;
            for node_idx in &bfs {
                coupling_adj_mat
                    .index_axis(Axis(0), *node_idx)
                    .into_iter()
                    .enumerate()
                    .filter_map(|(node, j)| {
                        if *j != 0. && bfs_set.contains(&node) {
                            Some(node)
                        } else {
                            None
                        }
                    })
                    .for_each(|node| {
                        connection_count += 1;
                        subgraph.push([*node_idx, node]);
                    });
            }
            let error = if use_error {
                let mut ret_error = 0.;
                let meas_avg = bfs
                    .iter()
                    .map(|i| {
                        let idx = *i;
                        err[[idx, idx]]
                    })
                    .sum::<f64>()
                    / num_qubits as f64;
                let meas_diff = meas_avg - avg_meas_err;
                if meas_diff > 0. {
                    ret_error += num_meas as f64 * meas_diff;
                }
                let cx_sum: f64 = subgraph.iter().map(|edge| err[[edge[0], edge[1]]]).sum();
                let mut cx_err = cx_sum / subgraph.len() as f64;
                if symmetric_coupling_map {
                    cx_err /= 2.;
                }
                ret_error += num_cx as f64 * cx_err;
                ret_error
            } else {
                0.
            };
            SubsetResult {
                count: connection_count,
                error,
                map: bfs,
                subgraph,
                index: k,
            }
        };

        let reduce_identity_fn = || -> SubsetResult {
            SubsetResult {
                count: 0,
                map: Vec::new(),
                error: f64::INFINITY,
                subgraph: Vec::new(),
                index: usize::MAX,
            }
        };

        let reduce_fn = |best: SubsetResult, curr: SubsetResult| -> SubsetResult {
            if use_error {
                if (curr.count >= best.count && curr.error < best.error)
                    || (curr.count == best.count && curr.error == best.error && curr.index < best.index)
                {
                    curr
                } else {
                    best
                }
            } else if curr.count > best.count || (curr.count == best.count && curr.index < best.index) {
                curr
            } else {
                best
            }
        };

        let best_result = if getenv_use_multiple_threads() {
            (0..coupling_shape[0])
                .map(map_fn)
                .fold(reduce_identity_fn(), reduce_fn)
        } else {
            (0..coupling_shape[0])
                .map(map_fn)
                .reduce(reduce_fn)
                .unwrap()
        };
        let best_map: Vec<usize> = best_result.map;
        let mapping: HashMap<usize, usize> = best_map
            .iter()
            .enumerate()
            .map(|(best_edge, edge)| (*edge, best_edge))
            .collect();
        let new_cmap: Vec<[usize; 2]> = best_result
            .subgraph
            .iter()
            .map(|c| [mapping[&c[0]], mapping[&c[1]]])
            .collect();
        let rows: Vec<usize> = new_cmap.iter().map(|edge| edge[0]).collect();
        let cols: Vec<usize> = new_cmap.iter().map(|edge| edge[1]).collect();

        [rows, cols, best_map]
    }

    // a heavy-hex-like 7-qubit coupling map (symmetric adjacency) and an error matrix
    let edges = [(0, 1), (1, 2), (1, 3), (3, 5), (4, 5), (5, 6)];
    let mut adj = Array2::<f64>::zeros((7, 7));
    for &(a, b) in &edges {
        adj[[a, b]] = 1.0;
        adj[[b, a]] = 1.0;
    }
    let err = Array2::from_shape_fn((7, 7), |(i, j)| {
        if i == j { 0.01 + 0.005 * i as f64 } else if adj[[i, j]] != 0.0 { 0.02 + 0.003 * ((i * 3 + j) % 5) as f64 } else { 0.0 }
    });
    println!("bfs from 3 = {:?}", bfs_sort(adj.view(), 3, 5));
    for (n, use_error) in [(3, false), (3, true), (5, true)] {
        let [rows, cols, best_map] = best_subset(n, adj.view(), 2, 4, use_error, true, err.view());
        println!("{} qubits, use_error {}: map {:?}, rows {:?}, cols {:?}", n, use_error, best_map, rows, cols);
    }
}
