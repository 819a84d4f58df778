// source: Anush008/fastembed-rs src/pooling.rs @947b77bf (Apache-2.0)
{
    use ndarray::{s, Array2, ArrayView, Dim, Dimension, IxDynImpl};
    use ndarray::{Array3, Axis};
    // changed: anyhow replaced by a small local `anyhow` module (a String error with `msg`)
    mod anyhow {
        #[derive(Debug)]
        pub struct Error(pub String);
        impl Error {
            pub fn msg(m: String) -> Error {
                Error(m)
            }
        }
        pub type Result<T> = std::result::Result<T, Error>;
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Pooling {
        Cls,
        Mean,
    }

    pub fn cls(tensor: &ArrayView<f32, Dim<IxDynImpl>>) -> anyhow::Result<Array2<f32>> {
        match tensor.dim().ndim() {
            2 => Ok(tensor.slice(s![.., ..]).to_owned()),
            3 => Ok(tensor.slice(s![.., 0, ..]).to_owned()),
            _ => Err(anyhow::Error::msg(format!(
                "Invalid output shape: {shape:?}. Expected 2D or 3D tensor.",
                shape = tensor.dim()
            ))),
        }
    }

    /// Pool the previous layer output by taking the element-wise arithmetic mean of the token-level embeddings after applying the attention mask.
    pub fn mean(
        token_embeddings: &ArrayView<f32, Dim<IxDynImpl>>,
        attention_mask_array: Array2<i64>,
    ) -> anyhow::Result<Array2<f32>> {
        let attention_mask_original_dim = attention_mask_array.dim();

        if token_embeddings.dim().ndim() == 2 {
            // There are no means to speak of if the Axis(1) is missing.
            // Typically we'll see a dimension of (batch_size, feature_count) here.
            // It can be assumed that pooling is already done within the model.
            return Ok(token_embeddings.slice(s![.., ..]).to_owned());
        } else if token_embeddings.dim().ndim() != 3 {
            return Err(anyhow::Error::msg(format!(
                "Invalid output shape: {shape:?}. Expected 2D or 3D tensor.",
                shape = token_embeddings.dim()
            )));
        }

        let token_embeddings =
            // If the token_embeddings is 3D, return the whole thing.
            // Using `slice` here to assert the dimension.
            token_embeddings
                .slice(s![.., .., ..]);

        // Compute attention mask
        let attention_mask = attention_mask_array
            .insert_axis(ndarray::Axis(2))
            .broadcast(token_embeddings.dim())
            .ok_or_else(|| {
                anyhow::Error::msg(format!(
                    "Could not broadcast attention mask from {:?} to {:?}",
                    attention_mask_original_dim,
                    token_embeddings.dim()
                ))
            })?
            .mapv(|x| x as f32);

        let masked_tensor = &attention_mask * &token_embeddings;
        let sum = masked_tensor.sum_axis(ndarray::Axis(1));
        let mask_sum = attention_mask.sum_axis(ndarray::Axis(1));
        let mask_sum = mask_sum.mapv(|x| if x == 0f32 { 1.0 } else { x });
        Ok(&sum / &mask_sum)
    }

    // a model output of 2 sentences x 4 tokens x 3 features, as a dynamic-dimensional array
    let output = Array3::from_shape_fn((2, 4, 3), |(b, t, f)| (b * 12 + t * 3 + f) as f32 * 0.5 - 3.0).into_dyn();
    let mask: Array2<i64> = ndarray::array![[1, 1, 1, 0], [1, 1, 0, 0]];
    let pooled_cls = cls(&output.view()).unwrap();
    println!("cls =\n{:.4}", pooled_cls);
    let pooled_mean = mean(&output.view(), mask.clone()).unwrap();
    println!("mean =\n{:.4}", pooled_mean);
    // an output that is already pooled (2-d) passes through
    let already = output.index_axis(Axis(1), 0).to_owned();
    println!("2-d mean = {:?}", mean(&already.view(), mask.clone()).unwrap().shape());
    // a mask that does not broadcast, and a 1-d output
    let bad_mask: Array2<i64> = ndarray::array![[1, 1], [1, 0]];
    println!("{:?}", mean(&output.view(), bad_mask).unwrap_err());
    let flat = output.clone().into_shape_with_order(vec![24]).unwrap();
    println!("1-d: {}", cls(&flat.view()).unwrap_err().0.split(": ").next().unwrap());
    let l2: Vec<f32> = pooled_mean.rows().into_iter().map(|r| r.dot(&r).sqrt()).collect();
    println!("norms = {:?}", l2.iter().map(|x| format!("{:.4}", x)).collect::<Vec<_>>());
    println!("{:?}", Pooling::Mean);
}
