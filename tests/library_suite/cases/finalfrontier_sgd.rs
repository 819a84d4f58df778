// source: finalfusion/finalfrontier src/vec_simd.rs, src/loss.rs, src/util.rs, src/sgd.rs, src/train_model.rs @fb2d6723 (Apache-2.0 OR BlueOak-1.0.0)
{
    use ndarray::{Array1, ArrayView1, ArrayView2, ArrayViewMut1, Axis};
    use ndarray::{Array2, array};
    // changed: the SSE/AVX branches of dot/scale/scaled_add dropped (the portable fallback is
    // kept); the crate's TrainModel, NegativeSamples and WordIdx replaced by minimal local
    // versions (two embedding matrices and a deterministic negative sampler); mean_embedding
    // is a free function instead of a TrainModel method
    pub trait NegativeSamples {
        fn negative_sample(&mut self, output: usize) -> usize;
    }
    pub struct CyclicSampler {
        next: usize,
        n: usize,
    }
    impl NegativeSamples for CyclicSampler {
        fn negative_sample(&mut self, output: usize) -> usize {
            loop {
                let c = self.next;
                self.next = (self.next + 3) % self.n;
                if c != output {
                    return c;
                }
            }
        }
    }
    pub struct TrainModel<T> {
        trainer: T,
        input: Array2<f32>,
        output: Array2<f32>,
    }
    impl<T> TrainModel<T> {
        pub fn trainer(&mut self) -> &mut T {
            &mut self.trainer
        }
        pub(crate) fn input_embedding_mut(&mut self, idx: usize) -> ArrayViewMut1<f32> {
            self.input.index_axis_mut(Axis(0), idx)
        }
        pub(crate) fn output_embedding(&self, idx: usize) -> ArrayView1<f32> {
            self.output.index_axis(Axis(0), idx)
        }
        pub(crate) fn output_embedding_mut(&mut self, idx: usize) -> ArrayViewMut1<f32> {
            self.output.index_axis_mut(Axis(0), idx)
        }
    }
    pub trait WordIdx {
        fn len(&self) -> usize;
    }
    pub struct WordWithSubwordsIdx(Vec<u64>);
    impl WordIdx for WordWithSubwordsIdx {
        fn len(&self) -> usize {
            self.0.len()
        }
    }
    impl<'a> IntoIterator for &'a WordWithSubwordsIdx {
        type Item = u64;
        type IntoIter = std::iter::Copied<std::slice::Iter<'a, u64>>;
        fn into_iter(self) -> Self::IntoIter {
            self.0.iter().copied()
        }
    }

    pub fn dot(u: ArrayView1<f32>, v: ArrayView1<f32>) -> f32 {
        dot_unvectorized(
            u.as_slice().expect("Cannot use vector u as slice"),
            v.as_slice().expect("Cannot use vector v as slice"),
        )
    }
    pub fn scale(mut u: ArrayViewMut1<f32>, a: f32) {
        scale_unvectorized(u.as_slice_mut().expect("Cannot use vector u as slice"), a)
    }
    pub fn scaled_add(mut u: ArrayViewMut1<f32>, v: ArrayView1<f32>, a: f32) {
        scaled_add_unvectorized(
            u.as_slice_mut().expect("Cannot use vector u as slice"),
            v.as_slice().expect("Cannot use vector v as slice"),
            a,
        )
    }
    pub fn dot_unvectorized(u: &[f32], v: &[f32]) -> f32 {
        assert_eq!(u.len(), v.len());
        u.iter().zip(v).map(|(&a, &b)| a * b).sum()
    }
    #[allow(clippy::float_cmp)]
    fn scaled_add_unvectorized(u: &mut [f32], v: &[f32], a: f32) {
        assert_eq!(u.len(), v.len());

        if a == 1f32 {
            for i in 0..u.len() {
                u[i] += v[i];
            }
        } else {
            for i in 0..u.len() {
                u[i] += v[i] * a;
            }
        }
    }
    fn scale_unvectorized(u: &mut [f32], a: f32) {
        for c in u {
            *c *= a;
        }
    }
    #[inline]
    pub fn l2_normalize(v: ArrayViewMut1<f32>) -> f32 {
        let norm = dot(v.view(), v.view()).sqrt();
        scale(v, 1.0 / norm);
        norm
    }

    const NEGATIVE_TOLERANCE: f32 = 1e-5;

    #[inline]
    pub fn safe_ln(v: f32) -> f32 {
        (v + NEGATIVE_TOLERANCE).ln()
    }

    const LOGISTIC_ROUND_ACTIVATION: f32 = 10.0;

    pub fn log_logistic_loss(u: ArrayView1<f32>, v: ArrayView1<f32>, label: bool) -> (f32, f32) {
        let dp = dot(u, v);
        let lf = logistic_function(dp);
        let grad = (label as usize) as f32 - lf;
        let loss = if label {
            -safe_ln(lf)
        } else {
            -safe_ln(1.0 - lf)
        };

        (loss, grad)
    }

    fn logistic_function(a: f32) -> f32 {
        if a > LOGISTIC_ROUND_ACTIVATION {
            1.0
        } else if a < -LOGISTIC_ROUND_ACTIVATION {
            0.0
        } else {
            1.0 / (1.0 + (-a).exp())
        }
    }


    #[derive(Clone)]
    pub struct NegativeSamplingSgd {
        negative_samples: usize,
    }

    impl NegativeSamplingSgd {
        pub fn new(negative_samples: usize) -> Self {
            NegativeSamplingSgd { negative_samples }
        }

        pub fn sgd_step<T>(
            &mut self,
            model: &mut TrainModel<T>,
            input: impl IntoIterator<Item = u64>,
            input_embed: ArrayView1<f32>,
            output: usize,
            lr: f32,
        ) -> f32
        where
            T: NegativeSamples,
        {
            let mut loss = 0.0;
            let mut input_delta = Array1::zeros(input_embed.shape()[0]);

            // Update the output embedding of the positive instance.
            loss += self.update_output(
                model,
                input_embed.view(),
                input_delta.view_mut(),
                output,
                true,
                lr,
            );

            // Pick the negative examples and update their output embeddings.
            loss += self.negative_samples(model, input_embed, input_delta.view_mut(), output, lr);

            // Update the input embeddings with the accumulated gradient.
            for idx in input {
                let input_embed = model.input_embedding_mut(idx as usize);
                scaled_add(input_embed, input_delta.view(), 1.0);
            }

            loss
        }

        fn negative_samples<T>(
            &mut self,
            model: &mut TrainModel<T>,
            input_embed: ArrayView1<f32>,
            mut input_delta: ArrayViewMut1<f32>,
            output: usize,
            lr: f32,
        ) -> f32
        where
            T: NegativeSamples,
        {
            let mut loss = 0f32;

            for _ in 0..self.negative_samples {
                let negative = model.trainer().negative_sample(output);
                // Update input and output for this negative sample.
                loss += self.update_output(
                    model,
                    input_embed.view(),
                    input_delta.view_mut(),
                    negative,
                    false,
                    lr,
                );
            }

            loss
        }

        fn update_output<T>(
            &mut self,
            model: &mut TrainModel<T>,
            input_embed: ArrayView1<f32>,
            input_delta: ArrayViewMut1<f32>,
            output: usize,
            label: bool,
            lr: f32,
        ) -> f32 {
            let (loss, part_gradient) =
                log_logistic_loss(input_embed.view(), model.output_embedding(output), label);

            // Update the input weight: u_n += lr * u_n' v_n. We are not updating
            // the weight immediately, but accumulating the weight updates in
            // input_delta.
            scaled_add(
                input_delta,
                model.output_embedding(output),
                lr * part_gradient,
            );

            // Update the output weight: v_n += lr * v_n' u_n.
            scaled_add(
                model.output_embedding_mut(output),
                input_embed.view(),
                lr * part_gradient,
            );

            loss
        }
    }

    fn mean_embedding<'a, I>(embeds: ArrayView2<f32>, indices: &'a I) -> Array1<f32>
    where
        I: WordIdx,
        &'a I: IntoIterator<Item = u64>,
    {
        let mut embed = Array1::zeros((embeds.ncols(),));
        let len = indices.len();
        for idx in indices {
            scaled_add(
                embed.view_mut(),
                embeds.index_axis(Axis(0), idx as usize),
                1.0,
            );
        }

        scale(embed.view_mut(), 1.0 / len as f32);

        embed
    }

    let n_words = 6;
    let dims = 4;
    let input = Array2::from_shape_fn((n_words, dims), |(i, j)| ((i * 7 + j * 3) % 11) as f32 * 0.02 - 0.095);
    let output = Array2::from_shape_fn((n_words, dims), |(i, j)| ((i * 5 + j * 2) % 7) as f32 * 0.03 - 0.09);
    let mut model = TrainModel { trainer: CyclicSampler { next: 0, n: n_words }, input, output };
    let mut sgd = NegativeSamplingSgd::new(2);
    // (focus word, context word) pairs
    let pairs = [(0usize, 1usize), (1, 2), (2, 3), (3, 4), (4, 5), (0, 2), (1, 3)];
    for epoch in 0..3 {
        let mut total = 0.0;
        for &(focus, context) in pairs.iter() {
            let input_embed = model.input.row(focus).to_owned();
            total += sgd.sgd_step(&mut model, vec![focus as u64], input_embed.view(), context, 0.5);
        }
        println!("epoch {}: loss {:.5}", epoch, total);
    }
    println!("input embeddings =\n{:.5}", model.input);
    let idx = WordWithSubwordsIdx(vec![0u64, 2, 4]);
    println!("mean embedding of 0, 2, 4 = {:.5}", mean_embedding(model.input.view(), &idx));
    let mut v = array![3.0f32, 4.0];
    println!("l2_normalize: norm {:.4}, vector {:.4}", l2_normalize(v.view_mut()), v);
    let (l, g) = log_logistic_loss(array![0.5f32, 1.0].view(), array![1.0f32, -0.25].view(), true);
    println!("loss {:.5}, gradient {:.5}", l, g);
}
