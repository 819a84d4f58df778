// source: micouy/ising_lib src/lattice2d.rs, src/measurement.rs @41559610 (MIT)
{
    use ndarray::prelude::*;
    use rand::prelude::SliceRandom;
    use rand::Rng;
    // changed: the rand crate replaced by a small local `rand` module (a seeded LCG behind the
    // same thread_rng / Rng::gen / SliceRandom::choose calls) so that the run is deterministic;
    // `rng.gen` written `rng.r#gen` (`gen` is a keyword in edition 2024, which the kernel uses)
    mod rand {
        use std::cell::Cell;
        thread_local! {
            static STATE: Cell<u64> = Cell::new(0x2545F4914F6CDD1D);
        }
        pub struct ThreadRng;
        pub fn thread_rng() -> ThreadRng {
            ThreadRng
        }
        impl ThreadRng {
            fn next_u64(&mut self) -> u64 {
                STATE.with(|s| {
                    let x = s.get().wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    s.set(x);
                    x >> 11
                })
            }
        }
        pub trait Gen {
            fn gen_from(rng: &mut ThreadRng) -> Self;
        }
        impl Gen for usize {
            fn gen_from(rng: &mut ThreadRng) -> Self {
                rng.next_u64() as usize
            }
        }
        impl Gen for f64 {
            fn gen_from(rng: &mut ThreadRng) -> Self {
                rng.next_u64() as f64 / (1u64 << 53) as f64
            }
        }
        pub trait Rng {
            fn r#gen<T: Gen>(&mut self) -> T;
        }
        impl Rng for ThreadRng {
            fn r#gen<T: Gen>(&mut self) -> T {
                T::gen_from(self)
            }
        }
        pub mod prelude {
            pub trait SliceRandom {
                type Item;
                fn choose(&self, rng: &mut super::ThreadRng) -> Option<&Self::Item>;
            }
            impl<T> SliceRandom for [T] {
                type Item = T;
                fn choose(&self, rng: &mut super::ThreadRng) -> Option<&T> {
                    if self.is_empty() {
                        None
                    } else {
                        Some(&self[rng.next_u64() as usize % self.len()])
                    }
                }
            }
        }
    }

    #[derive(Clone, Copy)]
    pub enum UpdateRule {
        Metropolis,
        Glauber,
    }

    // TODO: implement a hamiltonian type, for different models?
    // consider renaming SpinType to Model Type, then we can call them
    // things like SpinHalfFerromagnet or Sznajd or XY
    // - SpinThreeHalf
    // - XY
    #[derive(Clone, Copy)]
    pub enum SpinType {
        SpinHalf,
    }

    #[derive(Clone, Copy)]
    pub enum InitType {
        Random,
        AllUp,
    }

    pub struct Lattice2d {
        pub dims: [usize; 2],
        pub n_sites: i32,       // the number of spin 1/2 sites == dims[0] * dims[1]
        pub nodes: Array2<i32>, // this language generalizes better to other graphs
        update_rule: UpdateRule,
        pub spin_type: SpinType,
        pub init_type: InitType,
        pub j: f64,    // interaction constant, default 1.0
        pub h: f64,    // external uniform magnetic field, default 0.0
        pub beta: f64, // beta = 1/(k_b * T), defaults to 0.43
    }

    impl Clone for Lattice2d {
        fn clone(&self) -> Self {
            Self::new(
                self.dims,
                self.update_rule,
                self.spin_type,
                self.init_type,
                self.j,
                self.h,
                self.beta,
            )
        }
    }

    impl Lattice2d {
        pub fn new(
            dims: [usize; 2],
            update_rule: UpdateRule,
            spin_type: SpinType,
            init_type: InitType,
            j: f64,
            h: f64,
            beta: f64,
        ) -> Self {
            let nodes: Array2<i32> = Lattice2d::init_spins(&init_type, &dims);

            let (width, height) = nodes.dim();

            Lattice2d {
                dims: [width, height],
                n_sites: width as i32 * height as i32,
                nodes: nodes, // should it be called notes or sites?
                update_rule: update_rule,
                spin_type: spin_type,
                init_type: init_type,
                j: j,
                h: h,
                beta: beta,
            }
        }

        pub fn new_basic(dims: [usize; 2]) -> Self {
            Self::new(
                dims,
                UpdateRule::Metropolis,
                SpinType::SpinHalf,
                InitType::Random,
                1.0f64,
                0.0f64,
                0.43f64,
            )
        }

        fn init_spins(init_type: &InitType, dims: &[usize; 2]) -> Array2<i32> {
            let nodes: Array2<i32>;
            match init_type {
                InitType::Random => {
                    let mut rng = rand::thread_rng();
                    nodes = Array2::from_shape_fn(*dims, |_| *[-1, 1].choose(&mut rng).unwrap());
                }
                InitType::AllUp => {
                    nodes = Array2::<i32>::ones(*dims);
                }
            }
            return nodes;
        }

        pub fn reset_spins(&mut self) {
            self.nodes = Lattice2d::init_spins(&self.init_type, &self.dims);
        }

        #[allow(non_snake_case)] // just for this function
        fn get_dE(&self, idx0: usize, idx1: usize) -> f64 {
            let neighbour_spin_sum: i32 = self.nodes[[idx0, (idx1 + 1) % self.dims[1]]]
                + self.nodes[[
                    idx0,
                    match idx1 {
                        0 => self.dims[1] - 1,
                        _ => idx1 - 1,
                    },
                ]]
                + self.nodes[[(idx0 + 1) % self.dims[0], idx1]]
                + self.nodes[[
                    match idx0 {
                        0 => self.dims[0] - 1,
                        _ => idx0 - 1,
                    },
                    idx1,
                ]];

            // two times dot prod of spin w/ it's neighbours
            // this is the energy required to flip
            2.0 * self.j * ((neighbour_spin_sum * self.nodes[[idx0, idx1]]) as f64)
                + self.h * (self.nodes[[idx0, idx1]] as f64)
        }

        pub fn update(&mut self) {
            match self.update_rule {
                UpdateRule::Metropolis => {
                    // pick a random index
                    let mut rng = rand::thread_rng();
                    let idx0: usize = rng.r#gen::<usize>() % self.dims[0];
                    let idx1: usize = rng.r#gen::<usize>() % self.dims[1];
                    // determine weather to flip or not to flip
                    #[allow(non_snake_case)]
                    let dE: f64 = self.get_dE(idx0, idx1);
                    if dE > 0.0 {
                        let p: f64 = rng.r#gen::<f64>(); // random f64 between 0 and 1
                        if p < (-self.beta * dE).exp() {
                            self.nodes[[idx0, idx1]] *= -1;
                        }
                    } else {
                        self.nodes[[idx0, idx1]] *= -1; // something more complicated for spin 3/2
                    }
                }
                UpdateRule::Glauber => {
                    // not yet implemented
                    panic!("Warning Glauber Rule not yet implemented");
                }
            }
        }

        pub fn update_n(&mut self, n: usize) {
            for _ in 0..n {
                self.update();
            }
        }

        pub fn disp_terminal(&self) {
            let mut string = "----------------\n".to_owned();
            for idx0 in 0..self.dims[0] {
                string = string + "|";
                for idx1 in 0..self.dims[1] {
                    match self.nodes[[idx0, idx1]] {
                        -1 => {
                            string = string + " ";
                        }
                        1 => {
                            string = string + "#";
                        }
                        _ => {
                            panic!("Ising lattice is an array of -1s and 1s");
                        }
                    }
                }
                string = string + "|\n";
            }
            string = string + "---------------------";
            println!("{}", string);
        }
    }


    pub trait Measurement {
        fn get_spin_sum(&self) -> i32;      // get the sum of the spin values
        fn get_spin_mean(&self) -> f64;     // get the mean value of spins 
        fn _convolve_2d_circ_neighbours(mat:&Array2<i32>) -> Array2<i32>; // convolves mat with filt with circular boundary conditions
        fn get_dot_spin_neighbours(&self) -> i32;   // get dot-product of each spin with the sum of it's neighbours
        fn measure_energy(&self) -> f64;            // get total energy of system
        fn measure_energy_per_spin(&self) -> f64;   // get energy divided by number of sites
        // IDEAS
        // spacial correlation function
            // correlation with immediate and 2nd degree neighbors... more?
            // is there a fast way to implement this?
    }

    impl Measurement for Lattice2d {
        fn get_spin_sum(&self) -> i32 {
            self.nodes.iter()
                .fold(0 , |acc, &x| acc + x)
        }

        fn get_spin_mean(&self) -> f64 {
            self.get_spin_sum() as f64 / (self.n_sites as f64)
        }

        fn _convolve_2d_circ_neighbours(mat:&Array2<i32>) -> Array2<i32> {
            // Fill the result matrix (result of convolution)
            let roll = |ix: usize, amt: i32, max: usize| {
                let max = max as i32;
                ((ix as i32 + amt + max) % max) as usize // +max, might be neg
            };
            let (width, height) = mat.dim();
            Array2::from_shape_fn((width, height), |ix| {
                mat[[ix.0,roll(ix.1,1,height)]] 
                    + mat[[ix.0,roll(ix.1,-1,height)]]
                    + mat[[roll(ix.0,1,width),ix.1]]
                    + mat[[roll(ix.0,-1,width),ix.1]]
            })
        }

        fn get_dot_spin_neighbours(&self) -> i32 {
            // circular boudary convolution with neighbor filter
            // 0 1 0
            // 1 0 1
            // 0 1 0 
            // dot product of result with all_sites
            // (There may be room for optimization here... possibly a 2x speed 
            // up... at the expense of readable code?)
            let neighbors = Lattice2d::_convolve_2d_circ_neighbours(&self.nodes);
            assert_eq!(neighbors.shape() , self.nodes.shape());
            let mut dot_spin:i32 = 0;
            for (x,y) in self.nodes.iter().zip(neighbors) {
                dot_spin += x * y;
            }
            dot_spin 
        }
        fn measure_energy(&self) -> f64 {
            let spin_sum = self.get_spin_sum() as f64; // calculate H term
            let spin_neighbours_dot = self.get_dot_spin_neighbours() as f64; // J term
            // Q: should we take precautions in case of overflow errors here 
            // when converting from i32 to f64 ? 
            return - self.j * spin_neighbours_dot - self.h * spin_sum 
        }
        fn measure_energy_per_spin(&self) -> f64 {
            self.measure_energy() / self.n_sites as f64 
        }
    }

    let mut lattice = Lattice2d::new([8, 10], UpdateRule::Metropolis, SpinType::SpinHalf, InitType::Random, 1.0, 0.0, 0.6);
    println!("random start: mean spin {:.4}, energy per spin {:.4}", lattice.get_spin_mean(), lattice.measure_energy_per_spin());
    lattice.disp_terminal();
    for sweep in 1..=4 {
        lattice.update_n(400);
        println!("after {} updates: mean spin {:.4}, energy {:.1}", sweep * 400, lattice.get_spin_mean(), lattice.measure_energy());
    }
    lattice.disp_terminal();
    let up = Lattice2d::new([4, 5], UpdateRule::Metropolis, SpinType::SpinHalf, InitType::AllUp, 1.0, 0.5, 0.43);
    println!("all up: sum {}, dot with neighbours {}, energy {:.2}", up.get_spin_sum(), up.get_dot_spin_neighbours(), up.measure_energy());
    let checker = Array2::from_shape_fn((4, 4), |(i, j)| if (i + j) % 2 == 0 { 1 } else { -1 });
    println!("neighbour sums of a checkerboard =\n{}", Lattice2d::_convolve_2d_circ_neighbours(&checker));
}
