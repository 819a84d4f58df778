// source: Anush008/fastembed-rs src/sparse_text_embedding/impl.rs @947b77bf (Apache-2.0)
{
    use ndarray::{Array, ArrayViewD, Axis, CowArray, Dim};
    use ndarray::Array3;
    use std::collections::HashMap;
    // changed: the BGE-M3 sparse-linear weights (loaded from a bundled safetensors file by
    // `super::bgem3_weights::get_weights()`) replaced by a small local `get_weights()` with
    // hand-written weights; SparseEmbedding and SparseTextEmbedding are minimal local types
    #[derive(Debug, Clone, PartialEq)]
    pub struct SparseEmbedding {
        pub indices: Vec<usize>,
        pub values: Vec<f32>,
    }
    pub struct Bgem3SparseWeights {
        pub weight: Vec<f32>,
        pub bias: f32,
    }
    fn get_weights() -> Bgem3SparseWeights {
        Bgem3SparseWeights { weight: vec![0.5, -0.25, 1.0, 0.125], bias: -0.2 }
    }
    pub struct SparseTextEmbedding;

    impl SparseTextEmbedding {
        fn post_process_splade(
            model_output: &ArrayViewD<f32>,
            attention_mask: &CowArray<i64, Dim<[usize; 2]>>,
        ) -> Vec<SparseEmbedding> {
            let relu_log = model_output.mapv(|x| (1.0 + x.max(0.0)).ln());

            let attention_mask = attention_mask.mapv(|x| x as f32).insert_axis(Axis(2));

            let weighted_log = relu_log * attention_mask;

            let scores = weighted_log.fold_axis(Axis(1), f32::NEG_INFINITY, |r, &v| r.max(v));

            scores
                .rows()
                .into_iter()
                .map(|row_scores| {
                    let mut values: Vec<f32> = Vec::with_capacity(scores.len());
                    let mut indices: Vec<usize> = Vec::with_capacity(scores.len());

                    row_scores.into_iter().enumerate().for_each(|(idx, f)| {
                        if *f > 0.0 {
                            values.push(*f);
                            indices.push(idx);
                        }
                    });

                    SparseEmbedding { values, indices }
                })
                .collect()
        }

        fn post_process_bgem3(
            hidden_states: &ArrayViewD<f32>,
            input_ids: &Array<i64, Dim<[usize; 2]>>,
            attention_mask: &Array<i64, Dim<[usize; 2]>>,
        ) -> Vec<SparseEmbedding> {
            use ndarray::ArrayView1;

            // Special tokens to skip (XLM-RoBERTa: CLS=0, PAD=1, EOS=2, UNK=3)
            const SPECIAL_TOKENS: [i64; 4] = [0, 1, 2, 3];

            let sparse_weights = get_weights();
            let weights = ArrayView1::from(&sparse_weights.weight[..]);
            let bias = sparse_weights.bias;
            let batch_size = input_ids.shape()[0];
            let seq_len = input_ids.shape()[1];

            (0..batch_size)
                .map(|batch_idx| {
                    let mut token_weights: HashMap<usize, f32> = HashMap::new();

                    for seq_idx in 0..seq_len {
                        if attention_mask[[batch_idx, seq_idx]] == 0 {
                            continue;
                        }

                        let token_id = input_ids[[batch_idx, seq_idx]];
                        if SPECIAL_TOKENS.contains(&token_id) {
                            continue;
                        }

                        let hidden = hidden_states.slice(ndarray::s![batch_idx, seq_idx, ..]);
                        let weight = (hidden.dot(&weights) + bias).max(0.0);

                        if weight > 0.0 {
                            token_weights
                                .entry(token_id as usize)
                                .and_modify(|w| *w = w.max(weight))
                                .or_insert(weight);
                        }
                    }

                    let mut indices: Vec<_> = token_weights.keys().copied().collect();
                    indices.sort_unstable();
                    let values: Vec<_> = indices.iter().map(|i| token_weights[i]).collect();

                    SparseEmbedding { values, indices }
                })
                .collect()
        }
    }

    // SPLADE: model output of 2 texts x 4 tokens x 6 vocabulary logits
    let output = Array3::<f32>::from_shape_fn((2, 4, 6), |(b, t, v)| ((b * 5 + t * 3 + v * 7) % 9) as f32 * 0.5 - 2.0).into_dyn();
    let mask = ndarray::array![[1i64, 1, 1, 0], [1, 1, 0, 0]];
    let sparse = SparseTextEmbedding::post_process_splade(&output.view(), &CowArray::from(&mask));
    for (i, e) in sparse.iter().enumerate() {
        println!("splade text {}: indices {:?}, values {:?}", i, e.indices, e.values.iter().map(|v| format!("{:.4}", v)).collect::<Vec<_>>());
    }
    // BGE-M3: hidden states of 2 texts x 5 tokens x 4 features, with token ids
    let hidden = Array3::<f32>::from_shape_fn((2, 5, 4), |(b, t, f)| ((b * 11 + t * 5 + f * 3) % 7) as f32 * 0.4 - 0.8).into_dyn();
    let ids: Array<i64, Dim<[usize; 2]>> = ndarray::array![[0, 17, 42, 17, 2], [0, 99, 5, 2, 1]];
    let attention: Array<i64, Dim<[usize; 2]>> = ndarray::array![[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]];
    for (i, e) in SparseTextEmbedding::post_process_bgem3(&hidden.view(), &ids, &attention).iter().enumerate() {
        println!("bge-m3 text {}: indices {:?}, values {:?}", i, e.indices, e.values.iter().map(|v| format!("{:.4}", v)).collect::<Vec<_>>());
    }
}
