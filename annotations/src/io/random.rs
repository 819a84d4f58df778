//! numpy's legacy `RandomState` (MT19937): the same seed gives the same numbers as
//! `numpy.random.RandomState(seed)`, so notebooks compare with the paper's inputs.

use rand_mt::Mt;

/// A numpy-compatible random stream.
pub struct RandomState {
    mt: Mt,
    gauss: Option<f64>,
}

impl RandomState {
    /// `numpy.random.RandomState(seed)`.
    pub fn new(seed: u32) -> Self {
        RandomState { mt: Mt::new(seed), gauss: None }
    }
    pub fn next_u32(&mut self) -> u32 {
        self.mt.next_u32()
    }
    /// `random_sample()`: uniform in [0, 1) with 53 random bits.
    pub fn random_sample(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67108864.0 + b) / 9007199254740992.0
    }
    /// `uniform(low, high)`.
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.random_sample()
    }
    /// `standard_normal()`: polar Box-Muller, the second value cached.
    pub fn standard_normal(&mut self) -> f64 {
        if let Some(g) = self.gauss.take() {
            return g;
        }
        loop {
            let x1 = 2.0 * self.random_sample() - 1.0;
            let x2 = 2.0 * self.random_sample() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                let f = (-2.0 * r2.ln() / r2).sqrt();
                self.gauss = Some(f * x1);
                return f * x2;
            }
        }
    }
    /// `normal(loc, scale)`.
    pub fn normal(&mut self, loc: f64, scale: f64) -> f64 {
        loc + scale * self.standard_normal()
    }
    /// An integer in `0..=max` by masked rejection (numpy's legacy bounded draw).
    pub fn bounded(&mut self, max: u32) -> u32 {
        if max == 0 {
            return 0;
        }
        let mask = u32::MAX >> max.leading_zeros();
        loop {
            let v = self.next_u32() & mask;
            if v <= max {
                return v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values printed by numpy 2:
    // rs = numpy.random.RandomState(42); rs.random_sample(3); rs.standard_normal(3)
    #[test]
    fn matches_numpy_random_state() {
        let mut rs = RandomState::new(42);
        let u: Vec<f64> = (0..3).map(|_| rs.random_sample()).collect();
        assert_eq!(u, [0.3745401188473625, 0.9507143064099162, 0.7319939418114051]);
        let g: Vec<f64> = (0..3).map(|_| rs.standard_normal()).collect();
        assert_eq!(g, NORMALS_AFTER_3_UNIFORMS);
    }
    const NORMALS_AFTER_3_UNIFORMS: [f64; 3] = [-1.1118801180469204, 0.31890218468938336, 0.2790412922001377];
}
