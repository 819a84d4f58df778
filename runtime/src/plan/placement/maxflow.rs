//! Maximum flow / minimum s-t cut on real capacities (Dinic's algorithm: BFS levels, then
//! blocking flows by DFS with per-vertex edge pointers).
//!
//! Written here rather than taken from petgraph: petgraph's `ford_fulkerson` augments one
//! shortest path at a time (Edmonds-Karp), which on a 10,000-op plan with a path per op is
//! far over the planner's budget, and it does not return the cut's sides.

/// A flow network with vertices `0..n`.
pub struct FlowNetwork {
    /// Per vertex, indices into `edges` of the edges leaving it (residual reverses included).
    adjacent: Vec<Vec<usize>>,
    /// `(to, remaining capacity)`; edge `e ^ 1` is the reverse of `e`.
    edges: Vec<(usize, f64)>,
}

/// Residual capacities at or below this count as saturated (capacities are seconds).
const EPS: f64 = 1e-15;

impl FlowNetwork {
    pub fn new(n: usize) -> Self {
        FlowNetwork { adjacent: vec![Vec::new(); n], edges: Vec::new() }
    }

    pub fn vertex(&mut self) -> usize {
        self.adjacent.push(Vec::new());
        self.adjacent.len() - 1
    }

    pub fn vertices(&self) -> usize {
        self.adjacent.len()
    }

    /// An edge `from -> to` of `capacity` (may be infinite). Self loops and empty edges are dropped.
    pub fn edge(&mut self, from: usize, to: usize, capacity: f64) {
        if from == to || capacity <= 0.0 {
            return;
        }
        self.adjacent[from].push(self.edges.len());
        self.edges.push((to, capacity));
        self.adjacent[to].push(self.edges.len());
        self.edges.push((from, 0.0));
    }

    /// Push the maximum flow from `s` to `t`; returns its value (the minimum cut's capacity).
    pub fn max_flow(&mut self, s: usize, t: usize) -> f64 {
        let n = self.adjacent.len();
        let mut total = 0.0;
        let mut level = vec![usize::MAX; n];
        let mut next = vec![0usize; n];
        let mut queue = std::collections::VecDeque::new();
        loop {
            level.fill(usize::MAX);
            level[s] = 0;
            queue.clear();
            queue.push_back(s);
            while let Some(u) = queue.pop_front() {
                for &e in &self.adjacent[u] {
                    let (v, cap) = self.edges[e];
                    if cap > EPS && level[v] == usize::MAX {
                        level[v] = level[u] + 1;
                        queue.push_back(v);
                    }
                }
            }
            if level[t] == usize::MAX {
                return total;
            }
            next.fill(0);
            loop {
                let f = self.blocking(s, t, f64::INFINITY, &level, &mut next);
                if f <= EPS {
                    break;
                }
                if f.is_infinite() {
                    return f;
                }
                total += f;
            }
        }
    }

    /// One augmenting path in the level graph, iteratively (plans are deep chains).
    fn blocking(&mut self, s: usize, t: usize, limit: f64, level: &[usize], next: &mut [usize]) -> f64 {
        // Path of edges from s.
        let mut path: Vec<usize> = Vec::new();
        let mut u = s;
        loop {
            if u == t {
                let f = path.iter().fold(limit, |m, &e| m.min(self.edges[e].1));
                for &e in &path {
                    self.edges[e].1 -= f;
                    self.edges[e ^ 1].1 += f;
                }
                return f;
            }
            let mut advanced = false;
            while next[u] < self.adjacent[u].len() {
                let e = self.adjacent[u][next[u]];
                let (v, cap) = self.edges[e];
                if cap > EPS && level[v] == level[u] + 1 {
                    path.push(e);
                    u = v;
                    advanced = true;
                    break;
                }
                next[u] += 1;
            }
            if !advanced {
                // Dead end: retreat and skip the edge that led here.
                match path.pop() {
                    None => return 0.0,
                    Some(e) => {
                        u = self.edges[e ^ 1].0;
                        next[u] += 1;
                    }
                }
            }
        }
    }

    /// After [`max_flow`](Self::max_flow): the vertices on the sink's side of a minimum cut,
    /// the smallest such side (those that still reach `t` in the residual network).
    pub fn sink_side(&self, t: usize) -> Vec<bool> {
        let n = self.adjacent.len();
        let mut side = vec![false; n];
        side[t] = true;
        let mut stack = vec![t];
        while let Some(v) = stack.pop() {
            // u reaches v when the residual capacity of u -> v is left: that edge is the
            // reverse of one of v's adjacent edges.
            for &e in &self.adjacent[v] {
                let u = self.edges[e].0;
                if !side[u] && self.edges[e ^ 1].1 > EPS {
                    side[u] = true;
                    stack.push(u);
                }
            }
        }
        side
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The minimum cut by trying every side assignment of the inner vertices.
    fn brute_force_cut(n: usize, edges: &[(usize, usize, f64)], s: usize, t: usize) -> f64 {
        let inner: Vec<usize> = (0..n).filter(|&v| v != s && v != t).collect();
        let mut best = f64::INFINITY;
        for mask in 0..(1u32 << inner.len()) {
            let mut sink = vec![false; n];
            sink[t] = true;
            for (k, &v) in inner.iter().enumerate() {
                sink[v] = mask & (1 << k) != 0;
            }
            let cut: f64 = edges.iter().filter(|&&(a, b, _)| !sink[a] && sink[b]).map(|e| e.2).sum();
            best = best.min(cut);
        }
        best
    }

    #[test]
    fn max_flow_equals_the_brute_force_minimum_cut_on_random_networks() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..300 {
            let n = 2 + (rnd() % 9) as usize;
            let m = (rnd() % 25) as usize;
            let edges: Vec<(usize, usize, f64)> = (0..m).map(|_| ((rnd() % n as u64) as usize, (rnd() % n as u64) as usize, (rnd() % 1000) as f64 / 100.0)).collect();
            let mut net = FlowNetwork::new(n);
            for &(a, b, c) in &edges {
                net.edge(a, b, c);
            }
            let flow = net.max_flow(0, n - 1);
            let cut = brute_force_cut(n, &edges, 0, n - 1);
            assert!((flow - cut).abs() < 1e-9, "flow {flow} cut {cut} on {edges:?}");
            let side = net.sink_side(n - 1);
            assert!(!side[0]);
            let sides_cut: f64 = edges.iter().filter(|&&(a, b, _)| !side[a] && side[b]).map(|e| e.2).sum();
            assert!((sides_cut - cut).abs() < 1e-9, "the sides found cut {sides_cut}, the minimum is {cut}");
        }
    }

    #[test]
    fn an_infinite_edge_is_never_cut_when_a_finite_cut_exists() {
        let mut net = FlowNetwork::new(4);
        net.edge(0, 1, 3.0);
        net.edge(1, 2, f64::INFINITY);
        net.edge(2, 3, 2.0);
        net.edge(0, 2, 1.0);
        assert_eq!(net.max_flow(0, 3), 2.0);
        let side = net.sink_side(3);
        assert_eq!(side, vec![false, false, false, true]);
    }
}
