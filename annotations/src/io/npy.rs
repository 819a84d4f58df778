//! `.npy` files, for exchanging arrays with Python users (NumPy's format, versions 1-3).
//!
//! Written here rather than with `ndarray-npy`: that crate brings a PEG parser, a proc-macro
//! and `libc` into every notebook's dependency graph, which evcxr's rust-analyzer analyses
//! when a kernel starts. The tests check this module against `ndarray-npy` and NumPy.
//!
//! The generic methods are thin shells over [`read_value`] and [`write_value`], which know
//! the dtype at run time (so a cell calling them compiles nothing new).

use std::io::Write as _;
use std::path::Path;

use bach_runtime::{session, BachError, DType, Element, Result, Value};
use ndarray::{ArcArray, IxDyn, ShapeBuilder as _};

use crate::array::Array;

const MAGIC: &[u8] = b"\x93NUMPY";

impl<A: Element> Array<A> {
    /// Read an `.npy` file now (a missing file or a wrong dtype is an error at this line).
    pub fn read_npy(path: impl AsRef<Path>) -> Result<Self> {
        let value = read_value(path.as_ref(), A::DTYPE)?;
        Ok(Self::wrap(session::current().source(value, "read_npy")))
    }
}

impl<A: Element, S: crate::array::Data<Elem = A>, D: ndarray::Dimension> crate::array::ArrayBase<S, D> {
    /// Evaluate and write to an `.npy` file.
    pub fn write_npy(&self, path: impl AsRef<Path>) -> Result<()> {
        write_value(path.as_ref(), &A::wrap(self.eval()?))
    }
}

/// The array in the `.npy` file at `path`, which must hold `want` elements.
pub(crate) fn read_value(path: &Path, want: DType) -> Result<Value> {
    let fail = |why: String| BachError::Io(format!("cannot read `{}` as {want} .npy: {why}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let (header, data) = split_header(&bytes).map_err(fail)?;
    let header = Header::parse(header).map_err(fail)?;
    let (dtype, width, big_endian) = match header.descr.as_str() {
        "<f8" => (DType::F64, 8, false),
        ">f8" => (DType::F64, 8, true),
        "<f4" => (DType::F32, 4, false),
        ">f4" => (DType::F32, 4, true),
        "<i8" => (DType::I64, 8, false),
        ">i8" => (DType::I64, 8, true),
        "|b1" => (DType::Bool, 1, false),
        other => return Err(fail(format!("its dtype '{other}' is not one Bach arrays hold (f64 '<f8', f32 '<f4', i64 '<i8', bool '|b1')"))),
    };
    if dtype != want {
        return Err(fail(format!("it holds {dtype} ('{}')", header.descr)));
    }
    let len = header.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).ok_or_else(|| fail(format!("shape {:?} is too large", header.shape)))?;
    let expected = len.checked_mul(width).ok_or_else(|| fail(format!("shape {:?} is too large", header.shape)))?;
    if data.len() != expected {
        return Err(fail(format!("shape {:?} needs {expected} bytes of data, the file has {}", header.shape, data.len())));
    }
    let shape = IxDyn(&header.shape).set_f(header.fortran_order);
    fn build<T>(shape: ndarray::Shape<IxDyn>, v: Vec<T>) -> ArcArray<T, IxDyn>
    where
        T: Clone,
    {
        let a = ndarray::ArrayD::from_shape_vec(shape, v).expect("length checked against the shape above");
        // Fortran-ordered files become row-major arrays, as everything in Bach is.
        if a.is_standard_layout() {
            a.into_shared()
        } else {
            a.as_standard_layout().into_owned().into_shared()
        }
    }
    Ok(match dtype {
        DType::F64 => {
            let conv = if big_endian { f64::from_be_bytes } else { f64::from_le_bytes };
            Value::F64(build(shape, data.chunks_exact(8).map(|c| conv(c.try_into().unwrap())).collect()))
        }
        DType::F32 => {
            let conv = if big_endian { f32::from_be_bytes } else { f32::from_le_bytes };
            Value::F32(build(shape, data.chunks_exact(4).map(|c| conv(c.try_into().unwrap())).collect()))
        }
        DType::I64 => {
            let conv = if big_endian { i64::from_be_bytes } else { i64::from_le_bytes };
            Value::I64(build(shape, data.chunks_exact(8).map(|c| conv(c.try_into().unwrap())).collect()))
        }
        DType::Bool => {
            if let Some(i) = data.iter().position(|&b| b > 1) {
                return Err(fail(format!("byte {} of its data is {}, not a bool (0 or 1)", i, data[i])));
            }
            Value::Bool(build(shape, data.iter().map(|&b| b == 1).collect()))
        }
        DType::Opaque => unreachable!("not an array dtype"),
    })
}

/// Write a host array value to `path` as `.npy` (version 1.0, little-endian, C order).
pub(crate) fn write_value(path: &Path, value: &Value) -> Result<()> {
    let fail = |why: String| BachError::Io(format!("cannot write `{}`: {why}", path.display()));
    let (descr, shape) = match value {
        Value::F64(a) => ("<f8", a.shape()),
        Value::F32(a) => ("<f4", a.shape()),
        Value::I64(a) => ("<i8", a.shape()),
        Value::Bool(a) => ("|b1", a.shape()),
        _ => return Err(fail(format!("only f64, f32, i64 and bool arrays can be written, not {}", value.meta().dtype))),
    };
    let file = std::fs::File::create(path).map_err(|e| fail(e.to_string()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    out.write_all(&header_bytes(descr, shape)).map_err(|e| fail(e.to_string()))?;
    let written = match value {
        Value::F64(a) => a.iter().try_for_each(|x| out.write_all(&x.to_le_bytes())),
        Value::F32(a) => a.iter().try_for_each(|x| out.write_all(&x.to_le_bytes())),
        Value::I64(a) => a.iter().try_for_each(|x| out.write_all(&x.to_le_bytes())),
        Value::Bool(a) => a.iter().try_for_each(|&x| out.write_all(&[x as u8])),
        _ => unreachable!("checked above"),
    };
    written.and_then(|_| out.flush()).map_err(|e| fail(e.to_string()))
}

/// Magic, version, header length and the header dict, padded with spaces and a newline so
/// the data starts at a multiple of 64 bytes, as NumPy writes it.
fn header_bytes(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let tuple = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    let (version, prefix) = if MAGIC.len() + 4 + dict.len() < 65536 { (1u8, MAGIC.len() + 4) } else { (2u8, MAGIC.len() + 6) };
    let pad = (64 - (prefix + dict.len() + 1) % 64) % 64;
    dict.extend(std::iter::repeat_n(' ', pad));
    dict.push('\n');
    let mut out = Vec::with_capacity(prefix + dict.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out
}

/// The header dict's text and the data after it.
fn split_header(bytes: &[u8]) -> Result<(&str, &[u8]), String> {
    if bytes.len() < MAGIC.len() + 4 || &bytes[..MAGIC.len()] != MAGIC {
        return Err("not an .npy file (no \\x93NUMPY magic)".into());
    }
    let major = bytes[MAGIC.len()];
    let at = MAGIC.len() + 2;
    let (len, start) = match major {
        1 => (u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize, at + 2),
        2 | 3 if bytes.len() >= at + 4 => (u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize, at + 4),
        _ => return Err(format!("unsupported .npy format version {major}")),
    };
    let header = bytes.get(start..start + len).ok_or("the file ends inside its header")?;
    let header = std::str::from_utf8(header).map_err(|_| "its header is not text")?;
    Ok((header, &bytes[start + len..]))
}

/// The three keys of an `.npy` header dict.
#[derive(Debug, PartialEq)]
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

impl Header {
    /// Parse a Python dict literal like `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`.
    fn parse(text: &str) -> Result<Header, String> {
        let bad = |what: &str| format!("its header {what}: {}", text.trim_end());
        let mut p = Tokens { s: text.trim() };
        p.expect('{').map_err(|_| bad("is not a dict"))?;
        let (mut descr, mut fortran_order, mut shape) = (None, None, None);
        loop {
            if p.eat('}') {
                break;
            }
            let key = p.string().ok_or_else(|| bad("has a key that is not a string"))?;
            p.expect(':').map_err(|_| bad("lacks a ':'"))?;
            match key.as_str() {
                "descr" => descr = Some(p.string().ok_or_else(|| bad("has a 'descr' that is not a plain dtype string"))?),
                "fortran_order" => {
                    fortran_order = Some(if p.word("True") {
                        true
                    } else if p.word("False") {
                        false
                    } else {
                        return Err(bad("has a 'fortran_order' that is not True or False"));
                    })
                }
                "shape" => shape = Some(p.tuple().ok_or_else(|| bad("has a 'shape' that is not a tuple of sizes"))?),
                other => return Err(bad(&format!("has an unknown key '{other}'"))),
            }
            if !p.eat(',') {
                p.expect('}').map_err(|_| bad("is not a dict"))?;
                break;
            }
        }
        match (descr, fortran_order, shape) {
            (Some(descr), Some(fortran_order), Some(shape)) => Ok(Header { descr, fortran_order, shape }),
            _ => Err(bad("lacks one of 'descr', 'fortran_order', 'shape'")),
        }
    }
}

/// A cursor over a header dict's text.
struct Tokens<'a> {
    s: &'a str,
}

impl Tokens<'_> {
    fn skip_space(&mut self) {
        self.s = self.s.trim_start();
    }
    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        match self.s.strip_prefix(c) {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }
    fn expect(&mut self, c: char) -> Result<(), ()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(())
        }
    }
    fn word(&mut self, w: &str) -> bool {
        self.skip_space();
        match self.s.strip_prefix(w) {
            Some(rest) if !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') => {
                self.s = rest;
                true
            }
            _ => false,
        }
    }
    /// A quoted string without escapes (all that dtype strings and keys need).
    fn string(&mut self) -> Option<String> {
        self.skip_space();
        let quote = self.s.chars().next().filter(|&c| c == '\'' || c == '"')?;
        let rest = &self.s[1..];
        let end = rest.find(quote)?;
        let s = &rest[..end];
        if s.contains('\\') {
            return None;
        }
        self.s = &rest[end + 1..];
        Some(s.to_string())
    }
    /// `()`, `(n,)` or `(n, m, ...)`, with an optional trailing comma.
    fn tuple(&mut self) -> Option<Vec<usize>> {
        if !self.eat('(') {
            return None;
        }
        let mut dims = Vec::new();
        loop {
            if self.eat(')') {
                return Some(dims);
            }
            self.skip_space();
            let digits = self.s.find(|c: char| !c.is_ascii_digit()).unwrap_or(self.s.len());
            let n = self.s[..digits].parse().ok()?;
            self.s = &self.s[digits..];
            // Python 2 era files may write sizes as longs: `3L`.
            self.eat('L');
            dims.push(n);
            if !self.eat(',') {
                return self.eat(')').then_some(dims);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse() {
        let h = Header::parse("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }          \n").unwrap();
        assert_eq!(h, Header { descr: "<f8".into(), fortran_order: false, shape: vec![3, 4] });
        let h = Header::parse("{\"shape\": (5,), \"fortran_order\": True, \"descr\": \"|b1\"}").unwrap();
        assert_eq!(h, Header { descr: "|b1".into(), fortran_order: true, shape: vec![5] });
        assert_eq!(Header::parse("{'descr': '<f4', 'fortran_order': False, 'shape': (), }").unwrap().shape, Vec::<usize>::new());
        assert_eq!(Header::parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }").unwrap().shape, vec![2, 3]);
        for bad in [
            "",
            "[]",
            "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }",
            "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3,), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3, -1), }",
            "{'descr': '<f8', 'fortran_order': False, }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
            "{'descr': '<f8' 'fortran_order': False, 'shape': (3,)}",
        ] {
            assert!(Header::parse(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn headers_written_align_data_to_64_bytes() {
        for shape in [vec![], vec![0], vec![7], vec![3, 4, 5], vec![usize::MAX / 2, 1]] {
            let h = header_bytes("<f8", &shape);
            assert_eq!(h.len() % 64, 0, "{shape:?}");
            let (text, rest) = split_header(&h).unwrap();
            assert!(rest.is_empty() && text.ends_with('\n'));
            assert_eq!(Header::parse(text).unwrap(), Header { descr: "<f8".into(), fortran_order: false, shape });
        }
    }

    #[test]
    fn truncated_and_foreign_files_are_errors() {
        assert!(split_header(b"PK\x03\x04 a zip file").is_err());
        assert!(split_header(b"\x93NUMPY\x01\x00\xff\x00{'descr'").is_err());
        assert!(split_header(b"\x93NUMPY\x04\x00\x10\x00").is_err());
    }
}
