// source: finalfusion/finalfusion-rust src/chunks/storage/array.rs, src/chunks/io.rs, src/util.rs @6669c742 (MIT OR Apache-2.0)
{
    use std::fmt::{self, Display};
    use std::io::{Cursor, Read, Seek, SeekFrom, Write};
    use std::mem;
    use std::mem::size_of;

    use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis, CowArray, Ix1};
    // changed: the byteorder crate replaced by a small local `byteorder` shim (little-endian
    // only) behind the same `read_u32::<LittleEndian>()`-style calls; the crate's Error type,
    // Result, and Storage/StorageView/StorageViewMut traits by minimal local versions; the
    // memory-mapped storage and CloneFromMapping dropped; `use self::ChunkIdentifier::*` written
    // `use ChunkIdentifier::*` (the enum is local to the block)
    mod byteorder {
        use std::io::{self, Read, Write};
        pub struct LittleEndian;
        pub trait ReadBytesExt: Read {
            fn read_u32<B>(&mut self) -> io::Result<u32> {
                let mut b = [0u8; 4];
                self.read_exact(&mut b)?;
                Ok(u32::from_le_bytes(b))
            }
            fn read_u64<B>(&mut self) -> io::Result<u64> {
                let mut b = [0u8; 8];
                self.read_exact(&mut b)?;
                Ok(u64::from_le_bytes(b))
            }
            fn read_f32_into<B>(&mut self, dst: &mut [f32]) -> io::Result<()> {
                for v in dst.iter_mut() {
                    let mut b = [0u8; 4];
                    self.read_exact(&mut b)?;
                    *v = f32::from_le_bytes(b);
                }
                Ok(())
            }
        }
        impl<R: Read + ?Sized> ReadBytesExt for R {}
        pub trait WriteBytesExt: Write {
            fn write_u32<B>(&mut self, n: u32) -> io::Result<()> {
                self.write_all(&n.to_le_bytes())
            }
            fn write_u64<B>(&mut self, n: u64) -> io::Result<()> {
                self.write_all(&n.to_le_bytes())
            }
            fn write_f32<B>(&mut self, n: f32) -> io::Result<()> {
                self.write_all(&n.to_le_bytes())
            }
        }
        impl<W: Write + ?Sized> WriteBytesExt for W {}
    }
    use byteorder::{LittleEndian, ReadBytesExt, WriteBytesExt};
    #[derive(Debug)]
    pub enum Error {
        Read(String),
        Write(String),
        Format(String),
        Overflow,
        UnknownChunkIdentifier(u32),
    }
    impl Error {
        fn read_error(desc: &str, e: std::io::Error) -> Error {
            Error::Read(format!("{}: {}", desc, e))
        }
        fn write_error(desc: &str, e: std::io::Error) -> Error {
            Error::Write(format!("{}: {}", desc, e))
        }
    }
    type Result<T> = std::result::Result<T, Error>;
    pub trait Storage {
        fn embedding(&self, idx: usize) -> CowArray<f32, Ix1>;
        fn embeddings(&self, indices: &[usize]) -> Array2<f32>;
        fn shape(&self) -> (usize, usize);
    }
    pub trait StorageView: Storage {
        fn view(&self) -> ArrayView2<f32>;
    }
    pub trait StorageViewMut: Storage {
        fn view_mut(&mut self) -> ArrayViewMut2<f32>;
    }

    pub fn padding<T>(pos: u64) -> u64 {
        let size = size_of::<T>() as u64;
        size - (pos % size)
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(u32)]
    pub enum ChunkIdentifier {
        Header = 0,
        SimpleVocab = 1,
        NdArray = 2,
        BucketSubwordVocab = 3,
        QuantizedArray = 4,
        Metadata = 5,
        NdNorms = 6,
        FastTextSubwordVocab = 7,
        ExplicitSubwordVocab = 8,
        FloretSubwordVocab = 9,
    }

    impl ChunkIdentifier {
        pub fn ensure_chunk_type<R>(read: &mut R, identifier: ChunkIdentifier) -> Result<()>
        where
            R: Read,
        {
            let chunk_id = read
                .read_u32::<LittleEndian>()
                .map_err(|e| Error::read_error("Cannot read chunk identifier", e))?;
            let chunk_id = ChunkIdentifier::try_from(chunk_id)?;
            if chunk_id != identifier {
                return Err(Error::Format(format!(
                    "Invalid chunk identifier, expected: {}, got: {}",
                    identifier, chunk_id
                )));
            }

            Ok(())
        }
    }

    impl Display for ChunkIdentifier {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            use ChunkIdentifier::*;

            match self {
                Header => write!(f, "Header"),
                SimpleVocab => write!(f, "SimpleVocab"),
                NdArray => write!(f, "NdArray"),
                FastTextSubwordVocab => write!(f, "FastTextSubwordVocab"),
                ExplicitSubwordVocab => write!(f, "ExplicitSubwordVocab"),
                FloretSubwordVocab => write!(f, "FloretSubwordVocab"),
                BucketSubwordVocab => write!(f, "BucketSubwordVocab"),
                QuantizedArray => write!(f, "QuantizedArray"),
                Metadata => write!(f, "Metadata"),
                NdNorms => write!(f, "NdNorms"),
            }
        }
    }

    impl TryFrom<u32> for ChunkIdentifier {
        type Error = Error;

        fn try_from(identifier: u32) -> Result<Self> {
            use ChunkIdentifier::*;

            match identifier {
                1 => Ok(SimpleVocab),
                2 => Ok(NdArray),
                3 => Ok(BucketSubwordVocab),
                4 => Ok(QuantizedArray),
                5 => Ok(Metadata),
                6 => Ok(NdNorms),
                7 => Ok(FastTextSubwordVocab),
                8 => Ok(ExplicitSubwordVocab),
                9 => Ok(FloretSubwordVocab),
                unknown => Err(Error::UnknownChunkIdentifier(unknown)),
            }
        }
    }

    pub trait TypeId {
        fn ensure_data_type<R>(read: &mut R) -> Result<()>
        where
            R: Read;

        fn type_id() -> u32;
    }

    macro_rules! typeid_impl {
        ($type:ty, $id:expr) => {
            impl TypeId for $type {
                fn ensure_data_type<R>(read: &mut R) -> Result<()>
                where
                    R: Read,
                {
                    let type_id = read
                        .read_u32::<LittleEndian>()
                        .map_err(|e| Error::read_error("Cannot read type identifier", e))?;
                    if type_id != Self::type_id() {
                        return Err(Error::Format(format!(
                            "Invalid type, expected: {}, got: {}",
                            Self::type_id(),
                            type_id
                        )));
                    }

                    Ok(())
                }

                fn type_id() -> u32 {
                    $id
                }
            }
        };
    }

    // floats starting at 10 to leave room for other integer types.
    typeid_impl!(f32, 10);
    typeid_impl!(u8, 1);

    pub trait ReadChunk
    where
        Self: Sized,
    {
        fn read_chunk<R>(read: &mut R) -> Result<Self>
        where
            R: Read + Seek;
    }


    pub trait WriteChunk {
        fn chunk_identifier(&self) -> ChunkIdentifier;

        fn chunk_len(&self, offset: u64) -> u64;

        fn write_chunk<W>(&self, write: &mut W) -> Result<()>
        where
            W: Write + Seek;
    }


    #[derive(Clone, Debug)]
    pub struct NdArray {
        inner: Array2<f32>,
    }

    impl NdArray {
        pub fn new(arr: Array2<f32>) -> Self {
            NdArray { inner: arr }
        }

        fn chunk_len(data: ArrayView2<f32>, offset: u64) -> u64 {
            let n_padding = padding::<f32>(offset + mem::size_of::<u32>() as u64);

            // Chunk identifier (u32) + chunk len (u64) + rows (u64) + cols (u32) + type id (u32) + padding + matrix.
            (mem::size_of::<u32>()
                + mem::size_of::<u64>()
                + mem::size_of::<u64>()
                + mem::size_of::<u32>()
                + mem::size_of::<u32>()
                + data.len() * mem::size_of::<f32>()) as u64
                + n_padding
        }

        fn write_ndarray_chunk<W>(data: ArrayView2<f32>, write: &mut W) -> Result<()>
        where
            W: Write + Seek,
        {
            write
                .write_u32::<LittleEndian>(ChunkIdentifier::NdArray as u32)
                .map_err(|e| Error::write_error("Cannot write embedding matrix chunk identifier", e))?;
            let n_padding = padding::<f32>(write.stream_position().map_err(|e| {
                Error::write_error("Cannot get file position for computing padding", e)
            })?);

            let remaining_chunk_len = Self::chunk_len(
                data.view(),
                write.stream_position().map_err(|e| {
                    Error::read_error("Cannot get file position for computing padding", e)
                })?,
            ) - (size_of::<u32>() + size_of::<u64>()) as u64;

            write
                .write_u64::<LittleEndian>(remaining_chunk_len)
                .map_err(|e| Error::write_error("Cannot write embedding matrix chunk length", e))?;
            write
                .write_u64::<LittleEndian>(data.nrows() as u64)
                .map_err(|e| {
                    Error::write_error("Cannot write number of rows of the embedding matrix", e)
                })?;
            write
                .write_u32::<LittleEndian>(data.ncols() as u32)
                .map_err(|e| {
                    Error::write_error("Cannot write number of columns of the embedding matrix", e)
                })?;
            write
                .write_u32::<LittleEndian>(f32::type_id())
                .map_err(|e| Error::write_error("Cannot write embedding matrix type identifier", e))?;

            // Write padding, such that the embedding matrix starts on at
            // a multiple of the size of f32 (4 bytes). This is necessary
            // for memory mapping a matrix. Interpreting the raw u8 data
            // as a proper f32 array requires that the data is aligned in
            // memory. However, we cannot always memory map the starting
            // offset of the matrix directly, since mmap(2) requires a
            // file offset that is page-aligned. Since the page size is
            // always a larger power of 2 (e.g. 2^12), which is divisible
            // by 4, the offset of the matrix with regards to the page
            // boundary is also a multiple of 4.

            let padding = vec![0; n_padding as usize];
            write
                .write_all(&padding)
                .map_err(|e| Error::write_error("Cannot write padding", e))?;

            for row in data.outer_iter() {
                for col in row.iter() {
                    write.write_f32::<LittleEndian>(*col).map_err(|e| {
                        Error::write_error("Cannot write embedding matrix component", e)
                    })?;
                }
            }

            Ok(())
        }
    }

    impl From<Array2<f32>> for NdArray {
        fn from(arr: Array2<f32>) -> Self {
            NdArray::new(arr)
        }
    }

    impl From<NdArray> for Array2<f32> {
        fn from(arr: NdArray) -> Self {
            arr.inner
        }
    }

    impl Storage for NdArray {
        fn embedding(&self, idx: usize) -> CowArray<f32, Ix1> {
            CowArray::from(self.inner.row(idx))
        }

        fn embeddings(&self, indices: &[usize]) -> Array2<f32> {
            self.inner.select(Axis(0), indices)
        }

        fn shape(&self) -> (usize, usize) {
            self.inner.dim()
        }
    }

    impl StorageView for NdArray {
        fn view(&self) -> ArrayView2<f32> {
            self.inner.view()
        }
    }

    impl StorageViewMut for NdArray {
        fn view_mut(&mut self) -> ArrayViewMut2<f32> {
            self.inner.view_mut()
        }
    }


    impl ReadChunk for NdArray {
        fn read_chunk<R>(read: &mut R) -> Result<Self>
        where
            R: Read + Seek,
        {
            ChunkIdentifier::ensure_chunk_type(read, ChunkIdentifier::NdArray)?;

            // Read and discard chunk length.
            read.read_u64::<LittleEndian>()
                .map_err(|e| Error::read_error("Cannot read embedding matrix chunk length", e))?;

            let rows = read
                .read_u64::<LittleEndian>()
                .map_err(|e| {
                    Error::read_error("Cannot read number of rows of the embedding matrix", e)
                })?
                .try_into()
                .map_err(|_| Error::Overflow)?;
            let cols = read.read_u32::<LittleEndian>().map_err(|e| {
                Error::read_error("Cannot read number of columns of the embedding matrix", e)
            })? as usize;

            // The components of the embedding matrix should be of type f32.
            f32::ensure_data_type(read)?;

            let n_padding =
                padding::<f32>(read.stream_position().map_err(|e| {
                    Error::read_error("Cannot get file position for computing padding", e)
                })?);
            read.seek(SeekFrom::Current(n_padding as i64))
                .map_err(|e| Error::read_error("Cannot skip padding", e))?;

            let mut data = Array2::zeros((rows, cols));
            read.read_f32_into::<LittleEndian>(data.as_slice_mut().unwrap())
                .map_err(|e| Error::read_error("Cannot read embedding matrix", e))?;

            Ok(NdArray { inner: data })
        }
    }

    impl WriteChunk for NdArray {
        fn chunk_identifier(&self) -> ChunkIdentifier {
            ChunkIdentifier::NdArray
        }

        fn chunk_len(&self, offset: u64) -> u64 {
            Self::chunk_len(self.inner.view(), offset)
        }

        fn write_chunk<W>(&self, write: &mut W) -> Result<()>
        where
            W: Write + Seek,
        {
            Self::write_ndarray_chunk(self.inner.view(), write)
        }
    }

    let matrix = Array2::from_shape_fn((4, 3), |(r, c)| r as f32 * 3.0 + c as f32 * 0.25 - 1.0);
    let storage = NdArray::new(matrix.clone());
    let mut cursor = Cursor::new(Vec::new());
    cursor.write_all(&[0u8; 3]).unwrap(); // start the chunk at an unaligned offset
    storage.write_chunk(&mut cursor).unwrap();
    let bytes = cursor.into_inner();
    println!("{} bytes written, chunk_len(3) = {}", bytes.len(), storage.chunk_len(3));
    println!("first 16 bytes after the offset: {:?}", &bytes[3..19]);
    let mut read = Cursor::new(bytes.clone());
    read.seek(SeekFrom::Start(3)).unwrap();
    let back = NdArray::read_chunk(&mut read).unwrap();
    println!("round trip equal: {}, shape {:?}", back.view() == matrix.view(), back.shape());
    println!("embedding 2 = {}", back.embedding(2));
    println!("embeddings [3, 0, 3] =\n{}", back.embeddings(&[3, 0, 3]));
    let mut wrong = Cursor::new(bytes);
    wrong.seek(SeekFrom::Start(0)).unwrap();
    println!("reading at the wrong offset: {:?}", NdArray::read_chunk(&mut wrong).err().map(|e| format!("{:?}", e).chars().take(40).collect::<String>()));
    println!("{} {}", ChunkIdentifier::NdArray, padding::<f32>(13));
}
