// source: pykeio/ort examples/sentence-transformers/semantic-similarity.rs @78de6d9d (MIT OR Apache-2.0)
{
    use ndarray::{Axis, Ix2};
    use ndarray::{Array2, Array3};
    // changed: the tokenizer and the ONNX session replaced by a synthetic model output (token
    // embeddings of 3 sentences, mean-pooled and normalised the way the exported
    // all-MiniLM-L6-v2 graph does for its second output); the similarity loop is as in the
    // example's main

    let inputs = vec!["The weather outside is lovely.", "It's so sunny outside!", "She drove to the stadium."];
    let tokens = Array3::<f32>::from_shape_fn((3, 5, 4), |(s, t, f)| {
        let base = if s < 2 { [0.8, 0.1, 0.3, -0.2][f] } else { [-0.1, 0.9, -0.4, 0.3][f] };
        base + ((s * 7 + t * 3 + f * 5) % 11) as f32 * 0.02
    });
    let pooled = tokens.mean_axis(Axis(1)).unwrap();
    let norms = pooled.map_axis(Axis(1), |r| r.dot(&r).sqrt());
    let normalized: Array2<f32> = &pooled / &norms.insert_axis(Axis(1));
    let output = normalized.into_dyn();

    let embeddings = output.view().into_dimensionality::<Ix2>().unwrap();

    println!("Similarity for '{}'", inputs[0]);
    let query = embeddings.index_axis(Axis(0), 0);
    for (embeddings, sentence) in embeddings.axis_iter(Axis(0)).zip(inputs.iter()).skip(1) {
        let dot_product: f32 = query.iter().zip(embeddings.iter()).map(|(a, b)| a * b).sum();
        println!("\t'{}': {:.1}%", sentence, dot_product * 100.);
    }
}
