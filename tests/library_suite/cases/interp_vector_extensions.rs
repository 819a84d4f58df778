// source: jonasBoss/ndarray-interp src/vector_extensions.rs, src/interp1d/strategies/linear.rs @9f9f8261 (MIT)
{
    use ndarray::{ArrayBase, Data, Ix1};
    use ndarray::{array, Array1};
    use std::fmt::Debug;
    // changed: num_traits' Num, NumCast and `cast` replaced by small local equivalents
    // (implemented for f64, f32 and usize)
    pub trait Num: Copy + PartialOrd + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> + std::ops::Mul<Output = Self> + std::ops::Div<Output = Self> {}
    impl<T: Copy + PartialOrd + std::ops::Add<Output = T> + std::ops::Sub<Output = T> + std::ops::Mul<Output = T> + std::ops::Div<Output = T>> Num for T {}
    pub trait NumCast: Sized {
        fn from_f64(x: f64) -> Option<Self>;
        fn to_f64(&self) -> f64;
    }
    impl NumCast for f64 { fn from_f64(x: f64) -> Option<Self> { Some(x) } fn to_f64(&self) -> f64 { *self } }
    impl NumCast for f32 { fn from_f64(x: f64) -> Option<Self> { Some(x as f32) } fn to_f64(&self) -> f64 { *self as f64 } }
    impl NumCast for usize {
        fn from_f64(x: f64) -> Option<Self> { if x >= 0.0 { Some(x as usize) } else { None } }
        fn to_f64(&self) -> f64 { *self as f64 }
    }
    fn cast<T: NumCast, U: NumCast>(x: T) -> Option<U> {
        U::from_f64(x.to_f64())
    }
    pub struct Linear;
    impl Linear {
        pub(crate) fn calc_frac<T>((x1, y1): (T, T), (x2, y2): (T, T), x: T) -> T
        where
            T: Num + Copy,
        {
            let b = y1;
            let m = (y2 - y1) / (x2 - x1);
            m * (x - x1) + b
        }
    }


    pub trait VectorExtensions<T> {
        fn monotonic_prop(&self) -> Monotonic;

        fn get_lower_index(&self, x: T) -> usize;
    }

    #[derive(Debug)]
    pub enum Monotonic {
        Rising { strict: bool },
        Falling { strict: bool },
        NotMonotonic,
    }
    use Monotonic::*;


    impl<S> VectorExtensions<S::Elem> for ArrayBase<S, Ix1>
    where
        S: Data,
        S::Elem: Debug + PartialOrd + Num + NumCast + Copy,
    {
        fn monotonic_prop(&self) -> Monotonic {
            if self.len() <= 1 {
                return NotMonotonic;
            };

            self.windows(2)
                .into_iter()
                .try_fold(MonotonicState::start(), |state, items| {
                    let a = items[0];
                    let b = items[1];
                    state.update(a, b).short_circuit()
                })
                .map_or_else(|mon| mon, |state| state.finish())
        }

        fn get_lower_index(&self, x: S::Elem) -> usize {
            // the vector should be strictly monotonic rising, otherwise we will
            // produce grabage

            // check in range, otherwise return the first or second last index
            // this allows for extrapolation
            if x <= self[0] {
                return 0;
            }
            if x >= self[self.len() - 1] {
                return self.len() - 2;
            }

            // We assume that the spacing is even. So we can calculate the index
            // and check it. This finishes in O(1) for even spaced axis.
            let mut range = (0usize, self.len() - 1);
            let p1 = (
                self[range.0],
                cast(range.0)
                    .unwrap_or_else(|| unimplemented!("casting from usize should always work!")),
            );
            let p2 = (
                self[range.1],
                cast(range.1)
                    .unwrap_or_else(|| unimplemented!("casting from usize should always work!")),
            );

            let mid = Linear::calc_frac(p1, p2, x);
            let mid_idx: usize =
                cast(mid).unwrap_or_else(|| unimplemented!("failed to convert {mid:?} to usize"));

            let mid_x = self[mid_idx];

            if mid_x <= x && x < self[mid_idx + 1] {
                return mid_idx;
            }
            if mid_x <= x {
                // why is this faster than `mid_x < x`???
                range.0 = mid_idx;
            } else {
                range.1 = mid_idx;
            }

            // the spacing was apparently not even, do binary search
            // O(log n)
            while range.0 + 1 < range.1 {
                let mid_idx = (range.1 - range.0) / 2 + range.0;
                let mid_x = self[mid_idx];

                if mid_x <= x {
                    range.0 = mid_idx;
                } else {
                    range.1 = mid_idx;
                }
            }
            range.0
        }
    }

    #[derive(Debug)]
    enum MonotonicState {
        Init,
        NotStrict,
        Likely(Monotonic),
    }

    impl MonotonicState {
        fn start() -> Self {
            Self::Init
        }

        fn update<T>(self, a: T, b: T) -> Self
        where
            T: PartialOrd,
        {
            use MonotonicState::*;
            match self {
                Init => {
                    if a < b {
                        Likely(Rising { strict: true })
                    } else if a == b {
                        NotStrict
                    } else {
                        Likely(Falling { strict: true })
                    }
                }
                NotStrict => {
                    if a < b {
                        Likely(Rising { strict: false })
                    } else if a == b {
                        NotStrict
                    } else {
                        Likely(Falling { strict: false })
                    }
                }
                Likely(Rising { strict }) => {
                    if a == b {
                        Likely(Rising { strict: false })
                    } else if a < b {
                        Likely(Rising { strict })
                    } else {
                        Likely(NotMonotonic)
                    }
                }
                Likely(Falling { strict }) => {
                    if a == b {
                        Likely(Falling { strict: false })
                    } else if a > b {
                        Likely(Falling { strict })
                    } else {
                        Likely(NotMonotonic)
                    }
                }
                Likely(NotMonotonic) => Likely(NotMonotonic),
            }
        }

        fn short_circuit(self) -> Result<Self, Monotonic> {
            match self {
                MonotonicState::Likely(NotMonotonic) => Err(NotMonotonic),
                _ => Ok(self),
            }
        }

        fn finish(self) -> Monotonic {
            match self {
                MonotonicState::Init => panic!("`MonotonicState::update` was never called"),
                MonotonicState::NotStrict => NotMonotonic,
                MonotonicState::Likely(mon) => mon,
            }
        }
    }

    let even = Array1::linspace(0.0, 10.0, 11);
    let uneven = array![0.0, 0.5, 0.75, 2.0, 4.0, 4.5, 9.0];
    for x in [-1.0, 0.0, 3.3, 7.99, 10.0, 12.0] {
        println!("x = {}: even index {}, uneven index {}", x, even.get_lower_index(x), uneven.get_lower_index(x));
    }
    let cases: Vec<Array1<f64>> = vec![
        array![1.0, 2.0, 3.0],
        array![1.0, 1.0, 2.0],
        array![3.0, 2.0, 2.0],
        array![3.0, 2.0, 1.0],
        array![1.0, 3.0, 2.0],
        array![5.0, 5.0],
        array![1.0],
    ];
    for c in cases.iter() {
        println!("{} is {:?}", c, c.monotonic_prop());
    }
    println!("reversed view: {:?}", uneven.slice(ndarray::s![..;-1]).monotonic_prop());
    let f32s: Array1<f32> = array![0.0, 0.25, 1.0, 2.25];
    println!("f32 lower index of 1.5 = {}", f32s.get_lower_index(1.5));
    println!("calc_frac = {}", Linear::calc_frac((0.0, 1.0), (2.0, 5.0), 1.5));
}
