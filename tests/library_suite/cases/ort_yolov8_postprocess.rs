// source: pykeio/ort examples/yolov8/yolov8.rs @78de6d9d (MIT OR Apache-2.0)
{
    use ndarray::{Array, Axis, s};
    use ndarray::Array3;
    // changed: the model run replaced by a synthetic output tensor of the same layout
    // (1 x (4 + classes) x anchors), 4 class labels instead of 80, and the drawing dropped;
    // the post-processing (transpose, slice, per-anchor argmax, non-maximum suppression) is as
    // in the example's main

    #[derive(Debug, Clone, Copy)]
    struct BoundingBox {
        x1: f32,
        y1: f32,
        x2: f32,
        y2: f32
    }

    fn intersection(box1: &BoundingBox, box2: &BoundingBox) -> f32 {
        (box1.x2.min(box2.x2) - box1.x1.max(box2.x1)) * (box1.y2.min(box2.y2) - box1.y1.max(box2.y1))
    }

    fn union(box1: &BoundingBox, box2: &BoundingBox) -> f32 {
        ((box1.x2 - box1.x1) * (box1.y2 - box1.y1)) + ((box2.x2 - box2.x1) * (box2.y2 - box2.y1)) - intersection(box1, box2)
    }

    const YOLOV8_CLASS_LABELS: [&str; 4] = ["person", "bicycle", "car", "dog"];

    let (img_width, img_height) = (1280u32, 960u32);
    // anchors: (xc, yc, w, h, class scores...) in 640 x 640 model coordinates
    let anchors: [[f32; 8]; 7] = [
        [100.0, 120.0, 60.0, 150.0, 0.91, 0.02, 0.01, 0.03],
        [104.0, 118.0, 64.0, 146.0, 0.85, 0.05, 0.02, 0.01],
        [400.0, 300.0, 200.0, 120.0, 0.01, 0.03, 0.77, 0.02],
        [410.0, 305.0, 190.0, 118.0, 0.02, 0.01, 0.66, 0.05],
        [250.0, 500.0, 80.0, 60.0, 0.10, 0.05, 0.08, 0.58],
        [600.0, 40.0, 30.0, 30.0, 0.20, 0.30, 0.10, 0.25],
        [320.0, 320.0, 100.0, 100.0, 0.05, 0.62, 0.04, 0.03],
    ];
    let mut raw = Array3::<f32>::zeros((1, 8, anchors.len()));
    for (a, anchor) in anchors.iter().enumerate() {
        for (f, v) in anchor.iter().enumerate() {
            raw[[0, f, a]] = *v;
        }
    }
    let raw = raw.into_dyn();

    let output = raw.t().into_owned();

    let mut boxes = Vec::new();
    let output = output.slice(s![.., .., 0]);
    for row in output.axis_iter(Axis(0)) {
        let row: Vec<_> = row.iter().copied().collect();
        let (class_id, prob) = row
            .iter()
            // skip bounding box coordinates
            .skip(4)
            .enumerate()
            .map(|(index, value)| (index, *value))
            .reduce(|accum, row| if row.1 > accum.1 { row } else { accum })
            .unwrap();
        if prob < 0.5 {
            continue;
        }
        let label = YOLOV8_CLASS_LABELS[class_id];
        let xc = row[0] / 640. * (img_width as f32);
        let yc = row[1] / 640. * (img_height as f32);
        let w = row[2] / 640. * (img_width as f32);
        let h = row[3] / 640. * (img_height as f32);
        boxes.push((
            BoundingBox {
                x1: xc - w / 2.,
                y1: yc - h / 2.,
                x2: xc + w / 2.,
                y2: yc + h / 2.
            },
            label,
            prob
        ));
    }

    boxes.sort_by(|box1, box2| box2.2.total_cmp(&box1.2));
    let mut result = Vec::new();

    while !boxes.is_empty() {
        result.push(boxes[0]);
        boxes = boxes
            .iter()
            .filter(|box1| intersection(&boxes[0].0, &box1.0) / union(&boxes[0].0, &box1.0) < 0.7)
            .copied()
            .collect();
    }

    for (bbox, label, confidence) in result {
        println!("{} {:.2}: ({:.1}, {:.1}) - ({:.1}, {:.1})", label, confidence, bbox.x1, bbox.y1, bbox.x2, bbox.y2);
    }
    let _unused: Array<f32, _> = Array::zeros((1, 3, 2, 2));
}
