//! Numeric CSV files as lazy columns (the pandas -> cuDF half of the workloads).
//!
//! `read_csv(path)` looks at the file when it is called: it must exist, its first line says
//! the columns (a header when any field of it is not a number, else columns `0`, `1`, ...),
//! and one parallel pass counts its lines, remembering how many newlines precede each 4 KiB
//! block. Nothing is parsed yet. `column(name)` and `values()` are allocations (`oa_alloc`):
//! nodes made where their first user runs, whose pieces each parse their own rows in
//! parallel, finding where their rows start from the block counts. Bad data is an error when
//! the value is computed, naming the file, the line, the column and the text; a missing file,
//! an empty one or an unknown column is an error at the call.
//!
//! Fields are separated by commas; spaces and a `\r` around a field are ignored, as are
//! surrounding double quotes; an empty field is NaN (as pandas reads it); blank lines at the
//! end are ignored, a blank line before the end is an error.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bach_runtime::{oa_alloc, session, BachError, DType, DeviceKind, Meta, Result, Value};
use ndarray::{ArrayD, IxDyn};
use rayon::prelude::*;

use crate::array::Array;

/// Bytes per block of the line index (a piece scans at most one block at each end).
const BLOCK: usize = 4 << 10;
/// Bytes read at once by the counting pass.
const CHUNK: usize = 8 << 20;

/// A CSV file's columns, read lazily. Cloning shares the index.
#[derive(Clone)]
pub struct Table {
    index: Arc<LineIndex>,
}

/// What one pass over the file learnt: where each line starts, block by block.
struct LineIndex {
    path: PathBuf,
    columns: Vec<String>,
    /// Lines before the data (0 or 1).
    header: usize,
    /// Data rows.
    rows: usize,
    /// Newlines in the file before block `s` (`BLOCK` bytes each); one entry past the last.
    newlines_before: Vec<u64>,
    bytes: u64,
}

/// `pandas.read_csv(path)` for numeric files, lazily (see the module's text). An error here
/// when the file cannot be read or has no data rows.
pub fn read_csv(path: impl AsRef<Path>) -> Result<Table> {
    Ok(Table { index: Arc::new(LineIndex::build(path.as_ref())?) })
}

/// A column named by its header text or by its position.
pub trait ColumnKey {
    fn position(&self, columns: &[String]) -> Option<usize>;
}
impl ColumnKey for &str {
    fn position(&self, columns: &[String]) -> Option<usize> {
        columns.iter().position(|c| c == self)
    }
}
impl ColumnKey for usize {
    fn position(&self, columns: &[String]) -> Option<usize> {
        (*self < columns.len()).then_some(*self)
    }
}

impl Table {
    /// Column names (the header's, or `0`, `1`, ... when the file has none).
    pub fn columns(&self) -> &[String] {
        &self.index.columns
    }
    /// Data rows.
    pub fn len(&self) -> usize {
        self.index.rows
    }
    pub fn is_empty(&self) -> bool {
        self.index.rows == 0
    }
    pub fn path(&self) -> &Path {
        &self.index.path
    }
    /// One column as a lazy 1-D f64 array: an allocation that parses only that field.
    pub fn column(&self, key: impl ColumnKey) -> Result<Array<f64>> {
        let j = key
            .position(&self.index.columns)
            .ok_or_else(|| BachError::invalid("read_csv", format!("`{}` has no such column (its columns: {})", self.index.path.display(), self.index.columns.join(", "))))?;
        self.alloc(Some(j))
    }
    /// Every column, as a lazy `rows x columns` f64 array (pandas' `.values`).
    pub fn values(&self) -> Result<Array<f64>> {
        self.alloc(None)
    }

    fn alloc(&self, column: Option<usize>) -> Result<Array<f64>> {
        let index = Arc::clone(&self.index);
        let shape = match column {
            Some(_) => vec![index.rows],
            None => vec![index.rows, index.columns.len()],
        };
        let file_bytes = index.bytes as f64;
        let op = oa_alloc("read_csv")
            .cpu_only("CSV text is parsed on the host")
            // Parsing runs at about 150 MB/s per thread (this crate's parser on one core).
            .estimate(move |_, _, device| match device.kind {
                DeviceKind::Cpu => file_bytes / (150e6 * device.threads.max(1) as f64),
                _ => f64::INFINITY,
            })
            .cpu(move |ctx, _| index.parse(ctx.rows.clone(), column))
            .build();
        let lazy = session::current().alloc(&op, Meta::new(DType::F64, shape))?;
        Array::from_lazy(lazy)
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({}: {} rows, columns {})", self.index.path.display(), self.index.rows, self.index.columns.join(", "))
    }
}

/// The fields of one line (quotes and spaces around each removed).
fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b == b',').map(field)
}

/// One field's text: spaces, a `\r` and surrounding quotes removed.
fn field(f: &[u8]) -> &[u8] {
    let f = f.trim_ascii();
    match f {
        [b'"', inner @ .., b'"'] => inner.trim_ascii(),
        _ => f,
    }
}

/// A field as f64; empty is NaN.
fn number(field: &[u8]) -> Option<f64> {
    if field.is_empty() {
        return Some(f64::NAN);
    }
    simple_decimal(field).or_else(|| std::str::from_utf8(field).ok()?.parse().ok())
}

/// The line at `at` if it is one plain decimal (`simple_decimal`'s form, spaces and a `\r`
/// around it): its value and where the next line starts; `None` for anything else.
fn fast_line(text: &[u8], mut at: usize) -> Option<(f64, usize)> {
    let n = text.len();
    while at < n && text[at] == b' ' {
        at += 1;
    }
    let negative = at < n && text[at] == b'-';
    if at < n && (text[at] == b'-' || text[at] == b'+') {
        at += 1;
    }
    let (mut m, mut count, mut frac, mut point) = (0u64, 0usize, 0usize, false);
    while at < n {
        let b = text[at];
        if b.is_ascii_digit() {
            m = m * 10 + u64::from(b - b'0');
            count += 1;
            frac += usize::from(point);
        } else if b == b'.' && !point {
            point = true;
        } else {
            break;
        }
        at += 1;
    }
    while at < n && (text[at] == b' ' || text[at] == b'\r') {
        at += 1;
    }
    if count == 0 || count > 15 || (at < n && text[at] != b'\n') {
        return None;
    }
    let v = m as f64 / POW10[frac];
    Some((if negative { -v } else { v }, at + 1))
}

/// Exact powers of ten as f64 (10^22 is the largest that is exact).
const POW10: [f64; 23] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/// The common case, fast and correctly rounded: `[-+]digits[.digits]` with at most 15
/// digits in all. The digits form an integer m < 2^53 and the value is m / 10^f with both
/// exact in f64, so one division rounds correctly (Clinger's fast path). `None` for
/// anything else (exponents, more digits, inf, nan), which the standard parser takes.
fn simple_decimal(field: &[u8]) -> Option<f64> {
    let (negative, digits) = match field[0] {
        b'-' => (true, &field[1..]),
        b'+' => (false, &field[1..]),
        _ => (false, field),
    };
    let mut m: u64 = 0;
    let mut count = 0usize;
    let mut frac: Option<usize> = None;
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                m = m * 10 + u64::from(b - b'0');
                count += 1;
                if let Some(f) = frac.as_mut() {
                    *f += 1;
                }
            }
            b'.' if frac.is_none() => frac = Some(0),
            _ => return None,
        }
    }
    if count == 0 || count > 15 {
        return None;
    }
    let v = m as f64 / POW10[frac.unwrap_or(0)];
    Some(if negative { -v } else { v })
}

fn io_error(path: &Path, why: impl std::fmt::Display) -> BachError {
    BachError::Io(format!("cannot read `{}`: {why}", path.display()))
}

impl LineIndex {
    fn build(path: &Path) -> Result<LineIndex> {
        let file = File::open(path).map_err(|e| io_error(path, e))?;
        let bytes = file.metadata().map_err(|e| io_error(path, e))?.len();
        let n = bytes as usize;
        // Newlines per block, counted in parallel over chunks of whole blocks.
        let chunks: Vec<usize> = (0..n.div_ceil(CHUNK)).collect();
        let counts: Vec<Vec<u64>> = chunks
            .par_iter()
            .map(|&c| {
                let start = c * CHUNK;
                let mut buf = vec![0u8; CHUNK.min(n - start)];
                file.read_exact_at(&mut buf, start as u64)?;
                Ok(buf.chunks(BLOCK).map(|b| b.iter().filter(|&&x| x == b'\n').count() as u64).collect())
            })
            .collect::<std::io::Result<_>>()
            .map_err(|e| io_error(path, e))?;
        let mut newlines_before = Vec::with_capacity(n.div_ceil(BLOCK) + 1);
        let mut total = 0u64;
        newlines_before.push(0);
        for c in counts.iter().flatten() {
            total += c;
            newlines_before.push(total);
        }
        // Lines: a last line without a newline counts; blank lines at the end do not.
        let tail_len = n.min(4096);
        let mut tail = vec![0u8; tail_len];
        file.read_exact_at(&mut tail, (n - tail_len) as u64).map_err(|e| io_error(path, e))?;
        let mut lines = total as usize;
        let mut end = tail.len();
        if tail.last().is_some_and(|&b| b != b'\n') {
            // A last line without a newline: a line, unless it is blank.
            let start = tail.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
            if tail[start..].trim_ascii().is_empty() && (start > 0 || tail_len == n) {
                end = start;
            } else {
                lines += 1;
            }
        }
        while end > 0 && tail[..end].ends_with(b"\n") {
            let line_start = tail[..end - 1].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
            if !tail[line_start..end - 1].trim_ascii().is_empty() || (line_start == 0 && tail_len < n) {
                break;
            }
            lines -= 1;
            end = line_start;
        }
        let mut index = LineIndex { path: path.to_path_buf(), columns: vec![], header: 0, rows: 0, newlines_before, bytes };
        if lines == 0 {
            return Err(io_error(path, "the file is empty"));
        }
        let first = index.read_lines(&file, 0, 1)?;
        let first = first.split(|&b| b == b'\n').next().unwrap_or(&[]);
        let names: Vec<&[u8]> = fields(first).collect();
        let is_header = names.iter().any(|f| !f.is_empty() && number(f).is_none());
        index.columns = if is_header { names.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect() } else { (0..names.len()).map(|j| j.to_string()).collect() };
        index.header = usize::from(is_header);
        index.rows = lines - index.header;
        if index.rows == 0 {
            return Err(io_error(path, "it has a header but no data rows"));
        }
        Ok(index)
    }

    /// The block holding the `k`-th newline (1-based), if the file has that many.
    fn block_of_newline(&self, k: u64) -> Option<usize> {
        (k >= 1 && k <= *self.newlines_before.last().unwrap_or(&0)).then(|| self.newlines_before.partition_point(|&c| c < k) - 1)
    }

    /// The text of lines `first..first + count` (0-based, header included), read in one go:
    /// from the block where the first starts to the block where the last ends, then cut at
    /// the right newlines.
    fn read_lines(&self, file: &File, first: usize, count: usize) -> Result<Vec<u8>> {
        let changed = || io_error(&self.path, "the file changed since read_csv was called");
        // Line l starts after the l-th newline; the lines end at the (first + count)-th.
        let start_block = if first == 0 { 0 } else { self.block_of_newline(first as u64).ok_or_else(changed)? };
        let end_block = self.block_of_newline((first + count) as u64);
        let from = start_block * BLOCK;
        let to = end_block.map_or(self.bytes as usize, |b| ((b + 1) * BLOCK).min(self.bytes as usize));
        let mut buf = vec![0u8; to - from];
        file.read_exact_at(&mut buf, from as u64).map_err(|e| io_error(&self.path, e))?;
        // Offset just after the `skip`-th newline at or after `at` in buf.
        let after = |mut at: usize, mut skip: u64| -> Result<usize> {
            while skip > 0 {
                at += buf[at..].iter().position(|&b| b == b'\n').ok_or_else(changed)? + 1;
                skip -= 1;
            }
            Ok(at)
        };
        let start = if first == 0 { 0 } else { after(0, first as u64 - self.newlines_before[start_block])? };
        let end = match end_block {
            Some(b) => after(b * BLOCK - from, (first + count) as u64 - self.newlines_before[b])?,
            None => buf.len(),
        };
        buf.truncate(end);
        buf.drain(..start);
        Ok(buf)
    }

    /// Parse data rows `rows`: one column, or all of them (row-major).
    fn parse(&self, rows: std::ops::Range<usize>, column: Option<usize>) -> Result<Value> {
        let file = File::open(&self.path).map_err(|e| io_error(&self.path, e))?;
        let first_line = rows.start + self.header;
        let text = self.read_lines(&file, first_line, rows.len())?;
        let width = self.columns.len();
        let per_row = if column.is_some() { 1 } else { width };
        let mut out = Vec::with_capacity(rows.len() * per_row);
        let mut pos = 0;
        for r in 0..rows.len() {
            // One column of plain decimals: parsed straight off the bytes.
            if width == 1 {
                if let Some((v, next)) = fast_line(&text, pos) {
                    out.push(v);
                    pos = next;
                    continue;
                }
            }
            let line_no = first_line + r + 1;
            let rest = &text[pos.min(text.len())..];
            let line = &rest[..rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())];
            pos += line.len() + 1;
            let bad = |why: String| BachError::Io(format!("cannot read `{}` line {line_no}: {why}: `{}`", self.path.display(), String::from_utf8_lossy(line).trim_end()));
            if width == 1 {
                let f = field(line);
                if let Some(v) = number(f).filter(|_| !f.is_empty()) {
                    out.push(v);
                    continue;
                }
            }
            if line.trim_ascii().is_empty() {
                return Err(bad("the line is empty".into()));
            }
            let mut count = 0;
            for (j, f) in fields(line).enumerate() {
                count += 1;
                if column.is_some_and(|c| c != j) || j >= width {
                    continue;
                }
                let v = number(f).ok_or_else(|| bad(format!("column `{}` holds `{}`, not a number", self.columns[j], String::from_utf8_lossy(f))))?;
                out.push(v);
            }
            if count != width {
                return Err(bad(format!("{count} fields where the {} has {width}", if self.header == 1 { "header" } else { "first line" })));
            }
        }
        let shape = if column.is_some() { vec![rows.len()] } else { vec![rows.len(), width] };
        Ok(Value::from(ArrayD::from_shape_vec(IxDyn(&shape), out).expect("one value per row and column")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("bach-csv-{}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn the_fast_path_rounds_as_the_standard_parser() {
        let mut rs = crate::io::random::RandomState::new(3);
        for _ in 0..200_000 {
            let digits = 1 + (rs.next_u32() % 15) as usize;
            let int: String = (0..digits).map(|_| char::from(b'0' + (rs.next_u32() % 10) as u8)).collect();
            let point = (rs.next_u32() as usize) % (digits + 1);
            let text = if point == digits { int.clone() } else { format!("{}.{}", &int[..point], &int[point..]) };
            let text = if rs.next_u32().is_multiple_of(2) { format!("-{text}") } else { text };
            assert_eq!(number(text.as_bytes()).map(f64::to_bits), text.parse::<f64>().ok().map(f64::to_bits), "{text}");
        }
        for text in ["1e5", "-2.5E-3", "inf", "NaN", "1234567890123456789", "0.1", ".5", "5.", "+7"] {
            assert_eq!(number(text.as_bytes()).map(f64::to_bits), text.parse::<f64>().ok().map(f64::to_bits), "{text}");
        }
        assert_eq!(number(b"1.2.3"), None);
        assert_eq!(number(b"-"), None);
    }

    #[test]
    fn header_columns_and_values() {
        let p = file("h.csv", "a, b,\"c\"\n1,2,3\n4.5,,6e2\r\n\n");
        let t = read_csv(&p).unwrap();
        assert_eq!(t.columns(), ["a", "b", "c"]);
        assert_eq!(t.len(), 2);
        let b = t.column("b").unwrap().to_array().unwrap();
        assert_eq!(b[[0]], 2.0);
        assert!(b[[1]].is_nan());
        assert_eq!(t.column(2).unwrap().to_array().unwrap().as_slice().unwrap(), [3.0, 600.0]);
        assert_eq!(t.values().unwrap().shape(), [2, 3]);
        assert!(t.column("d").unwrap_err().to_string().contains("no such column (its columns: a, b, c)"));
    }

    #[test]
    fn many_rows_in_pieces_match_a_sequential_parse() {
        // Long enough for many index blocks and many pieces.
        let n = 300_000;
        let text: String = (0..n).map(|i| format!("{}\n", (i as f64) * 0.25 - 7.0)).collect();
        let p = file("many.csv", &text);
        let t = read_csv(&p).unwrap();
        assert_eq!((t.len(), t.columns().len()), (n, 1));
        let s = bach_runtime::Session::new();
        s.update_config(|c| c.cost.planner.cpu_piece_bytes = 4000);
        let got = bach_runtime::with_session(&s, || read_csv(&p).unwrap().column(0).unwrap().to_array().unwrap());
        for (i, v) in got.iter().enumerate() {
            assert_eq!(*v, (i as f64) * 0.25 - 7.0, "row {i}");
        }
        // Without a trailing newline too.
        let p = file("nonl.csv", "1\n2\n3");
        assert_eq!(read_csv(&p).unwrap().column(0).unwrap().to_array().unwrap().as_slice().unwrap(), [1.0, 2.0, 3.0]);
    }

    #[test]
    fn bad_files_say_where_and_what() {
        let missing = read_csv("/no/such/file.csv").unwrap_err().to_string();
        assert!(missing.contains("cannot read `/no/such/file.csv`") && missing.contains("No such file"), "{missing}");
        let p = file("empty.csv", "");
        assert!(read_csv(&p).unwrap_err().to_string().contains("the file is empty"));
        let p = file("text.csv", "x,y\n1,2\n3,oops\n");
        let e = read_csv(&p).unwrap().values().unwrap().to_array().unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("column `y` holds `oops`, not a number") && e.contains("`3,oops`"), "{e}");
        let p = file("ragged.csv", "1,2\n3\n");
        let e = read_csv(&p).unwrap().column(0).unwrap().to_array().unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("1 fields where the first line has 2"), "{e}");
        let p = file("blank.csv", "1\n\n2\n");
        let e = read_csv(&p).unwrap().column(0).unwrap().to_array().unwrap_err().to_string();
        assert!(e.contains("line 2: the line is empty"), "{e}");
    }
}
