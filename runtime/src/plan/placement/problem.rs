//! The placement problem every policy solves, and its price: what each node costs where, and
//! what each copy costs. [`Problem::total`] is the objective `optimal` minimises and the
//! figure plans report (`predicted`).
//!
//! The model: a node runs on the CPU or on the accelerator; a value is copied to the
//! accelerator once if any reader runs there while it is on the CPU, and back once if any
//! reader runs on the CPU (or the evaluation wants it on the host) while it is on the
//! accelerator. A lazy allocation is made where its first user runs.

use crate::plan::Reason;
use crate::profile::{DeviceId, CPU};

/// Where a node may be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum At {
    /// Where it must be: evaluated there, kept on the CPU by its annotation, forced, too big.
    Fixed(DeviceId),
    /// The policy decides.
    Free,
    /// A lazy allocation, made where its first user (this part index) runs.
    FollowsFirstUser(usize),
}

/// One node of the part, as the policies see it.
#[derive(Clone, Debug)]
pub(crate) struct ProblemNode {
    pub at: At,
    /// Why it is where it is, when it is not free.
    pub reason: Reason,
    /// Estimated seconds on the CPU and on the accelerator (infinite without a version there;
    /// 0 for evaluated nodes).
    pub cpu_s: f64,
    pub accelerator_s: f64,
    /// Part indices of its arguments and of the unevaluated nodes that read it.
    pub inputs: Vec<usize>,
    pub readers: Vec<usize>,
    /// Seconds to copy its value to the accelerator and back.
    pub to_accelerator_s: f64,
    pub to_host_s: f64,
    pub bytes: usize,
    /// The evaluation wants it on the host.
    pub needed_on_host: bool,
}

/// Estimated seconds of a placement.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Total {
    pub compute_s: f64,
    pub copies_s: f64,
}

impl Total {
    pub fn seconds(&self) -> f64 {
        self.compute_s + self.copies_s
    }
}

/// The nodes of a part (same indices), the free ones in order, and the accelerator.
#[derive(Clone, Debug)]
pub(crate) struct Problem {
    pub nodes: Vec<ProblemNode>,
    pub free: Vec<usize>,
    pub accelerator: Option<DeviceId>,
    /// For each free node, the allocations that follow it.
    followers: Vec<Vec<usize>>,
}

impl Problem {
    pub fn new(nodes: Vec<ProblemNode>, accelerator: Option<DeviceId>) -> Problem {
        let free: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].at == At::Free).collect();
        let mut followers = vec![vec![]; nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            if let At::FollowsFirstUser(c) = n.at {
                followers[c].push(i);
            }
        }
        Problem { nodes, free, accelerator, followers }
    }

    /// A device for every node from one for every free node (allocations follow their first user).
    pub fn devices(&self, free_choice: &[DeviceId]) -> Vec<DeviceId> {
        let mut device: Vec<DeviceId> = self.nodes.iter().map(|n| if let At::Fixed(d) = n.at { d } else { CPU }).collect();
        for (&i, &d) in self.free.iter().zip(free_choice) {
            device[i] = d;
        }
        self.resolve(device)
    }

    /// Put each allocation on its first user's device.
    pub fn resolve(&self, mut device: Vec<DeviceId>) -> Vec<DeviceId> {
        for (i, n) in self.nodes.iter().enumerate() {
            if let At::FollowsFirstUser(c) = n.at {
                device[i] = device[c];
            }
        }
        device
    }

    fn unary(&self, i: usize, d: DeviceId) -> f64 {
        if d == CPU {
            self.nodes[i].cpu_s
        } else {
            self.nodes[i].accelerator_s
        }
    }

    /// Seconds of the copies of node `i`'s value under `device`.
    pub fn copies_of(&self, i: usize, device: &[DeviceId]) -> f64 {
        let n = &self.nodes[i];
        let mut s = 0.0;
        if device[i] == CPU {
            if n.readers.iter().any(|&r| device[r] != CPU) {
                s += n.to_accelerator_s;
            }
        } else if n.needed_on_host || n.readers.iter().any(|&r| device[r] == CPU) {
            s += n.to_host_s;
        }
        s
    }

    /// The estimated seconds of the whole placement `device`.
    pub fn total(&self, device: &[DeviceId]) -> Total {
        let mut t = Total::default();
        for i in 0..self.nodes.len() {
            t.compute_s += self.unary(i, device[i]);
            t.copies_s += self.copies_of(i, device);
        }
        t
    }

    /// What moving free node `i` (with the allocations that follow it) to the other device
    /// would add to the total, the rest staying: the margin of its placement (negative when
    /// moving it would gain).
    pub fn margin(&self, i: usize, device: &[DeviceId]) -> f64 {
        let Some(accel) = self.accelerator else { return f64::INFINITY };
        let group: Vec<usize> = std::iter::once(i).chain(self.followers[i].iter().copied()).collect();
        let mut values: Vec<usize> = group.clone();
        for &g in &group {
            values.extend(self.nodes[g].inputs.iter().copied());
        }
        values.sort_unstable();
        values.dedup();
        let local = |dev: &[DeviceId]| -> f64 { group.iter().map(|&g| self.unary(g, dev[g])).sum::<f64>() + values.iter().map(|&v| self.copies_of(v, dev)).sum::<f64>() };
        let mut flipped = device.to_vec();
        let to = if device[i] == CPU { accel } else { CPU };
        for &g in &group {
            flipped[g] = to;
        }
        local(&flipped) - local(device)
    }

    /// Seconds of the copies node `i`'s arguments need to reach device `d`, and their bytes.
    pub fn copies_into(&self, i: usize, d: DeviceId, device: &[DeviceId]) -> (f64, usize) {
        let mut seen = Vec::new();
        let (mut s, mut b) = (0.0, 0);
        for &u in &self.nodes[i].inputs {
            if device[u] != d && !seen.contains(&u) && !self.followers[i].contains(&u) {
                seen.push(u);
                s += if d == CPU { self.nodes[u].to_host_s } else { self.nodes[u].to_accelerator_s };
                b += self.nodes[u].bytes;
            }
        }
        (s, b)
    }
}
