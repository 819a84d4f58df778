//! Colours: a palette keyed by op name, so an op keeps its colour from chart to chart.

use super::*;

/// Tableau-based: eight strong, clearly distinct colours first, then twelve more.
pub(super) const STRONG: usize = 8;
pub(super) type Rgb = (u8, u8, u8);

pub(super) const PALETTE: [Rgb; 20] = [
    (0x4e, 0x79, 0xa7), // blue
    (0xf2, 0x8e, 0x2b), // orange
    (0xe1, 0x57, 0x59), // red
    (0x49, 0x98, 0x94), // teal
    (0x59, 0xa1, 0x4f), // green
    (0xed, 0xc9, 0x48), // yellow
    (0xb0, 0x7a, 0xa1), // purple
    (0xff, 0x9d, 0xa7), // pink
    (0x9c, 0x75, 0x5f), // brown
    (0xa0, 0xcb, 0xe8), // light blue
    (0x8c, 0xd1, 0x7d), // light green
    (0xb6, 0x99, 0x2d), // olive
    (0xd4, 0xa6, 0xc8), // lilac
    (0x86, 0xbc, 0xb6), // light teal
    (0xff, 0xbe, 0x7d), // peach
    (0xd3, 0x72, 0x95), // rose
    (0x79, 0x70, 0x6e), // grey
    (0x2f, 0x4b, 0x7c), // navy
    (0xba, 0xb0, 0xac), // light grey
    (0x8f, 0x2d, 0x2d), // dark red
];

pub(super) fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Each op name's place in the palette, for the life of the process (the notebook's session):
/// an op keeps its colour from chart to chart, whatever else a chart shows.
static PLACES: std::sync::Mutex<Vec<(String, usize)>> = std::sync::Mutex::new(Vec::new());

/// Colours for ops. An op name gets its place the first time a chart shows it: the place its
/// name hashes to, or the next one not yet taken in this round of 20 (the eight strong
/// colours first); names new to one chart are placed in sorted order. Past 20 names, colours
/// come back darker. Two ops of one chart never share a colour.
pub(super) fn assign_colors(names: &[&str]) -> Vec<Rgb> {
    let mut places = PLACES.lock().unwrap_or_else(|p| p.into_inner());
    let mut new: Vec<&str> = names.iter().copied().filter(|n| !places.iter().any(|(p, _)| p == n)).collect();
    new.sort();
    new.dedup();
    for name in new {
        let used = places.len();
        let round = used / PALETTE.len();
        let mut taken = [false; 20];
        for (_, p) in &places[round * PALETTE.len()..] {
            taken[*p] = true;
        }
        let h = fnv(name) as usize;
        let rest = PALETTE.len() - STRONG;
        let pick = (0..STRONG).map(|k| (h + k) % STRONG).chain((0..rest).map(|k| STRONG + (h + k) % rest)).find(|&p| !taken[p]).expect("a free colour in this round");
        places.push((name.to_string(), pick));
    }
    names
        .iter()
        .map(|n| {
            let at = places.iter().position(|(p, _)| p == n).expect("placed above");
            let (r, g, b) = PALETTE[places[at].1];
            let f = 0.62f64.powi((at / PALETTE.len()).min(8) as i32);
            ((r as f64 * f) as u8, (g as f64 * f) as u8, (b as f64 * f) as u8)
        })
        .collect()
}

pub(super) fn hex((r, g, b): Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

pub(super) fn id_prefix(evals: &[&EvalTrace]) -> String {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for e in evals {
        for v in [e.eval, e.cell, e.events.len() as u64, e.start.as_nanos() as u64, e.end.as_nanos() as u64] {
            h = (h ^ v).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("bach{:08x}", h as u32)
}
