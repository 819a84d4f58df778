//! Offload split types: how a kind of value is cut into pieces, merged back, and how big it is.
//!
//! An annotation gives a split type to each argument and to its result. Two ops can pass
//! pieces to each other without merging when the producer's result split type and the
//! consumer's argument split type have the same `key` and the same `size`.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::error::{BachError, Result};
use crate::value::{concat_rows, Meta, Value, ValueRef};

/// How values of one kind are split into pieces and merged back (the paper's split type).
pub trait SplitType: Send + Sync {
    /// Identity for matching producer and consumer: equal keys mean pieces flow unmerged.
    fn key(&self) -> &str;
    /// Whether values of this type are cut into pieces at all. `false` means every piece of
    /// the op sees the whole value (a broadcast operand), or the op cannot run in pieces.
    fn splittable(&self) -> bool;
    /// Length of the dimension pieces are taken along, for a value of this meta.
    fn size(&self, meta: &Meta) -> Option<usize>;
    /// The piece of `value` that covers `range` of the split dimension.
    fn split<'a>(&self, value: ValueRef<'a>, range: Range<usize>) -> Result<ValueRef<'a>>;
    /// Merge the results of all pieces, in piece order, into one value.
    fn merge(&self, pieces: Vec<Value>) -> Result<Value>;
}

impl fmt::Debug for dyn SplitType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

pub type SplitRef = Arc<dyn SplitType>;

/// Split along axis 0 into row ranges; merge by concatenation.
pub struct Rows;

impl SplitType for Rows {
    fn key(&self) -> &str {
        "rows"
    }
    fn splittable(&self) -> bool {
        true
    }
    fn size(&self, meta: &Meta) -> Option<usize> {
        (meta.ndim() > 0).then(|| meta.rows())
    }
    fn split<'a>(&self, value: ValueRef<'a>, range: Range<usize>) -> Result<ValueRef<'a>> {
        value.slice_rows(range)
    }
    fn merge(&self, pieces: Vec<Value>) -> Result<Value> {
        concat_rows(&pieces)
    }
}

/// Not split: every piece of the op sees the whole value (scalars, broadcast operands,
/// fitted models).
pub struct Broadcast;

impl SplitType for Broadcast {
    fn key(&self) -> &str {
        "broadcast"
    }
    fn splittable(&self) -> bool {
        false
    }
    fn size(&self, _meta: &Meta) -> Option<usize> {
        None
    }
    fn split<'a>(&self, value: ValueRef<'a>, _range: Range<usize>) -> Result<ValueRef<'a>> {
        Ok(value)
    }
    fn merge(&self, pieces: Vec<Value>) -> Result<Value> {
        pieces.into_iter().next().ok_or_else(|| BachError::invalid("merge", "no pieces"))
    }
}

/// The result of an op that runs once over whole values: never split, never merged.
pub struct Unsplittable;

impl SplitType for Unsplittable {
    fn key(&self) -> &str {
        "unsplittable"
    }
    fn splittable(&self) -> bool {
        false
    }
    fn size(&self, _meta: &Meta) -> Option<usize> {
        None
    }
    fn split<'a>(&self, value: ValueRef<'a>, _range: Range<usize>) -> Result<ValueRef<'a>> {
        Ok(value)
    }
    fn merge(&self, pieces: Vec<Value>) -> Result<Value> {
        match <[Value; 1]>::try_from(pieces) {
            Ok([v]) => Ok(v),
            Err(p) => Err(BachError::invalid("merge", format!("{} pieces of an unsplittable value", p.len()))),
        }
    }
}

/// Partial results (one per piece) combined into one: the result split type of a reduction.
/// `combine` receives the partials in piece order.
pub struct Partials {
    key: String,
    combine: Box<dyn Fn(Vec<Value>) -> Result<Value> + Send + Sync>,
}

impl Partials {
    pub fn new(key: impl Into<String>, combine: impl Fn(Vec<Value>) -> Result<Value> + Send + Sync + 'static) -> Self {
        Partials { key: key.into(), combine: Box::new(combine) }
    }
}

impl SplitType for Partials {
    fn key(&self) -> &str {
        &self.key
    }
    fn splittable(&self) -> bool {
        // The partials themselves are never split again: a consumer waits for the merge.
        false
    }
    fn size(&self, _meta: &Meta) -> Option<usize> {
        None
    }
    fn split<'a>(&self, value: ValueRef<'a>, _range: Range<usize>) -> Result<ValueRef<'a>> {
        Ok(value)
    }
    fn merge(&self, pieces: Vec<Value>) -> Result<Value> {
        if pieces.is_empty() {
            return Err(BachError::invalid("merge", "no partial results"));
        }
        (self.combine)(pieces)
    }
}

/// Shared instances of the stateless split types.
pub fn rows() -> SplitRef {
    static R: std::sync::LazyLock<SplitRef> = std::sync::LazyLock::new(|| Arc::new(Rows));
    R.clone()
}
pub fn broadcast() -> SplitRef {
    static B: std::sync::LazyLock<SplitRef> = std::sync::LazyLock::new(|| Arc::new(Broadcast));
    B.clone()
}
pub fn unsplittable() -> SplitRef {
    static U: std::sync::LazyLock<SplitRef> = std::sync::LazyLock::new(|| Arc::new(Unsplittable));
    U.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::DType;
    use ndarray::{ArrayD, IxDyn};

    #[test]
    fn rows_size_is_axis0() {
        assert_eq!(Rows.size(&Meta::new(DType::F64, [7, 3])), Some(7));
        assert_eq!(Rows.size(&Meta::new(DType::F64, [])), None);
    }

    #[test]
    fn unsplittable_refuses_two_pieces() {
        let v = Value::from(ArrayD::from_elem(IxDyn(&[1]), 1.0f64));
        assert!(Unsplittable.merge(vec![v.clone()]).is_ok());
        assert!(Unsplittable.merge(vec![v.clone(), v]).is_err());
    }
}
