// source: petabi/petal-neighbors src/ball_tree.rs, src/distance.rs @f48663ea (Apache-2.0)
{
    use std::cmp;
    use std::collections::BinaryHeap;
    use std::num::NonZeroUsize;
    use std::ops::{AddAssign, DivAssign, Range};

    use ndarray::{Array1, Array2, ArrayBase, ArrayView1, ArrayView2, CowArray, Data, Ix1, Ix2};
    use ndarray::{array, aview1};
    // changed: num_traits' Float and ordered_float's FloatCore replaced by ndarray's NdFloat,
    // num_traits' Zero and FromPrimitive by small local traits, and ordered_float::OrderedFloat
    // by a small local equivalent; the crate's ArrayError is a local enum; the unsafe Sync impl
    // and the Cosine metric dropped
    use ndarray::NdFloat as Float;
    use ndarray::NdFloat as FloatCore;
    pub trait Zero {}
    impl<T> Zero for T {}
    pub trait FromPrimitive: Sized {
        fn from_usize(n: usize) -> Option<Self>;
    }
    impl FromPrimitive for f64 {
        fn from_usize(n: usize) -> Option<Self> {
            Some(n as f64)
        }
    }
    impl FromPrimitive for f32 {
        fn from_usize(n: usize) -> Option<Self> {
            Some(n as f32)
        }
    }
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
        A: Float + Zero + AddAssign,
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

    pub fn pairwise<A: Float + Zero + AddAssign>(
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


    pub struct BallTree<'a, A, M>
    where
        A: FloatCore,
        M: Metric<A>,
    {
        pub points: CowArray<'a, A, Ix2>,
        pub idx: Vec<usize>,
        pub nodes: Vec<Node<A>>,
        pub metric: M,
    }

    impl<'a, A, M> BallTree<'a, A, M>
    where
        A: FloatCore + Zero + AddAssign + DivAssign + FromPrimitive,
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

            let height = usize::BITS - n_points.leading_zeros();
            let size = 1_usize.wrapping_shl(height) - 1;

            let mut idx: Vec<usize> = (0..n_points).collect();
            let mut nodes = vec![Node::default(); size];
            build_subtree(&mut nodes, &mut idx, &points, 0, 0..n_points, &metric);
            Ok(BallTree {
                points,
                idx,
                nodes,
                metric,
            })
        }

        #[allow(clippy::missing_panics_doc)] // never panics
        pub fn query_nearest<S>(&self, point: &ArrayBase<S, Ix1>) -> (usize, A)
        where
            S: Data<Elem = A>,
        {
            self.nearest_neighbor_in_subtree(&point.view(), 0, A::infinity())
                .expect("0 is a valid index")
        }

        pub fn query<S>(&self, point: &ArrayBase<S, Ix1>, k: usize) -> (Vec<usize>, Vec<A>)
        where
            S: Data<Elem = A>,
        {
            let Some(k) = NonZeroUsize::new(k) else {
                return (Vec::new(), Vec::new());
            };
            let mut neighbors = BinaryHeap::with_capacity(k.get());
            self.nearest_k_neighbors_in_subtree(
                &point.view(),
                0,
                &mut A::infinity(),
                k,
                &mut neighbors,
            );
            let sorted = neighbors.into_sorted_vec();
            let indices = sorted.iter().map(|v| v.idx).collect();
            let distances = sorted.iter().map(|v| v.distance.into_inner()).collect();
            (indices, distances)
        }

        pub fn query_radius<S>(&self, point: &ArrayBase<S, Ix1>, distance: A) -> Vec<usize>
        where
            S: Data<Elem = A>,
        {
            self.neighbors_within_radius_in_subtree(&point.view(), distance, 0)
        }

        fn nearest_neighbor_in_subtree(
            &self,
            point: &ArrayView1<A>,
            root: usize,
            radius: A,
        ) -> Option<(usize, A)> {
            let root_node = &self.nodes[root];
            let lower_bound = self.nodes[root].distance_lower_bound(point, &self.metric);
            if lower_bound > radius {
                return None;
            }

            if root_node.is_leaf {
                let (min_i, min_dist) = self.idx[root_node.range.clone()].iter().fold(
                    (0, A::infinity()),
                    |(min_i, min_dist), &i| {
                        let dist = self.metric.distance(point, &self.points.row(i));

                        if dist < min_dist {
                            (i, dist)
                        } else {
                            (min_i, min_dist)
                        }
                    },
                );
                if min_dist <= radius {
                    Some((min_i, min_dist))
                } else {
                    None
                }
            } else {
                let child1 = root * 2 + 1;
                let child2 = child1 + 1;
                let lb1 = self.nodes[child1].distance_lower_bound(point, &self.metric);
                let lb2 = self.nodes[child2].distance_lower_bound(point, &self.metric);
                let (child1, child2) = if lb1 < lb2 {
                    (child1, child2)
                } else {
                    (child2, child1)
                };
                match self.nearest_neighbor_in_subtree(point, child1, radius) {
                    Some(neighbor) => self
                        .nearest_neighbor_in_subtree(point, child2, neighbor.1)
                        .map_or(Some(neighbor), Some),
                    None => self.nearest_neighbor_in_subtree(point, child2, radius),
                }
            }
        }

        fn nearest_k_neighbors_in_subtree(
            &self,
            point: &ArrayView1<A>,
            root: usize,
            radius: &mut A,
            k: NonZeroUsize,
            neighbors: &mut BinaryHeap<Neighbor<A>>,
        ) {
            let root_node = &self.nodes[root];
            if root_node.distance_lower_bound(point, &self.metric) > *radius {
                return;
            }

            if root_node.is_leaf {
                self.idx[root_node.range.clone()].iter().for_each(|&i| {
                    let dist = self.metric.distance(point, &self.points.row(i));
                    let n = Neighbor::new(i, dist);
                    if neighbors.len() < k.get() {
                        neighbors.push(n);
                    } else if n < *neighbors.peek().expect("not empty") {
                        neighbors.pop();
                        neighbors.push(n);
                    }
                });
            } else {
                let child1 = root * 2 + 1;
                let child2 = child1 + 1;
                let lb1 = self.nodes[child1].distance_lower_bound(point, &self.metric);
                let lb2 = self.nodes[child2].distance_lower_bound(point, &self.metric);
                let (child1, child2) = if lb1 < lb2 {
                    (child1, child2)
                } else {
                    (child2, child1)
                };
                self.nearest_k_neighbors_in_subtree(point, child1, radius, k, neighbors);
                self.nearest_k_neighbors_in_subtree(point, child2, radius, k, neighbors);
            }
            if neighbors.len() == k.get() {
                *radius = neighbors.peek().expect("not empty").distance.into_inner();
            }
        }

        fn neighbors_within_radius_in_subtree(
            &self,
            point: &ArrayView1<A>,
            radius: A,
            root: usize,
        ) -> Vec<usize> {
            let mut neighbors = Vec::new();
            let mut subtrees_to_visit = vec![root];

            loop {
                let subroot = subtrees_to_visit.pop().expect("should not be empty");
                let root_node = &self.nodes[subroot];
                let (lb, ub) = root_node.distance_bounds(point, &self.metric);

                if lb > radius {
                    if subtrees_to_visit.is_empty() {
                        break;
                    }
                    continue;
                }

                if ub <= radius {
                    neighbors.reserve(root_node.range.end - root_node.range.start);
                    neighbors.extend(self.idx[root_node.range.clone()].iter().copied());
                } else if root_node.is_leaf {
                    neighbors.extend(self.idx[root_node.range.clone()].iter().filter_map(|&i| {
                        let dist = self.metric.distance(point, &self.points.row(i));
                        if dist < radius {
                            Some(i)
                        } else {
                            None
                        }
                    }));
                } else {
                    subtrees_to_visit.push(subroot * 2 + 1);
                    subtrees_to_visit.push(subroot * 2 + 2);
                }

                if subtrees_to_visit.is_empty() {
                    break;
                }
            }

            neighbors
        }

        // calculate minimum distance between the nodes:
        //   max(||n1_centroid - n2_centroid|| - R_n1 - R_n2, 0)
        #[inline]
        pub fn node_distance_lower_bound(&self, n1: usize, n2: usize) -> A {
            assert!(n1 < self.nodes.len() && n2 < self.nodes.len());
            let n1 = &self.nodes[n1];
            let n2 = &self.nodes[n2];
            let lb = self
                .metric
                .distance(&n1.centroid.view(), &n2.centroid.view())
                - n1.radius
                - n2.radius;
            if lb < A::zero() {
                A::zero()
            } else {
                lb
            }
        }

        #[inline]
        pub fn children_of(&self, n: usize) -> Option<(usize, usize)> {
            if self.nodes[n].is_leaf {
                None
            } else {
                let left = 2 * n + 1;
                let right = left + 1;
                Some((left, right))
            }
        }

        #[inline]
        pub fn points_of(&self, n: usize) -> &[usize] {
            &self.idx[self.nodes[n].range.clone()]
        }

        #[inline]
        pub fn radius_of(&self, n: usize) -> A {
            self.nodes[n].radius
        }

        #[inline]
        pub fn compare_nodes(&self, x: usize, y: usize) -> Option<std::cmp::Ordering> {
            self.nodes[x].radius.partial_cmp(&self.nodes[y].radius)
        }

        #[inline]
        pub fn num_nodes(&self) -> usize {
            self.nodes.len()
        }

        #[inline]
        pub fn num_points(&self) -> usize {
            self.points.nrows()
        }
    }

    impl<'a, A> BallTree<'a, A, Euclidean>
    where
        A: FloatCore + Float + Zero + AddAssign + DivAssign + FromPrimitive,
    {
        pub fn euclidean<T>(points: T) -> Result<BallTree<'a, A, Euclidean>, ArrayError>
        where
            A: Float + Zero + AddAssign + DivAssign + FromPrimitive,
            T: Into<CowArray<'a, A, Ix2>>,
        {
            BallTree::<'a, A, Euclidean>::new(points, Euclidean::default())
        }
    }

    #[derive(Clone, Debug)]
    struct Neighbor<A> {
        pub idx: usize,
        pub distance: OrderedFloat<A>,
    }

    impl<A> Neighbor<A>
    where
        A: FloatCore,
    {
        #[must_use]
        pub fn new(idx: usize, distance: A) -> Self {
            Self {
                idx,
                distance: distance.into(),
            }
        }
    }

    impl<A> Ord for Neighbor<A>
    where
        A: FloatCore,
    {
        fn cmp(&self, other: &Self) -> cmp::Ordering {
            self.distance.cmp(&other.distance)
        }
    }

    impl<A> PartialOrd for Neighbor<A>
    where
        A: FloatCore,
    {
        fn partial_cmp(&self, other: &Self) -> Option<cmp::Ordering> {
            Some(self.cmp(other))
        }
    }

    impl<A> PartialEq for Neighbor<A>
    where
        A: FloatCore,
    {
        fn eq(&self, other: &Self) -> bool {
            self.distance == other.distance
        }
    }

    impl<A> Eq for Neighbor<A> where A: FloatCore {}

    #[derive(Clone, Debug)]
    pub struct Node<A> {
        range: Range<usize>,
        centroid: Array1<A>,
        radius: A,
        is_leaf: bool,
    }

    impl<A> Node<A>
    where
        A: FloatCore + Zero + AddAssign + DivAssign + FromPrimitive,
    {
        #[allow(clippy::cast_precision_loss)] // The precision provided by 54-bit-wide mantissa is
                                              // good enough in computing mean.
        fn init(&mut self, points: &CowArray<A, Ix2>, idx: &[usize], metric: &dyn Metric<A>) {
            let mut sum = idx
                .iter()
                .fold(Array1::<A>::zeros(points.ncols()), |mut sum, &i| {
                    for (s, v) in sum.iter_mut().zip(points.row(i)) {
                        *s += *v;
                    }
                    sum
                });
            let len = A::from_usize(idx.len()).expect("approximation");
            sum.iter_mut().for_each(|v| *v /= len);
            self.centroid = sum;

            self.radius = idx.iter().fold(A::zero(), |max, &i| {
                A::max(metric.distance(&self.centroid.view(), &points.row(i)), max)
            });
        }

        fn distance_bounds(&self, point: &ArrayView1<A>, metric: &dyn Metric<A>) -> (A, A) {
            let centroid_dist = metric.distance(point, &self.centroid.view());
            let mut lb = centroid_dist - self.radius;
            if lb < A::zero() {
                lb = A::zero();
            }
            let ub = centroid_dist + self.radius;
            (lb, ub)
        }

        fn distance_lower_bound(&self, point: &ArrayView1<A>, metric: &dyn Metric<A>) -> A {
            let centroid_dist = metric.distance(point, &self.centroid.view());
            let lb = centroid_dist - self.radius;
            if lb < A::zero() {
                A::zero()
            } else {
                lb
            }
        }
    }

    impl<A> Default for Node<A>
    where
        A: FloatCore + Zero,
    {
        #[allow(clippy::reversed_empty_ranges)] // An empty range is valid because `centroid` is empty.
        fn default() -> Self {
            Self {
                range: (0..0),
                centroid: Array1::<A>::zeros(0),
                radius: A::zero(),
                is_leaf: false,
            }
        }
    }

    fn build_subtree<A, M>(
        nodes: &mut [Node<A>],
        idx: &mut [usize],
        points: &CowArray<A, Ix2>,
        root: usize,
        range: Range<usize>,
        metric: &M,
    ) where
        A: FloatCore + AddAssign + DivAssign + FromPrimitive,
        M: Metric<A>,
    {
        let n_nodes = nodes.len();
        let root_node = nodes.get_mut(root).expect("root node index out of range");
        root_node.init(
            points,
            idx.get(range.clone()).expect("invalid subtree range"),
            metric,
        );
        root_node.range = range.clone();
        let left = root * 2 + 1;
        if left >= n_nodes {
            root_node.is_leaf = true;
            return;
        }

        #[allow(clippy::deref_addrof)]
        let col_idx = max_spread_column(points, &idx[range.clone()]);
        debug_assert!(col_idx < points.ncols());
        let col = points.column(col_idx);
        halve_node_indices(&mut idx[range.clone()], &col);

        let mid = (range.start + range.end) / 2;
        build_subtree(nodes, idx, points, left, range.start..mid, metric);
        build_subtree(nodes, idx, points, left + 1, mid..range.end, metric);
    }

    fn halve_node_indices<A>(idx: &mut [usize], col: &ArrayView1<A>)
    where
        A: FloatCore,
    {
        let (mut first, mut last) = (0, idx.len() - 1);
        let mid = idx.len() / 2;
        loop {
            let mut cur = first;
            for i in first..last {
                if col[idx[i]] < col[idx[last]] {
                    idx.swap(i, cur);
                    cur += 1;
                }
            }
            idx.swap(cur, last);
            if cur == mid {
                break;
            }
            if cur < mid {
                first = cur + 1;
            } else {
                last = cur - 1;
            }
        }
    }

    fn max_spread_column<A, S>(matrix: &ArrayBase<S, Ix2>, idx: &[usize]) -> usize
    where
        A: FloatCore,
        S: Data<Elem = A>,
    {
        assert!(matrix.ncols() > 0 && !idx.is_empty(), "empty matrix");
        assert!(
            idx.iter().all(|&i| i < matrix.nrows()),
            "index out of bounds"
        );

        let mut spread_iter = matrix
            .columns()
            .into_iter()
            .map(|col| {
                let (min, max) = idx
                    .iter()
                    .skip(1)
                    .fold((col[idx[0]], col[idx[0]]), |(min, max), &i| {
                        (A::min(min, col[i]), A::max(max, col[i]))
                    });
                max - min
            })
            .enumerate();
        let (_, max_spread) = spread_iter.next().expect("empty matrix");
        let (max_spread_col, _) = spread_iter.fold(
            (0, max_spread),
            |(max_spread_col, max_spread), (i, spread)| {
                if spread.partial_cmp(&max_spread) == Some(cmp::Ordering::Greater) {
                    (i, spread)
                } else {
                    (max_spread_col, max_spread)
                }
            },
        );
        max_spread_col
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
        [0.0, 0.0],
    ];
    let tree = BallTree::euclidean(points.view()).expect("valid array");
    println!("{} nodes for {} points", tree.num_nodes(), tree.num_points());
    for n in 0..tree.num_nodes() {
        println!("node {}: points {:?}, radius {:.4}, children {:?}", n, tree.points_of(n), tree.radius_of(n), tree.children_of(n));
    }
    let (i, d) = tree.query_nearest(&aview1(&[0.95, 1.96]));
    println!("nearest to (0.95, 1.96): {} at {:.4}", i, d);
    let (idx, dist) = tree.query(&array![3.0, 0.0], 3);
    println!("3 nearest to (3, 0): {:?} at {:?}", idx, dist.iter().map(|d| format!("{:.4}", d)).collect::<Vec<_>>());
    let mut within = tree.query_radius(&array![1.0, 2.0], 0.25);
    within.sort();
    println!("within 0.25 of (1, 2): {:?}", within);
    println!("lower bound between nodes 1 and 2: {:.4}", tree.node_distance_lower_bound(1, 2));
    println!("{:?}", BallTree::euclidean(Array2::<f64>::zeros((0, 2))).err());
}
