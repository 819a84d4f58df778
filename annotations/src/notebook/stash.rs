//! Carrying a notebook's Bach arrays and session settings across a rebuild of this crate.
//!
//! A `:dep` that makes cargo rebuild the crates under `bach` loads new copies of them into the
//! Rust process: evcxr drops every variable whose type came from the old copies, and the new
//! copy's Bach session starts empty. So the kernel runs, just before such a rebuild, one cell
//! that saves every Bach array variable and the session's settings into a directory, and after
//! it one cell that brings them back under the same names.
//!
//! Saving: the kernel lists every variable evcxr knows, whatever its type; autoref
//! specialization ([`Stasher`] before [`Skip`]) makes the cell compile for any type and save
//! only Bach arrays:
//!
//! ```
//! # use bach::prelude::*;
//! # let dir = std::env::temp_dir().join(format!("bach-stash-doc-{}", std::process::id()));
//! # let dir = dir.to_str().unwrap();
//! let a = Array::linspace(0.0, 1.0, 5);
//! let v = vec![1, 2, 3];
//! {
//!     use bach::notebook::stash::{Skip as _, Stasher as _};
//!     let __stash = bach::notebook::stash::Stash::new(dir);
//!     (&&bach::notebook::stash::Var("a", &a)).stash_into(&__stash);
//!     (&&bach::notebook::stash::Var("v", &v)).stash_into(&__stash);
//!     __stash.finish();
//! }
//! # assert_eq!(std::fs::read_to_string(std::path::Path::new(dir).join("manifest.tsv")).unwrap(),
//! #            "# bach stash 1\na\tbach::Array<f64, bach::Ix1>\n");
//! // ... the rebuild; then, from the manifest:
//! bach::notebook::stash::restore_session(dir)?;
//! let a: bach::Array<f64, bach::Ix1> = bach::notebook::stash::restore(dir, "a")?;
//! # assert_eq!(a.to_array1()?.to_vec(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
//! # std::fs::remove_dir_all(dir).unwrap();
//! # Ok::<(), bach::BachError>(())
//! ```
//!
//! Kept: `bach::Array<A, D>` for every dimension type `D` (`Ix0`..`Ix6`, `IxDyn`) and the
//! element types of [`Stashable`]: the graph's (f64, f32, i64, bool) and the integer types of
//! host arrays (u8, u16, u32, u64, usize, i8, i16, i32, isize, written as i64). Arrays of
//! other element types (`char`, `String`, a user's struct) are listed as not kept. Values
//! that hold arrays without being one (`Vec<Array1<f64>>`, a struct, a tuple) are not seen:
//! they are lost as any value of the old crate's types is.
//!
//! # The directory
//!
//! [`Stash::new`] creates it, or empties it of what a stash writes there (`*.npy` and the
//! files named below; nothing else is touched). A kept variable `name` is `name.npy` (the
//! crate's own `.npy` writer, NumPy's format), the session's settings are `session.txt` and
//! `cost.json` (a cost profile file), and [`Stash::finish`] writes the manifest last, whole
//! (written to a temporary name, then renamed): no manifest, no usable stash.
//!
//! # The manifest: `manifest.tsv`
//!
//! UTF-8 text, lines ending in `\n`, fields separated by one `\t`:
//!
//! - `# ...`: a comment (the first line is `# bach stash 1`, the format's version); ignore.
//! - `NAME\tTYPE`: variable `NAME` was kept; `TYPE` is the exact Rust type to declare it with
//!   again, e.g. `bach::Array<f64, bach::Ix2>`, `bach::Array<usize, bach::IxDyn>`: always
//!   `bach::Array<ELEMENT, bach::DIM>`, `ELEMENT` one of `f64 f32 i64 bool u8 u16 u32 u64
//!   usize i8 i16 i32 isize`, `DIM` one of `Ix0`..`Ix6`, `IxDyn` (see [`type_text`]).
//!   The kernel restores it with
//!   `let NAME: TYPE = bach::notebook::stash::restore("DIR", "NAME")?;`
//! - `!NAME\tREASON`: variable `NAME` is a Bach array that could not be kept (its evaluation
//!   failed, its element type cannot be saved, the disk is full, ...); `REASON` is one line.
//! - `!:session\tREASON`: the session's settings could not be saved
//!   ([`restore_session`] then fails with a reason too). No line names the session when its
//!   settings were saved.
//!
//! Variables of any other type get no line. Names are the variables' (Rust identifiers: no
//! tab, no newline); each appears at most once (a second `stash_into` of a name already
//! listed is ignored), in the order of the `stash_into` calls.
//!
//! # Restoring
//!
//! [`restore_session`] first (the settings decide how the arrays are held: the eager size
//! limit), then [`restore`] once per kept variable. Both return `bach::Result`, for `?` in the
//! cell (a `?` that returns early is a success to evcxr: see [`super::cell_end`]). A restored
//! array is a computed value of the new session: the same shape and values (row-major,
//! whatever the memory order was); where it lived (an accelerator) and the graph that
//! computed it are not kept.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bach_runtime::{session, BachError, CostModel, DType, Element, Policy, Result, Session, Value};
use ndarray::{ArcArray, Dimension, IxDyn};

use super::ChartWhen;
use crate::array::Array;

/// The manifest's file name in a stash directory (the kernel reads it too).
pub use bach_wire::calls::stash::MANIFEST;
/// The first line of a manifest.
const MANIFEST_HEAD: &str = "# bach stash 1";
/// The session's settings (`key\tvalue` lines).
const SESSION_FILE: &str = "session.txt";
const SESSION_HEAD: &str = "# bach session settings 1";
/// The session's cost model, as a cost profile file (`CostModel::save`).
const COST_FILE: &str = "cost.json";
/// The manifest's name for the session's settings in a `!` line.
pub const SESSION_NAME: &str = ":session";

/// A variable for [`Stasher::stash_into`]: its name and a reference to it (any type).
pub struct Var<'a, T: ?Sized>(pub &'a str, pub &'a T);

/// `(&&Var(name, &x)).stash_into(&stash)` for a Bach array `x`: saves it (arrays of
/// [`Stashable`] elements), or lists it as not kept (other element types). With [`Skip`] in
/// scope too, the call compiles for a variable of any type.
pub trait Stasher {
    fn stash_into(&self, stash: &Stash);
}

/// `(&&Var(name, &x)).stash_into(&stash)` for a value that is not a Bach array: does nothing.
/// (Method lookup tries `&&Var` first, where [`Stasher`] is implemented for arrays of
/// [`Stashable`] elements, then `&&&Var`, [`Stasher`] for arrays of other elements, then
/// `&Var`, this trait for everything.)
pub trait Skip {
    fn stash_into(&self, stash: &Stash);
}

impl<A: Stashable, D: Dimension> Stasher for &Var<'_, Array<A, D>> {
    fn stash_into(&self, stash: &Stash) {
        stash.keep(self.0, self.1);
    }
}

impl<A, D: Dimension> Stasher for &&Var<'_, Array<A, D>> {
    fn stash_into(&self, stash: &Stash) {
        let why = format!("its elements are {}: a stash keeps arrays of f64, f32, i64, bool and integers", std::any::type_name::<A>());
        stash.record(self.0, Err(why));
    }
}

impl<T: ?Sized> Skip for Var<'_, T> {
    fn stash_into(&self, _stash: &Stash) {}
}

mod sealed {
    pub trait Sealed {}
}

/// The element types whose arrays a stash keeps: the graph's (f64, f32, i64, bool), and the
/// integer types of host arrays, written as i64 (u64 and usize values above `i64::MAX` by
/// their bits) and read back as they were.
pub trait Stashable: Clone + 'static + sealed::Sealed {
    /// The type as the manifest writes it (`f64`, `usize`).
    const NAME: &'static str;
    /// The dtype of its `.npy` file.
    #[doc(hidden)]
    const FILE_DTYPE: DType;
    /// The array's values as the `.npy` writer takes them.
    #[doc(hidden)]
    fn to_value(a: ArcArray<Self, IxDyn>) -> Value;
    /// The values of a file of [`Stashable::FILE_DTYPE`].
    #[doc(hidden)]
    fn from_value(v: Value) -> Result<ndarray::ArrayD<Self>>;
}

macro_rules! graph_elements {
    ($($t:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Stashable for $t {
            const NAME: &'static str = stringify!($t);
            const FILE_DTYPE: DType = <$t as Element>::DTYPE;
            fn to_value(a: ArcArray<Self, IxDyn>) -> Value {
                <$t as Element>::wrap(a)
            }
            fn from_value(v: Value) -> Result<ndarray::ArrayD<Self>> {
                let a = <$t as Element>::array_of(&v).cloned().ok_or_else(|| BachError::dtype("restore", <$t as Element>::DTYPE, v.meta().dtype))?;
                drop(v);
                // The only handle now: no copy.
                Ok(a.into_owned())
            }
        }
    )*};
}
graph_elements!(f64, f32, i64, bool);

macro_rules! integer_elements {
    ($($t:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Stashable for $t {
            const NAME: &'static str = stringify!($t);
            const FILE_DTYPE: DType = DType::I64;
            fn to_value(a: ArcArray<Self, IxDyn>) -> Value {
                // Exact for every type here: 64-bit unsigned values keep their bits.
                Value::I64(a.mapv(|x| x as i64).into_shared())
            }
            fn from_value(v: Value) -> Result<ndarray::ArrayD<Self>> {
                let a = i64::array_of(&v).ok_or_else(|| BachError::dtype("restore", DType::I64, v.meta().dtype))?;
                let bad = a.iter().find(|&&x| x as $t as i64 != x);
                if let Some(x) = bad {
                    return Err(BachError::invalid("restore", format!("{x} is not a {}", stringify!($t))));
                }
                Ok(a.mapv(|x| x as $t))
            }
        }
    )*};
}
integer_elements!(u8, u16, u32, u64, usize, i8, i16, i32, isize);

/// The Rust type the manifest names for an `Array<A, D>`, as the kernel writes it in a
/// declaration: `bach::Array<f64, bach::Ix2>`, `bach::Array<bool, bach::IxDyn>`. Each names,
/// from a crate that depends on `bach` (a notebook), the type it is written for:
///
/// ```
/// use bach::notebook::stash::type_text;
/// macro_rules! same {
///     ($($a:ident: $($d:ident)*;)*) => {$($(
///         let _: Option<bach::Array<$a, bach::$d>> = None;
///         assert_eq!(type_text::<$a, bach::$d>(), concat!("bach::Array<", stringify!($a), ", bach::", stringify!($d), ">"));
///     )*)*};
/// }
/// same! {
///     f64: Ix0 Ix1 Ix2 Ix3 Ix4 Ix5 Ix6 IxDyn;
///     f32: Ix0 Ix1 Ix2 Ix3 Ix4 Ix5 Ix6 IxDyn;
///     i64: Ix0 Ix1 Ix2 Ix3 Ix4 Ix5 Ix6 IxDyn;
///     bool: Ix0 Ix1 Ix2 Ix3 Ix4 Ix5 Ix6 IxDyn;
///     u8: Ix1 IxDyn; u16: Ix1 IxDyn; u32: Ix1 IxDyn; u64: Ix1 IxDyn; usize: Ix1 IxDyn;
///     i8: Ix1 IxDyn; i16: Ix1 IxDyn; i32: Ix1 IxDyn; isize: Ix1 IxDyn;
/// }
/// // And each restores as the type it names.
/// # let dir = std::env::temp_dir().join(format!("bach-stash-types-{}", std::process::id()));
/// let x = bach::Array::from_shape_vec((1, 2), vec![1u16, 2]).unwrap();
/// {
///     use bach::notebook::stash::{Skip as _, Stasher as _};
///     let __stash = bach::notebook::stash::Stash::new(&dir);
///     (&&bach::notebook::stash::Var("x", &x)).stash_into(&__stash);
///     __stash.finish();
/// }
/// # assert!(std::fs::read_to_string(dir.join("manifest.tsv")).unwrap().contains("x\tbach::Array<u16, bach::Ix2>\n"));
/// let x: bach::Array<u16, bach::Ix2> = bach::notebook::stash::restore(&dir, "x").unwrap();
/// assert_eq!(x.shape(), &[1, 2]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn type_text<A: Stashable, D: Dimension>() -> String {
    match D::NDIM {
        Some(n) => format!("bach::Array<{}, bach::Ix{n}>", A::NAME),
        None => format!("bach::Array<{}, bach::IxDyn>", A::NAME),
    }
}

/// What became of one variable: its type, or why it was not kept.
type Outcome = std::result::Result<String, String>;

/// A stash being written: the directory, and what became of each variable so far.
pub struct Stash {
    dir: PathBuf,
    /// Why nothing can be written there (the directory could not be made or emptied).
    broken: Option<String>,
    /// The session whose settings [`Stash::finish`] saves (none when nothing made one).
    session: Option<Arc<Session>>,
    entries: RefCell<Vec<(String, Outcome)>>,
}

impl Stash {
    /// A stash in `dir`, made if need be and emptied of an earlier stash's files (`*.npy`,
    /// the manifest, the settings; nothing else). Never fails: a directory that cannot be
    /// written makes every variable "not kept" and [`Stash::finish`] say so.
    pub fn new(dir: impl AsRef<Path>) -> Stash {
        Stash::for_session(dir, session::global_if_made().cloned())
    }

    /// [`Stash::new`] saving `session`'s settings rather than the notebook's.
    pub(crate) fn for_session(dir: impl AsRef<Path>, session: Option<Arc<Session>>) -> Stash {
        let dir = dir.as_ref().to_path_buf();
        let broken = prepare(&dir).err();
        Stash { dir, broken, session, entries: RefCell::new(Vec::new()) }
    }

    /// Evaluate `a` (a pending value is computed, one kept on a device copied to the host)
    /// and write it as `name.npy`; a failure is recorded, never raised.
    fn keep<A: Stashable, D: Dimension>(&self, name: &str, a: &Array<A, D>) {
        if self.listed(name) {
            return;
        }
        let write = || -> std::result::Result<(), String> {
            let file = self.file_of(name)?;
            let value = A::to_value(a.eval().map_err(|e| format!("its evaluation failed: {e}"))?);
            crate::io::npy::write_value(&file, &value).map_err(|e| e.to_string())
        };
        // A panic (a user's closure in the value's graph) loses this variable, not the rest.
        let outcome = match bach_runtime::device::catch_panics(write) {
            Ok(Ok(())) => Ok(type_text::<A, D>()),
            Ok(Err(why)) => Err(why),
            Err(panic) => Err(format!("its evaluation panicked: {}", bach_runtime::device::panic_text(&*panic))),
        };
        self.record(name, outcome);
    }

    /// `dir/name.npy`, or why not.
    fn file_of(&self, name: &str) -> std::result::Result<PathBuf, String> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        file_name(name).map(|f| self.dir.join(f))
    }

    fn listed(&self, name: &str) -> bool {
        self.entries.borrow().iter().any(|(n, _)| n == name)
    }

    /// Record what became of `name` (once: a name listed already is left as it is).
    fn record(&self, name: &str, outcome: Outcome) {
        if !self.listed(name) {
            self.entries.borrow_mut().push((name.to_string(), outcome));
        }
    }

    /// Save the session's settings and write the manifest. Prints nothing when the manifest
    /// is written; one line saying why when it cannot be.
    pub fn finish(self) {
        let saved = match &self.broken {
            Some(why) => Err(why.clone()),
            None => save_session(&self.dir, self.session.as_deref()),
        };
        if let Err(why) = saved {
            self.entries.borrow_mut().push((SESSION_NAME.to_string(), Err(why)));
        }
        if let Err(why) = self.write_manifest() {
            println!("bach: nothing can be restored after the rebuild: {why}");
        }
    }

    /// The manifest's text (see the module's documentation).
    fn manifest(&self) -> String {
        let mut out = format!("{MANIFEST_HEAD}\n");
        for (name, outcome) in self.entries.borrow().iter() {
            let _ = match outcome {
                Ok(ty) => writeln!(out, "{name}\t{ty}"),
                // (A name that is no identifier was not kept: on one line too.)
                Err(why) => writeln!(out, "!{}\t{}", one_line(name), one_line(why)),
            };
        }
        out
    }

    /// Write the manifest whole: to a temporary name, then renamed.
    fn write_manifest(&self) -> std::result::Result<(), String> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        let path = self.dir.join(MANIFEST);
        let tmp = self.dir.join(format!("{MANIFEST}.{}", std::process::id()));
        std::fs::write(&tmp, self.manifest()).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Make `dir`, or empty it of a stash's files.
fn prepare(dir: &Path) -> std::result::Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot use {} for the stash: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(fail)?;
    for entry in std::fs::read_dir(dir).map_err(fail)? {
        let path = entry.map_err(fail)?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let ours = name.ends_with(".npy") || [MANIFEST, SESSION_FILE, COST_FILE].contains(&name) || name.starts_with(&format!("{MANIFEST}."));
        if ours && path.is_file() {
            std::fs::remove_file(&path).map_err(fail)?;
        }
    }
    Ok(())
}

/// `name.npy` for a variable name (a Rust identifier, `r#` allowed), or why it cannot be one.
fn file_name(name: &str) -> std::result::Result<String, String> {
    let bare = name.strip_prefix("r#").unwrap_or(name);
    if bare.is_empty() || !bare.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(format!("`{name}` is not a variable name"));
    }
    Ok(format!("{name}.npy"))
}

/// `s` on one line, without tabs (a manifest field).
fn one_line(s: &str) -> String {
    s.split(['\n', '\r', '\t']).filter(|p| !p.trim().is_empty()).map(str::trim).collect::<Vec<_>>().join(" ")
}

/// Bring back variable `name` of a stash in `dir` as an `Array<A, D>`: a computed value of
/// the current (new) session, with the values and shape it was saved with. An error when it
/// was not kept, or when its element type or number of axes is not `A`'s and `D`'s.
pub fn restore<A: Stashable, D: Dimension>(dir: impl AsRef<Path>, name: &str) -> Result<Array<A, D>> {
    let file = dir.as_ref().join(file_name(name).map_err(|e| BachError::invalid("restore", e))?);
    let value = crate::io::npy::read_value(&file, A::FILE_DTYPE)?;
    let shape = value.meta().shape;
    if D::NDIM.is_some_and(|n| n != shape.len()) {
        return Err(BachError::shape("restore", format!("`{name}` was saved as a {}-d array (shape {shape:?}), not {}", shape.len(), crate::array::dim_name::<D>())));
    }
    let a = A::from_value(value)?.into_dimensionality::<D>().map_err(|e| BachError::shape("restore", e.to_string()))?;
    Ok(Array::from_array(a))
}

/// Bring back the session settings a stash in `dir` saved (policy, cost model, accelerator
/// memory cap, eager size limit, the trace's length, the chart setting), into the notebook's
/// session. What can be applied is; an error lists what could not.
pub fn restore_session(dir: impl AsRef<Path>) -> Result<()> {
    restore_session_into(dir.as_ref(), session::global)
}

/// [`restore_session`] into the session `session` gives (asked for only when the stash
/// holds a session's settings: none was made before the rebuild, none is made now).
pub(crate) fn restore_session_into(dir: &Path, session: impl FnOnce() -> Arc<Session>) -> Result<()> {
    let path = dir.join(SESSION_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| BachError::Io(format!("the session's settings were not saved ({}: {e})", path.display())))?;
    let mut errors = Vec::new();
    let mut settings = Settings::default();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        if let Err(e) = settings.read(dir, line) {
            errors.push(format!("`{line}`: {e}"));
        }
    }
    settings.apply(session);
    match errors.is_empty() {
        true => Ok(()),
        false => Err(BachError::invalid("restore_session", errors.join("; "))),
    }
}

/// The settings of a `session.txt`, each as it was read (`None`: not in the file).
#[derive(Default)]
struct Settings {
    chart: Option<ChartWhen>,
    policy: Option<Policy>,
    memory_cap: Option<Option<u64>>,
    eager_max_elements: Option<usize>,
    trace_keep: Option<usize>,
    cost: Option<CostModel>,
}

impl Settings {
    /// Read one `key\tvalue` line.
    fn read(&mut self, dir: &Path, line: &str) -> std::result::Result<(), String> {
        let (key, value) = line.split_once('\t').ok_or("not a `key<TAB>value` line")?;
        let number = |v: &str| v.parse::<u64>().map_err(|e| e.to_string());
        match key {
            "chart" => self.chart = Some(chart_of(value)?),
            "policy" => self.policy = Some(value.parse()?),
            "memory_cap" => self.memory_cap = Some(if value == "none" { None } else { Some(number(value)?) }),
            "eager_max_elements" => self.eager_max_elements = Some(number(value)? as usize),
            "trace_keep" => self.trace_keep = Some(number(value)? as usize),
            "cost" => self.cost = Some(CostModel::load(&dir.join(value))?),
            _ => return Err("an unknown setting".into()),
        }
        Ok(())
    }

    /// Apply them: the chart setting to this copy of the crate, the rest to `session`'s.
    fn apply(self, session: impl FnOnce() -> Arc<Session>) {
        if let Some(chart) = self.chart {
            *super::CHART_WHEN.lock().unwrap_or_else(|p| p.into_inner()) = chart;
        }
        let Settings { policy, memory_cap, eager_max_elements, trace_keep, cost, .. } = self;
        if policy.is_none() && memory_cap.is_none() && eager_max_elements.is_none() && trace_keep.is_none() && cost.is_none() {
            return;
        }
        let s = session();
        s.update_config(|c| {
            c.policy = policy.unwrap_or(c.policy);
            c.memory_cap = memory_cap.unwrap_or(c.memory_cap);
            c.eager_max_elements = eager_max_elements.unwrap_or(c.eager_max_elements);
            if let Some(cost) = cost {
                c.cost = cost;
            }
        });
        if let Some(n) = trace_keep {
            s.trace().set_keep(n);
        }
    }
}

/// `full`, `compact` or `auto SECONDS`, as [`chart_text`] writes it.
fn chart_of(text: &str) -> std::result::Result<ChartWhen, String> {
    match text.split_once(' ') {
        None if text == "full" => Ok(ChartWhen::Full),
        None if text == "compact" => Ok(ChartWhen::Compact),
        Some(("auto", s)) => s.parse().map(ChartWhen::Auto).map_err(|e| format!("{e}")),
        _ => Err("not full, compact or auto SECONDS".into()),
    }
}

/// The chart setting as a line of `session.txt` (seconds in full: read back exactly).
fn chart_text(c: ChartWhen) -> String {
    match c {
        ChartWhen::Full => "full".into(),
        ChartWhen::Compact => "compact".into(),
        ChartWhen::Auto(s) => format!("auto {s}"),
    }
}

/// Write `session.txt` (and `cost.json`) in `dir`: the chart setting, and `session`'s
/// settings when there is a session.
fn save_session(dir: &Path, session: Option<&Session>) -> std::result::Result<(), String> {
    let chart = *super::CHART_WHEN.lock().unwrap_or_else(|p| p.into_inner());
    let mut text = format!("{SESSION_HEAD}\nchart\t{}\n", chart_text(chart));
    if let Some(s) = session {
        let c = s.config();
        c.cost.save(&dir.join(COST_FILE))?;
        let cap = c.memory_cap.map_or_else(|| "none".to_string(), |b| b.to_string());
        let _ = write!(text, "policy\t{}\nmemory_cap\t{cap}\neager_max_elements\t{}\n", c.policy, c.eager_max_elements);
        let _ = write!(text, "trace_keep\t{}\ncost\t{COST_FILE}\n", s.trace().keep());
    }
    let path = dir.join(SESSION_FILE);
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{Array1, Array2, ArrayD};
    use bach_runtime::{with_session, Meta};
    use ndarray::{Ix1, Ix2, Ix3};

    /// A fresh directory under the system's temporary one.
    fn temp_dir(what: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bach-stash-test-{what}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn manifest(dir: &Path) -> String {
        std::fs::read_to_string(dir.join(MANIFEST)).unwrap()
    }

    /// The kernel's two cells, as it writes them, around a "rebuild" (a new session): every
    /// Bach array comes back equal, whatever its state; other values compile and are skipped.
    #[test]
    // The kernel's calls as it writes them: `&&` for every type (only arrays use both).
    #[allow(clippy::needless_borrow)]
    fn a_stash_brings_back_every_bach_array() {
        let dir = temp_dir("vars");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("stale.npy"), b"an earlier stash's").unwrap();
        std::fs::write(dir.join("notes.txt"), b"not the stash's").unwrap();
        let old = Session::new();
        let saved = with_session(&old, || {
            let a = Array1::from_vec(vec![1.0, 2.5, -3.0]);
            let x = Array2::<f32>::from_shape_fn((300, 40), |(i, j)| (i as f32 - 150.0) / 100.0 + j as f32 / 1000.0);
            let p = (&x * 2.0f32).exp();
            assert!(!p.is_evaluated(), "a pending lazy value");
            let n = Array1::from_vec(vec![1i64, -2, i64::MAX]);
            let b = Array2::from_shape_vec((2, 2), vec![true, false, false, true]).unwrap();
            let d = ArrayD::from_shape_vec(vec![2, 3, 2], (0..12).map(f64::from).collect()).unwrap();
            let z = crate::array::Array0::from_array(ndarray::arr0(7.5));
            let bad = Array1::<f64>::from_lazy(old.placeholder(Meta::new(DType::F64, [8]), "missing")).unwrap();
            let u = Array1::from_vec(vec![0usize, 7, usize::MAX]);
            let c8 = Array1::from_vec(vec![0u8, 255]);
            let chars = Array1::from_vec(vec!['x', 'y']);
            let v = vec![1i32, 2, 3];
            let t = String::from("text");
            let r = &a;
            {
                use crate::notebook::stash::{Skip as _, Stasher as _};
                let __stash = crate::notebook::stash::Stash::new(&dir);
                (&&crate::notebook::stash::Var("a", &a)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("v", &v)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("p", &p)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("bad", &bad)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("n", &n)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("t", &t)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("b", &b)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("d", &d)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("z", &z)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("u", &u)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("c8", &c8)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("chars", &chars)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("r", &r)).stash_into(&__stash);
                (&&crate::notebook::stash::Var("a", &d)).stash_into(&__stash);
                __stash.finish();
            }
            assert!(p.is_evaluated(), "saving computed it");
            (a.to_array().unwrap(), p.to_array().unwrap(), n.to_array().unwrap(), b.to_array().unwrap(), d.to_array().unwrap())
        });
        drop(old);
        let m = manifest(&dir);
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines[..5], ["# bach stash 1", "a\tbach::Array<f64, bach::Ix1>", "p\tbach::Array<f32, bach::Ix2>", lines[3], "n\tbach::Array<i64, bach::Ix1>"], "{m}");
        assert!(lines[3].starts_with("!bad\tits evaluation failed: ") && lines[3].contains("placeholder"), "{m}");
        assert_eq!(
            lines[5..],
            [
                "b\tbach::Array<bool, bach::Ix2>",
                "d\tbach::Array<f64, bach::IxDyn>",
                "z\tbach::Array<f64, bach::Ix0>",
                "u\tbach::Array<usize, bach::Ix1>",
                "c8\tbach::Array<u8, bach::Ix1>",
                "!chars\tits elements are char: a stash keeps arrays of f64, f32, i64, bool and integers",
            ],
            "{m}"
        );
        assert!(!dir.join("stale.npy").exists() && dir.join("notes.txt").exists());
        assert!(!dir.join("bad.npy").exists() && !dir.join("v.npy").exists());

        let new = Session::new();
        with_session(&new, || {
            restore_session_into(&dir, || new.clone()).unwrap();
            let a: Array<f64, Ix1> = restore(&dir, "a").unwrap();
            let p: Array<f32, Ix2> = restore(&dir, "p").unwrap();
            let n: Array<i64, Ix1> = restore(&dir, "n").unwrap();
            let b: Array<bool, Ix2> = restore(&dir, "b").unwrap();
            let d: Array<f64, IxDyn> = restore(&dir, "d").unwrap();
            let z: Array<f64, ndarray::Ix0> = restore(&dir, "z").unwrap();
            let u: Array<usize, Ix1> = restore(&dir, "u").unwrap();
            let c8: Array<u8, Ix1> = restore(&dir, "c8").unwrap();
            assert_eq!((a.to_array().unwrap(), p.to_array().unwrap(), n.to_array().unwrap(), b.to_array().unwrap(), d.to_array().unwrap()), saved);
            assert_eq!((p.shape(), d.shape()), (&[300, 40][..], &[2, 3, 2][..]));
            assert_eq!(z.to_scalar().unwrap(), 7.5);
            assert_eq!(u.to_array1().unwrap().to_vec(), vec![0, 7, usize::MAX]);
            assert_eq!(c8.to_array1().unwrap().to_vec(), vec![0, 255]);
            assert!(a.is_evaluated() && p.is_evaluated(), "computed values");
            assert!(Arc::ptr_eq(p.lazy().session(), &new), "in the new session");
            // Later ops on them work as on any value.
            assert_eq!((&a * 2.0).to_array1().unwrap().to_vec(), vec![2.0, 5.0, -6.0]);

            let wrong_axes = restore::<f64, Ix3>(&dir, "a").unwrap_err().to_string();
            assert!(wrong_axes.contains("`a`") && wrong_axes.contains("1-d") && wrong_axes.contains("Ix3"), "{wrong_axes}");
            let wrong_type = restore::<f32, Ix1>(&dir, "a").unwrap_err().to_string();
            assert!(wrong_type.contains("f64"), "{wrong_type}");
            assert!(restore::<u8, Ix1>(&dir, "u").unwrap_err().to_string().contains("is not a u8"));
            assert!(restore::<f64, Ix1>(&dir, "bad").is_err());
            assert!(restore::<f64, Ix1>(&dir, "../a").unwrap_err().to_string().contains("not a variable name"));
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The session's settings come back into a fresh session (the rebuilt crate's).
    #[test]
    fn a_stash_brings_back_the_session_settings() {
        let dir = temp_dir("session");
        let chart_before = *crate::notebook::CHART_WHEN.lock().unwrap();
        let old = Session::new();
        let mut cost = old.config().cost;
        cost.set("elementwise.cpu.per_element", "3.5e-10").unwrap();
        cost.set("planner.cpu_piece_bytes", "96KiB").unwrap();
        cost.source = "set by hand".into();
        old.update_config(|c| {
            c.policy = Policy::Greedy;
            c.memory_cap = Some(3 << 30);
            c.eager_max_elements = 100;
            c.cost = cost.clone();
        });
        old.trace().set_keep(7);
        *crate::notebook::CHART_WHEN.lock().unwrap() = ChartWhen::Auto(0.0125);
        let stash = Stash::for_session(&dir, Some(old.clone()));
        stash.finish();
        assert_eq!(manifest(&dir), "# bach stash 1\n", "settings saved: no line");

        // The rebuilt crate: a new session with its defaults, the chart setting's default.
        *crate::notebook::CHART_WHEN.lock().unwrap() = ChartWhen::Full;
        let new = Session::new();
        let fresh = new.config();
        assert!(fresh.policy != Policy::Greedy && fresh.memory_cap.is_none() && fresh.cost != cost);
        restore_session_into(&dir, || new.clone()).unwrap();
        let c = new.config();
        assert_eq!((c.policy, c.memory_cap, c.eager_max_elements), (Policy::Greedy, Some(3 << 30), 100));
        assert_eq!(c.cost, cost);
        assert_eq!(new.trace().keep(), 7);
        assert_eq!(*crate::notebook::CHART_WHEN.lock().unwrap(), ChartWhen::Auto(0.0125));

        // No session before the rebuild: the chart setting alone, and no session is made.
        let stash = Stash::for_session(&dir, None);
        stash.finish();
        assert!(!dir.join(COST_FILE).exists());
        restore_session_into(&dir, || panic!("no session to restore")).unwrap();

        // Settings that cannot be read: the rest is applied, the error names the line.
        std::fs::write(dir.join(SESSION_FILE), "# bach session settings 1\npolicy\tfastest\nmemory_cap\t4096\n").unwrap();
        let e = restore_session_into(&dir, || new.clone()).unwrap_err().to_string();
        assert!(e.contains("policy\tfastest") && e.contains("unknown policy"), "{e}");
        assert_eq!(new.config().memory_cap, Some(4096));
        std::fs::remove_file(dir.join(SESSION_FILE)).unwrap();
        assert!(restore_session_into(&dir, || new.clone()).unwrap_err().to_string().contains("were not saved"));

        *crate::notebook::CHART_WHEN.lock().unwrap() = chart_before;
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A directory that cannot be written: every array is listed as not kept, nothing panics.
    #[test]
    fn an_unwritable_stash_loses_the_arrays_quietly() {
        let file = temp_dir("blocked");
        std::fs::write(&file, b"a file, not a directory").unwrap();
        let s = Session::new();
        with_session(&s, || {
            let a = Array1::from_vec(vec![1.0]);
            let stash = Stash::for_session(&file, Some(s.clone()));
            (&&Var("a", &a)).stash_into(&stash);
            assert!(matches!(&stash.entries.borrow()[0], (n, Err(why)) if n == "a" && why.contains("cannot use")));
            assert!(stash.manifest().starts_with("# bach stash 1\n!a\tcannot use "), "{}", stash.manifest());
            stash.finish();
        });
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn type_texts_and_names() {
        assert_eq!(type_text::<f64, Ix2>(), "bach::Array<f64, bach::Ix2>");
        assert_eq!(type_text::<bool, IxDyn>(), "bach::Array<bool, bach::IxDyn>");
        assert_eq!(type_text::<isize, ndarray::Ix6>(), "bach::Array<isize, bach::Ix6>");
        assert_eq!(file_name("r#type").unwrap(), "r#type.npy");
        assert_eq!(file_name("σ_2").unwrap(), "σ_2.npy");
        for bad in ["", "a/b", "..", "a b", "r#"] {
            assert!(file_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(one_line("a\nb\tc\r\n"), "a b c");
        for c in [ChartWhen::Full, ChartWhen::Compact, ChartWhen::Auto(0.005), ChartWhen::Auto(1.0 / 3.0)] {
            assert_eq!(chart_of(&chart_text(c)).unwrap(), c);
        }
    }
}
