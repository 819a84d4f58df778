// source: Qiskit/qiskit crates/synthesis/src/clifford/utils.rs @301a22ce (Apache-2.0)
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

    use ndarray::{Array1, Array2, ArrayView2, azip, s};
    // changed: only the SymplecticMatrix part kept (the gate-sequence helpers need
    // qiskit_circuit / qiskit_quantum_info)

    /// A symplectic matrix representation.
    ///
    /// Conceptually, a symplectic matrix is represented by a tableau in which the rows
    /// recorrespond to destabilizers and stabilizers, and the columns correspond
    /// to the X and Z components:
    ///
    /// ```text
    /// [ destab_x | destab_z ]
    /// [  stab_x  |  stab_z  ]
    /// ```
    ///
    /// Currently this class is internal to the synthesis library.
    pub struct SymplecticMatrix {
        /// Number of qubits.
        pub num_qubits: usize,
        /// Matrix with dimensions (2 * num_qubits) x (2 * num_qubits).
        pub smat: Array2<bool>,
    }

    impl SymplecticMatrix {
        /// Modifies the matrix in-place by appending S-gate
        #[allow(dead_code)]
        pub fn append_s(&mut self, qubit: usize) {
            let (x, mut z) = self
                .smat
                .multi_slice_mut((s![.., qubit], s![.., self.num_qubits + qubit]));
            azip!((z in &mut z, &x in &x) *z ^= x);
        }

        /// Modifies the matrix in-place by prepending S-gate
        pub fn prepend_s(&mut self, qubit: usize) {
            let (x, mut z) = self
                .smat
                .multi_slice_mut((s![self.num_qubits + qubit, ..], s![qubit, ..]));
            azip!((z in &mut z, &x in &x) *z ^= x);
        }

        /// Modifies the matrix in-place by appending H-gate
        #[allow(dead_code)]
        pub fn append_h(&mut self, qubit: usize) {
            let (mut x, mut z) = self
                .smat
                .multi_slice_mut((s![.., qubit], s![.., self.num_qubits + qubit]));
            azip!((x in &mut x, z in &mut z)  (*x, *z) = (*z, *x));
        }

        /// Modifies the matrix in-place by prepending H-gate
        pub fn prepend_h(&mut self, qubit: usize) {
            let (mut x, mut z) = self
                .smat
                .multi_slice_mut((s![qubit, ..], s![self.num_qubits + qubit, ..]));
            azip!((x in &mut x, z in &mut z)  (*x, *z) = (*z, *x));
        }

        /// Modifies the matrix in-place by appending SWAP-gate
        #[allow(dead_code)]
        pub fn append_swap(&mut self, qubit0: usize, qubit1: usize) {
            let (mut x0, mut z0, mut x1, mut z1) = self.smat.multi_slice_mut((
                s![.., qubit0],
                s![.., self.num_qubits + qubit0],
                s![.., qubit1],
                s![.., self.num_qubits + qubit1],
            ));
            azip!((x0 in &mut x0, x1 in &mut x1)  (*x0, *x1) = (*x1, *x0));
            azip!((z0 in &mut z0, z1 in &mut z1)  (*z0, *z1) = (*z1, *z0));
        }

        /// Modifies the matrix in-place by prepending SWAP-gate
        pub fn prepend_swap(&mut self, qubit0: usize, qubit1: usize) {
            let (mut x0, mut z0, mut x1, mut z1) = self.smat.multi_slice_mut((
                s![qubit0, ..],
                s![self.num_qubits + qubit0, ..],
                s![qubit1, ..],
                s![self.num_qubits + qubit1, ..],
            ));
            azip!((x0 in &mut x0, x1 in &mut x1)  (*x0, *x1) = (*x1, *x0));
            azip!((z0 in &mut z0, z1 in &mut z1)  (*z0, *z1) = (*z1, *z0));
        }

        /// Modifies the matrix in-place by appending CX-gate
        #[allow(dead_code)]
        pub fn append_cx(&mut self, qubit0: usize, qubit1: usize) {
            let (x0, mut z0, mut x1, z1) = self.smat.multi_slice_mut((
                s![.., qubit0],
                s![.., self.num_qubits + qubit0],
                s![.., qubit1],
                s![.., self.num_qubits + qubit1],
            ));
            azip!((x1 in &mut x1, &x0 in &x0) *x1 ^= x0);
            azip!((z0 in &mut z0, &z1 in &z1) *z0 ^= z1);
        }

        /// Modifies the matrix in-place by prepending CX-gate
        pub fn prepend_cx(&mut self, qubit0: usize, qubit1: usize) {
            let (x0, mut z0, mut x1, z1) = self.smat.multi_slice_mut((
                s![qubit1, ..],
                s![self.num_qubits + qubit1, ..],
                s![qubit0, ..],
                s![self.num_qubits + qubit0, ..],
            ));
            azip!((x1 in &mut x1, &x0 in &x0) *x1 ^= x0);
            azip!((z0 in &mut z0, &z1 in &z1) *z0 ^= z1);
        }
    }


    let n = 3;
    let identity = Array2::from_shape_fn((2 * n, 2 * n), |(i, j)| i == j);
    let mut m = SymplecticMatrix { num_qubits: n, smat: identity.clone() };
    m.append_h(0);
    m.append_cx(0, 1);
    m.append_s(1);
    m.append_swap(1, 2);
    let show = |a: &Array2<bool>| {
        for row in a.rows() {
            println!("  {}", row.iter().map(|&b| if b { '1' } else { '0' }).collect::<String>());
        }
    };
    println!("after appending H(0) CX(0,1) S(1) SWAP(1,2):");
    show(&m.smat);
    let mut p = SymplecticMatrix { num_qubits: n, smat: identity.clone() };
    p.prepend_swap(1, 2);
    p.prepend_s(1);
    p.prepend_cx(0, 1);
    p.prepend_h(0);
    println!("prepending the same gates in reverse order:");
    show(&p.smat);
    // a symplectic matrix M satisfies M^T Omega M = Omega over GF(2)
    let omega = Array2::from_shape_fn((2 * n, 2 * n), |(i, j)| (i + n == j) || (j + n == i));
    let to_int = |a: &Array2<bool>| a.mapv(|b| b as u8);
    let check = |a: &Array2<bool>| {
        let mi = to_int(a);
        let prod = mi.t().dot(&to_int(&omega)).dot(&mi).mapv(|v| v % 2 == 1);
        prod == omega
    };
    println!("symplectic: {} {}", check(&m.smat), check(&p.smat));
    let _unused: (Array1<u8>, Option<ArrayView2<bool>>) = (Array1::zeros(1), None);
}
