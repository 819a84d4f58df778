// source: pykeio/ort examples/phi-3-vision/src/image_process.rs @78de6d9d (MIT OR Apache-2.0)
{
    use ndarray::{Array2, Array4, Array5, Axis, s};
    // changed: the image-crate parts (decoding, resizing, padding, normalize_image) dropped; the
    // normalized image is built directly as an Array4, and the steps of `preprocess` that follow
    // normalization are replayed below as written

    pub const NUM_CROPS: usize = 1;
    pub const _NUM_IMG_TOKENS: usize = 144;

    const OPENAI_CLIP_MEAN: [f32; 3] = [0.48145466, 0.4578275, 0.40821073];
    const OPENAI_CLIP_STD: [f32; 3] = [0.26862954, 0.2613026, 0.2757771];

    pub struct Phi3VImageProcessor {
        num_crops: usize,
        image_mean: Vec<f32>,
        image_std: Vec<f32>
    }

    impl Phi3VImageProcessor {
        pub fn new() -> Self {
            Self {
                num_crops: NUM_CROPS,
                image_mean: OPENAI_CLIP_MEAN.to_vec(),
                image_std: OPENAI_CLIP_STD.to_vec()
            }
        }
        pub fn calc_num_image_tokens_from_image_size(&self, width: u32, height: u32) -> usize {
            let (new_width, new_height) = self.calc_hd_transform_size(width, height);
            ((new_height / 336 * new_width / 336 + 1) * 144 + 1 + (new_height / 336 + 1) * 12) as usize
        }
        fn calc_hd_transform_size(&self, width: u32, height: u32) -> (u32, u32) {
            let (width, height) = if width < height { (height, width) } else { (width, height) };

            let ratio = width as f32 / height as f32;
            let mut scale = 1;
            while (scale as f32 * (scale as f32 / ratio).ceil()) <= self.num_crops as f32 {
                scale += 1;
            }
            scale -= 1;

            let new_width = scale * 336;
            let new_height = (new_width as f32 / ratio) as u32;

            self.calc_padded_size(new_width, new_height)
        }
        fn calc_padded_size(&self, width: u32, height: u32) -> (u32, u32) {
            let target_height = ((height as f32 / 336.0).ceil() * 336.0) as u32;
            (width, target_height)
        }
        fn create_global_image(&self, _image: &Array4<f32>) -> Array4<f32> {
            Array4::<f32>::zeros((1, 3, 336, 336))
        }
        fn create_local_patches(&self, image: &Array4<f32>) -> Vec<Array4<f32>> {
            let (_, _, height, width) = image.dim();
            let mut patches = Vec::new();

            for h in (0..height).step_by(336) {
                for w in (0..width).step_by(336) {
                    let patch = image
                        .slice(s![.., .., h..std::cmp::min(h + 336, height), w..std::cmp::min(w + 336, width)])
                        .to_owned();
                    patches.push(patch);
                }
            }

            patches
        }
        fn pad_to_max_num_crops_tensor(&self, patches: &[Array4<f32>], max_crops: usize) -> Array4<f32> {
            let (_, channels, height, width) = patches[0].dim();
            let mut padded = Array4::<f32>::zeros((max_crops, channels, height, width));

            for (i, patch) in patches.iter().enumerate() {
                if i >= max_crops {
                    break;
                }
                // Remove the extra dimension when assigning
                padded.slice_mut(s![i, .., .., ..]).assign(&patch.slice(s![0, .., .., ..]));
            }

            padded
        }
    }

    pub struct BatchFeature {
        pub pixel_values: Array5<f32>,
        pub image_sizes: Array2<i64>,
        pub num_img_tokens: Vec<i64>
    }

    let processor = Phi3VImageProcessor::new();
    let (width, height) = (672u32, 336u32);
    let (w, h) = processor.calc_hd_transform_size(width, height);
    println!("hd size = {} x {}, image tokens = {}", w, h, processor.calc_num_image_tokens_from_image_size(width, height));
    let normalized = Array4::<f32>::from_shape_fn((1, 3, h as usize, w as usize), |(_, c, y, x)| ((c * 7 + y / 48 + x / 96) % 5) as f32 * 0.5 - 1.0);
    let image_sizes = Array2::from_shape_vec((1, 2), vec![h as i64, w as i64]).unwrap();
    let global_image = processor.create_global_image(&normalized);
    let local_patches = processor.create_local_patches(&normalized);
    println!("{} local patches of shape {:?}", local_patches.len(), local_patches[0].shape());
    let mut all_patches = vec![global_image];
    all_patches.extend(local_patches);
    let padded_images = processor.pad_to_max_num_crops_tensor(&all_patches, processor.num_crops + 1);
    let pixel_values = padded_images.insert_axis(Axis(0));
    let batch = BatchFeature { pixel_values, image_sizes, num_img_tokens: vec![0] };
    println!("pixel_values shape = {:?}, image_sizes = {}", batch.pixel_values.shape(), batch.image_sizes);
    for crop in 0..batch.pixel_values.shape()[1] {
        let p = batch.pixel_values.slice(s![0, crop, .., .., ..]);
        println!("crop {}: sum {:.1}, channel means {:.4}", crop, p.sum(), p.mean_axis(Axis(2)).unwrap().mean_axis(Axis(1)).unwrap());
    }
    let more = processor.pad_to_max_num_crops_tensor(&all_patches, 4);
    println!("padded to 4 crops: {:?}, last crop all zero: {}", more.shape(), more.index_axis(Axis(0), 3).iter().all(|&v| v == 0.0));
}
