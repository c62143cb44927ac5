//! Reading fuzz input as a sequence of fields (and writing seeds the same way).

/// Takes fields off the front of the input; past its end every field is 0,
/// so every input decodes.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// Reads `data` from the start.
    pub fn new(data: &'a [u8]) -> Input<'a> {
        Input { data }
    }

    /// The next byte.
    pub fn u8(&mut self) -> u8 {
        let b = self.data.first().copied().unwrap_or(0);
        self.data = self.data.get(1..).unwrap_or(&[]);
        b
    }

    /// The next 8 bytes, little-endian (zero-padded at the end).
    pub fn u64(&mut self) -> u64 {
        let mut w = [0u8; 8];
        let n = self.data.len().min(8);
        w[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        u64::from_le_bytes(w)
    }

    /// Whether the input is used up.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// Writes fields in the order an [`Input`] reads them (for seeds).
#[derive(Default)]
pub struct Output {
    /// The bytes written so far.
    pub bytes: Vec<u8>,
}

impl Output {
    /// Appends a byte.
    pub fn u8(&mut self, b: u8) -> &mut Self {
        self.bytes.push(b);
        self
    }

    /// Appends a little-endian word.
    pub fn u64(&mut self, w: u64) -> &mut Self {
        self.bytes.extend_from_slice(&w.to_le_bytes());
        self
    }
}
