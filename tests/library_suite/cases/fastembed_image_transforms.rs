// source: Anush008/fastembed-rs src/image_embedding/utils.rs @947b77bf (Apache-2.0)
{
    use ndarray::{Array, Array3};
    use std::ops::{Div, Sub};
    // changed: the `image` crate's variant of TransformData and the transforms that need it
    // dropped; anyhow replaced by a small local `anyhow` module and `anyhow!` macro
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
    macro_rules! anyhow {
        ($($t:tt)*) => { anyhow::Error::msg(format!($($t)*)) };
    }

    pub enum TransformData {
        NdArray(Array3<f32>),
    }

    impl TransformData {
        pub fn array(self) -> anyhow::Result<Array3<f32>> {
            match self {
                TransformData::NdArray(array) => Ok(array),
            }
        }
    }

    pub trait Transform: Send + Sync {
        fn transform(&self, images: TransformData) -> anyhow::Result<TransformData>;
    }

    pub struct Rescale {
        pub scale: f32,
    }

    impl Transform for Rescale {
        fn transform(&self, data: TransformData) -> anyhow::Result<TransformData> {
            let array = data.array()?;
            let array = array * self.scale;
            Ok(TransformData::NdArray(array))
        }
    }

    pub struct Normalize {
        pub mean: Vec<f32>,
        pub std: Vec<f32>,
    }

    impl Transform for Normalize {
        fn transform(&self, data: TransformData) -> anyhow::Result<TransformData> {
            let array = data.array()?;
            let mean = Array::from_vec(self.mean.clone())
                .into_shape_with_order((3, 1, 1))
                .map_err(|e| anyhow!("Failed to reshape mean array: {}", e))?;
            let std = Array::from_vec(self.std.clone())
                .into_shape_with_order((3, 1, 1))
                .map_err(|e| anyhow!("Failed to reshape std array: {}", e))?;

            let shape = array.shape().to_vec();
            match shape.as_slice() {
                [c, h, w] => {
                    let mean_broadcast = mean.broadcast((*c, *h, *w)).ok_or_else(|| {
                        anyhow!("Failed to broadcast mean array to shape {:?}", (*c, *h, *w))
                    })?;
                    let std_broadcast = std.broadcast((*c, *h, *w)).ok_or_else(|| {
                        anyhow!("Failed to broadcast std array to shape {:?}", (*c, *h, *w))
                    })?;
                    let array_normalized = array.sub(mean_broadcast).div(std_broadcast);
                    Ok(TransformData::NdArray(array_normalized))
                }
                _ => Err(anyhow!(
                    "Transformer convert error. Normalize operator got error shape."
                )),
            }
        }
    }

    pub struct Compose {
        transforms: Vec<Box<dyn Transform>>,
    }

    impl Compose {
        fn new(transforms: Vec<Box<dyn Transform>>) -> Self {
            Self { transforms }
        }
    }

    impl Transform for Compose {
        fn transform(&self, mut image: TransformData) -> anyhow::Result<TransformData> {
            for transform in &self.transforms {
                image = transform.transform(image)?;
            }
            Ok(image)
        }
    }

    // a 3 x 4 x 5 "image" (channels first) of byte values
    let pixels = Array3::from_shape_fn((3, 4, 5), |(c, y, x)| ((c * 70 + y * 40 + x * 13) % 256) as f32);
    let pipeline = Compose::new(vec![
        Box::new(Rescale { scale: 1.0 / 255.0 }),
        Box::new(Normalize {
            mean: vec![0.48145466, 0.4578275, 0.40821073],
            std: vec![0.26862954, 0.26130258, 0.27577711],
        }),
    ]);
    let out = pipeline.transform(TransformData::NdArray(pixels)).unwrap().array().unwrap();
    println!("shape = {:?}", out.shape());
    println!("channel 0 =\n{:.4}", out.index_axis(ndarray::Axis(0), 0));
    println!("channel means = {:.4}", out.mean_axis(ndarray::Axis(2)).unwrap().mean_axis(ndarray::Axis(1)).unwrap());
    let bad = Normalize { mean: vec![0.5, 0.5], std: vec![0.5, 0.5] };
    match bad.transform(TransformData::NdArray(Array3::zeros((3, 2, 2)))) {
        Ok(_) => println!("unexpected"),
        Err(e) => println!("error: {}", e.0),
    }
}
