// source: petabi/petal-neighbors src/distance.rs, src/vantage_point_tree.rs, src/lib.rs @f48663ea (Apache-2.0)
{
    use std::ops::AddAssign;

    use ndarray::{Array2, ArrayBase, ArrayView1, ArrayView2, CowArray, Data, Ix1, Ix2};
    use ndarray::{array, aview1};
    // changed: num_traits' Float (and the implied Zero / FloatCore bounds) replaced by ndarray's
    // NdFloat; ordered_float::OrderedFloat replaced by a small local equivalent; the crate's
    // ArrayError is a local enum; the unsafe Sync impls dropped
    use ndarray::NdFloat as Float;
    #[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
    pub struct OrderedFloat<T>(pub T);
    impl<T: Float> OrderedFloat<T> {
        pub fn into_inner(self) -> T {
            self.0
        }
    }
    impl<T: Float> From<T> for OrderedFloat<T> {
        fn from(x: T) -> Self {
            OrderedFloat(x)
        }
    }
    impl<T: Float> Eq for OrderedFloat<T> {}
    impl<T: Float> Ord for OrderedFloat<T> {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.0.partial_cmp(&other.0).unwrap()
        }
    }
    impl<T: Float> std::ops::Add for OrderedFloat<T> {
        type Output = Self;
        fn add(self, o: Self) -> Self {
            OrderedFloat(self.0 + o.0)
        }
    }
    impl<T: Float> std::ops::Sub for OrderedFloat<T> {
        type Output = Self;
        fn sub(self, o: Self) -> Self {
            OrderedFloat(self.0 - o.0)
        }
    }
    #[derive(Debug)]
    pub enum ArrayError {
        Empty,
        NotContiguous,
    }

    pub trait Metric<A> {
        fn distance(&self, _: &ArrayView1<A>, _: &ArrayView1<A>) -> A;
        fn rdistance(&self, _: &ArrayView1<A>, _: &ArrayView1<A>) -> A;
        fn rdistance_to_distance(&self, _: A) -> A;
        fn distance_to_rdistance(&self, _: A) -> A;
    }

    #[derive(Default, Clone, Debug, Eq, PartialEq)]
    pub struct Euclidean {}

    unsafe impl Sync for Euclidean {}

    impl<A> Metric<A> for Euclidean
    where
        A: Float + AddAssign,
    {
        fn distance(&self, x1: &ArrayView1<A>, x2: &ArrayView1<A>) -> A {
            x1.iter()
                .zip(x2.iter())
                .fold(A::zero(), |mut sum, (&v1, &v2)| {
                    let diff = v1 - v2;
                    sum += diff * diff;
                    sum
                })
                .sqrt()
        }
        fn rdistance(&self, x1: &ArrayView1<A>, x2: &ArrayView1<A>) -> A {
            x1.iter()
                .zip(x2.iter())
                .fold(A::zero(), |mut sum, (&v1, &v2)| {
                    let diff = v1 - v2;
                    sum += diff * diff;
                    sum
                })
        }
        fn rdistance_to_distance(&self, d: A) -> A {
            d.sqrt()
        }

        fn distance_to_rdistance(&self, d: A) -> A {
            d.powi(2)
        }
    }

    pub fn pairwise<A: Float + AddAssign>(
        x: ArrayView2<A>,
        metric: &dyn Metric<A>,
    ) -> Array2<A> {
        let mut distances = Array2::<A>::zeros((x.nrows(), x.nrows()));
        if x.nrows() < 2 {
            return distances;
        }
        for i in 0..x.nrows() {
            for j in (i + 1)..x.nrows() {
                let d = metric.distance(&x.row(i), &x.row(j));
                distances[[i, j]] = d;
                distances[[j, i]] = d;
            }
        }
        distances
    }

    #[derive(Default, Clone, Debug, Eq, PartialEq)]
    pub struct Cosine {}

    unsafe impl Sync for Cosine {}

    impl<A> Metric<A> for Cosine
    where
        A: Float + AddAssign + std::iter::Sum,
    {
        fn distance(&self, x1: &ArrayView1<A>, x2: &ArrayView1<A>) -> A {
            let dot = x1
                .iter()
                .zip(x2.iter())
                .map(|(&v1, &v2)| v1 * v2)
                .sum::<A>();

            let norm1 = x1
                .iter()
                .zip(x1.iter())
                .map(|(&v1, &v2)| v1 * v2)
                .sum::<A>()
                .sqrt();

            let norm2 = x2
                .iter()
                .zip(x2.iter())
                .map(|(&v1, &v2)| v1 * v2)
                .sum::<A>()
                .sqrt();
            A::one() - dot / (norm1 * norm2)
        }

        fn rdistance(&self, x1: &ArrayView1<A>, x2: &ArrayView1<A>) -> A {
            self.distance(x1, x2)
        }
        fn rdistance_to_distance(&self, d: A) -> A {
            d
        }

        fn distance_to_rdistance(&self, d: A) -> A {
            d
        }
    }


    pub struct VantagePointTree<'a, A, M> {
        points: CowArray<'a, A, Ix2>,
        nodes: Vec<Node<A>>,
        root: usize,
        metric: M,
    }

    impl<'a, A> VantagePointTree<'a, A, Euclidean>
    where
        A: Float + AddAssign + 'a,
    {
        pub fn euclidean<T>(points: T) -> Result<Self, ArrayError>
        where
            T: Into<CowArray<'a, A, Ix2>>,
        {
            Self::new(points, Euclidean::default())
        }
    }

    impl<'a, A, M> VantagePointTree<'a, A, M>
    where
        A: Float + AddAssign + 'a,
        M: Metric<A>,
    {
        pub fn new<T>(points: T, metric: M) -> Result<Self, ArrayError>
        where
            T: Into<CowArray<'a, A, Ix2>>,
        {
            let points = points.into();
            let n_points: usize = points.nrows();
            if n_points == 0 {
                return Err(ArrayError::Empty);
            }
            if !points.row(0).is_standard_layout() {
                return Err(ArrayError::NotContiguous);
            }

            let mut nodes = Vec::with_capacity(n_points);
            let root = Self::create_root(&points, &metric, &mut nodes);
            Ok(VantagePointTree {
                points,
                nodes,
                root,
                metric,
            })
        }

        pub fn query_nearest<S>(&self, needle: &ArrayBase<S, Ix1>) -> (usize, A)
        where
            S: Data<Elem = A>,
        {
            let mut nearest = DistanceIndex {
                distance: A::max_value().into(),
                id: NULL,
            };
            self.search_node(&self.nodes[self.root], &needle.view(), &mut nearest);
            (nearest.id, nearest.distance.into_inner())
        }

        fn search_node(&self, node: &Node<A>, needle: &ArrayView1<A>, nearest: &mut DistanceIndex<A>) {
            let distance = self
                .metric
                .distance(&self.points.row(node.vantage_point), needle)
                .into();

            if distance < nearest.distance {
                nearest.distance = distance;
                nearest.id = node.vantage_point;
            }

            if distance < node.radius.into() {
                if let Some(near) = self.nodes.get(node.near) {
                    self.search_node(near, needle, nearest);
                }
                if let Some(far) = self.nodes.get(node.far) {
                    if distance + nearest.distance > node.radius.into() {
                        self.search_node(far, needle, nearest);
                    }
                }
            } else {
                if let Some(far) = self.nodes.get(node.far) {
                    self.search_node(far, needle, nearest);
                }
                if let Some(near) = self.nodes.get(node.near) {
                    if distance - nearest.distance < node.radius.into() {
                        self.search_node(near, needle, nearest);
                    }
                }
            }
        }

        fn create_root<S>(points: &ArrayBase<S, Ix2>, metric: &M, nodes: &mut Vec<Node<A>>) -> usize
        where
            S: Data<Elem = A>,
            M: Metric<A>,
        {
            let mut indexes: Vec<_> = (0..points.nrows())
                .map(|i| DistanceIndex {
                    distance: A::max_value().into(),
                    id: i,
                })
                .collect();
            Self::create_node(points, metric, &mut indexes, nodes)
        }

        fn create_node<S>(
            points: &ArrayBase<S, Ix2>,
            metric: &M,
            indexes: &mut [DistanceIndex<A>],
            nodes: &mut Vec<Node<A>>,
        ) -> usize
        where
            S: Data<Elem = A>,
        {
            if indexes.is_empty() {
                return NULL;
            }
            if indexes.len() == 1 {
                let id = nodes.len();
                nodes.push(Node {
                    near: NULL,
                    far: NULL,
                    vantage_point: indexes[0].id,
                    radius: A::max_value(),
                });
                return id;
            }

            let vp_pos = indexes.len() - 1;
            let vantage_point = indexes[vp_pos].id;
            let rest = &mut indexes[..vp_pos];

            for r in rest.iter_mut() {
                r.distance = metric
                    .distance(&points.row(r.id), &points.row(vantage_point))
                    .into();
            }
            rest.sort_unstable_by(|a, b| a.distance.cmp(&b.distance));

            let half = rest.len() / 2;
            let (near, far) = rest.split_at_mut(half);
            let radius = far[0].distance;

            let id = nodes.len();
            nodes.push(Node {
                far: NULL,
                near: NULL,
                vantage_point,
                radius: radius.into_inner(),
            });

            let near = Self::create_node(points, metric, near, nodes);
            let far = Self::create_node(points, metric, far, nodes);
            nodes[id].near = near;
            nodes[id].far = far;
            id
        }
    }

    struct Node<A> {
        far: usize,
        near: usize,
        vantage_point: usize,
        radius: A,
    }

    const NULL: usize = usize::MAX;

    struct DistanceIndex<A> {
        distance: OrderedFloat<A>,
        id: usize,
    }

    let points = array![
        [1.0, 2.0],
        [1.1, 2.2],
        [0.9, 1.9],
        [1.0, 2.1],
        [-2.0, 3.0],
        [-2.2, 3.1],
        [4.0, -1.0],
        [3.5, -0.5],
    ];
    println!("pairwise euclidean =\n{:.4}", pairwise(points.view(), &Euclidean {}));
    println!("cosine(p0, p4) = {:.6}", Cosine {}.distance(&points.row(0), &points.row(4)));
    let vp = VantagePointTree::euclidean(points.view()).expect("valid array");
    for q in [[0.95, 1.96], [-2.1, 3.0], [3.0, 0.0], [10.0, 10.0]] {
        let (i, d) = vp.query_nearest(&aview1(&q));
        println!("nearest to {:?}: {} at {:.4}", q, i, d);
    }
    let vpc = VantagePointTree::new(points.clone(), Cosine {}).unwrap();
    println!("cosine-nearest to (1, 1): {:?}", vpc.query_nearest(&array![1.0, 1.0]).0);
    println!("{:?}", VantagePointTree::euclidean(Array2::<f64>::zeros((0, 2))).err());
    println!("{:?}", VantagePointTree::euclidean(points.t()).err());
}
