// source: finalfusion/finalfusion-rust src/similarity.rs, src/util.rs @6669c742 (MIT OR Apache-2.0)
{
    use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut1, ArrayViewMut2, Axis, CowArray, Ix1};
    use std::cmp::Ordering;
    use std::collections::{BinaryHeap, HashSet};
    use std::f32;
    // changed: ordered_float::NotNan replaced by a small local equivalent; the crate's
    // Embeddings/Vocab/Storage types replaced by a minimal local Embeddings (a word list and an
    // embedding matrix) offering the methods these impls call; the pattern `|(_, &exclude)|` in
    // analogy_masked written `|(_, exclude)| **exclude` (the kernel compiles as edition 2024)
    #[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
    pub struct NotNan<T>(T);
    impl NotNan<f32> {
        pub fn new(x: f32) -> Result<Self, ()> {
            if x.is_nan() { Err(()) } else { Ok(NotNan(x)) }
        }
    }
    impl Eq for NotNan<f32> {}
    impl Ord for NotNan<f32> {
        fn cmp(&self, other: &Self) -> Ordering {
            self.0.partial_cmp(&other.0).unwrap()
        }
    }
    impl std::ops::Deref for NotNan<f32> {
        type Target = f32;
        fn deref(&self) -> &f32 {
            &self.0
        }
    }
    pub trait Vocab {
        fn words(&self) -> &[String];
        fn words_len(&self) -> usize;
        fn idx(&self, word: &str) -> Option<usize>;
    }
    pub struct SimpleVocab(Vec<String>);
    impl Vocab for SimpleVocab {
        fn words(&self) -> &[String] { &self.0 }
        fn words_len(&self) -> usize { self.0.len() }
        fn idx(&self, word: &str) -> Option<usize> { self.0.iter().position(|w| w == word) }
    }
    pub trait Storage {}
    pub trait StorageView {
        fn view(&self) -> ArrayView2<f32>;
    }
    pub struct NdArray(Array2<f32>);
    impl StorageView for NdArray {
        fn view(&self) -> ArrayView2<f32> { self.0.view() }
    }
    pub struct Embeddings<V, S> {
        vocab: V,
        storage: S,
    }
    impl<V: Vocab, S: StorageView> Embeddings<V, S> {
        pub fn vocab(&self) -> &V { &self.vocab }
        pub fn storage(&self) -> &S { &self.storage }
        pub fn embedding(&self, word: &str) -> Option<CowArray<f32, Ix1>> {
            self.vocab.idx(word).map(|i| CowArray::from(self.storage.view().row(i).to_owned()))
        }
    }

    pub fn l2_normalize(mut v: ArrayViewMut1<f32>) -> f32 {
        let norm = v.dot(&v).sqrt();

        if norm != 0. {
            v /= norm;
        }

        norm
    }

    pub fn l2_normalize_array(mut v: ArrayViewMut2<f32>) -> Array1<f32> {
        let mut norms = Vec::with_capacity(v.nrows());
        for embedding in v.outer_iter_mut() {
            norms.push(l2_normalize(embedding));
        }

        norms.into()
    }

    #[derive(Debug, Eq, PartialEq)]
    pub struct WordSimilarityResult<'a> {
        similarity: NotNan<f32>,
        word: &'a str,
    }

    impl<'a> WordSimilarityResult<'a> {
        pub fn angular_similarity(&self) -> f32 {
            1f32 - (self.similarity.acos() / f32::consts::PI)
        }

        pub fn cosine_similarity(&self) -> f32 {
            *self.similarity
        }

        pub fn euclidean_distance(&self) -> f32 {
            // Trivially derived from the law of cosines
            (2f32 - 2f32 * self.cosine_similarity()).sqrt()
        }

        pub fn euclidean_similarity(&self) -> f32 {
            1f32 - (self.euclidean_distance() / 2f32)
        }

        pub fn word(&self) -> &str {
            self.word
        }
    }

    impl<'a> Ord for WordSimilarityResult<'a> {
        fn cmp(&self, other: &Self) -> Ordering {
            match other.similarity.cmp(&self.similarity) {
                Ordering::Equal => self.word.cmp(other.word),
                ordering => ordering,
            }
        }
    }

    impl<'a> PartialOrd for WordSimilarityResult<'a> {
        fn partial_cmp(&self, other: &WordSimilarityResult) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }


    pub trait Analogy {
        fn analogy(
            &self,
            query: [&str; 3],
            limit: usize,
            batch_size: Option<usize>,
        ) -> Result<Vec<WordSimilarityResult>, [bool; 3]> {
            self.analogy_masked(query, [true, true, true], limit, batch_size)
        }

        fn analogy_masked(
            &self,
            query: [&str; 3],
            remove: [bool; 3],
            limit: usize,
            batch_size: Option<usize>,
        ) -> Result<Vec<WordSimilarityResult>, [bool; 3]>;
    }

    impl<V, S> Analogy for Embeddings<V, S>
    where
        V: Vocab,
        S: StorageView,
    {
        fn analogy_masked(
            &self,
            query: [&str; 3],
            remove: [bool; 3],
            limit: usize,
            batch_size: Option<usize>,
        ) -> Result<Vec<WordSimilarityResult>, [bool; 3]> {
            {
                let [embedding1, embedding2, embedding3] = lookup_words3(self, query)?;

                let mut embedding = (&embedding2.view() - &embedding1.view()) + embedding3.view();
                l2_normalize(embedding.view_mut());

                let skip = query
                    .iter()
                    .zip(remove.iter())
                    .filter(|(_, exclude)| **exclude)
                    .map(|(word, _)| word.to_owned())
                    .collect();

                Ok(self.similarity_(embedding.view(), &skip, limit, batch_size))
            }
        }
    }


    pub trait WordSimilarity {
        fn word_similarity(
            &self,
            word: &str,
            limit: usize,
            batch_size: Option<usize>,
        ) -> Option<Vec<WordSimilarityResult>>;
    }

    impl<V, S> WordSimilarity for Embeddings<V, S>
    where
        V: Vocab,
        S: StorageView,
    {
        fn word_similarity(
            &self,
            word: &str,
            limit: usize,
            batch_size: Option<usize>,
        ) -> Option<Vec<WordSimilarityResult>> {
            let embed = self.embedding(word)?;
            let mut skip = HashSet::new();
            skip.insert(word);

            Some(self.similarity_(embed.view(), &skip, limit, batch_size))
        }
    }


    trait SimilarityPrivate {
        fn similarity_(
            &self,
            embed: ArrayView1<f32>,
            skip: &HashSet<&str>,
            limit: usize,
            batch_size: Option<usize>,
        ) -> Vec<WordSimilarityResult>;
    }

    impl<V, S> SimilarityPrivate for Embeddings<V, S>
    where
        V: Vocab,
        S: StorageView,
    {
        fn similarity_(
            &self,
            embed: ArrayView1<f32>,
            skip: &HashSet<&str>,
            limit: usize,
            batch_size: Option<usize>,
        ) -> Vec<WordSimilarityResult> {
            let batch_size = batch_size.unwrap_or_else(|| self.vocab().words_len());

            let mut results = BinaryHeap::with_capacity(limit);

            for (batch_idx, batch) in self
                .storage()
                .view()
                .slice(s![0..self.vocab().words_len(), ..])
                .axis_chunks_iter(Axis(0), batch_size)
                .enumerate()
            {
                let sims = batch.dot(&embed.view());

                for (idx, &sim) in sims.iter().enumerate() {
                    let word = &self.vocab().words()[(batch_idx * batch_size) + idx];

                    // Don't add words that we are explicitly asked to skip.
                    if skip.contains(word.as_str()) {
                        continue;
                    }

                    let word_similarity = WordSimilarityResult {
                        word,
                        similarity: NotNan::new(sim).expect("Encountered NaN"),
                    };

                    if results.len() < limit {
                        results.push(word_similarity);
                    } else {
                        let mut peek = results.peek_mut().expect("Cannot peek non-empty heap");
                        if word_similarity < *peek {
                            *peek = word_similarity
                        }
                    }
                }
            }

            results.into_sorted_vec()
        }
    }

    fn lookup_words3<'a, V, S>(
        embeddings: &'a Embeddings<V, S>,
        query: [&str; 3],
    ) -> Result<[CowArray<'a, f32, Ix1>; 3], [bool; 3]>
    where
        V: Vocab,
        S: StorageView,
    {
        let embedding1 = embeddings.embedding(query[0]);
        let embedding2 = embeddings.embedding(query[1]);
        let embedding3 = embeddings.embedding(query[2]);

        let present = [
            embedding1.is_some(),
            embedding2.is_some(),
            embedding3.is_some(),
        ];

        if !present.iter().all(|&present| present) {
            return Err(present);
        }

        Ok([
            embedding1.unwrap(),
            embedding2.unwrap(),
            embedding3.unwrap(),
        ])
    }



    // a tiny vocabulary with 4-d embeddings, normalised the way finalfusion stores them
    let words = ["king", "queen", "man", "woman", "apple", "pear", "car"];
    let mut matrix = ndarray::array![
        [0.9, 0.8, 0.1, 0.0],
        [0.9, 0.1, 0.8, 0.0],
        [0.2, 0.9, 0.1, 0.1],
        [0.2, 0.1, 0.9, 0.1],
        [0.0, 0.1, 0.1, 0.9],
        [0.1, 0.0, 0.2, 0.8],
        [0.5, 0.5, 0.5, 0.5f32]
    ];
    let norms = l2_normalize_array(matrix.view_mut());
    println!("norms = {:.4}", norms);
    let embeddings = Embeddings { vocab: SimpleVocab(words.iter().map(|w| w.to_string()).collect()), storage: NdArray(matrix) };
    for r in embeddings.word_similarity("apple", 3, None).unwrap() {
        println!("apple ~ {}: cos {:.4}, angular {:.4}, euclidean {:.4}", r.word(), r.cosine_similarity(), r.angular_similarity(), r.euclidean_distance());
    }
    for r in embeddings.analogy(["man", "king", "woman"], 2, Some(3)).unwrap() {
        println!("man : king :: woman : {} ({:.4})", r.word(), r.cosine_similarity());
    }
    println!("unknown words: {:?}", embeddings.analogy(["man", "emperor", "woman"], 2, None).err());
}
