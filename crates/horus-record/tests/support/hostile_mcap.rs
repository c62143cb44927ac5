//! Crafted MCAP files for the hostile-input tests (shared with `horus-cli`'s tests through
//! `#[path]`): byte for byte, since no writer would produce them.

#![allow(dead_code)]

/// The MCAP magic.
const MAGIC: &[u8; 8] = b"\x89MCAP0\r\n";

fn record(op: u8, body: &[u8]) -> Vec<u8> {
    let mut r = vec![op];
    r.extend_from_slice(&(body.len() as u64).to_le_bytes());
    r.extend_from_slice(body);
    r
}

/// A chunk record: `declared` uncompressed bytes (CRC 0: not checked), `compression`, `data`.
fn chunk(declared: u64, compression: &str, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0u64.to_le_bytes()); // message start time
    b.extend_from_slice(&0u64.to_le_bytes()); // message end time
    b.extend_from_slice(&declared.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes()); // uncompressed CRC: none
    b.extend_from_slice(&(compression.len() as u32).to_le_bytes());
    b.extend_from_slice(compression.as_bytes());
    b.extend_from_slice(&(data.len() as u64).to_le_bytes());
    b.extend_from_slice(data);
    record(0x06, &b)
}

/// A file: magic, then `records`, no summary and no footer (as an interrupted recording).
fn file(records: &[Vec<u8>]) -> Vec<u8> {
    let mut f = MAGIC.to_vec();
    for r in records {
        f.extend_from_slice(r);
    }
    f
}

/// A zstd chunk holding one Message record whose length field claims `claimed` bytes (its
/// real body is the 22-byte message header only). The chunk declares exactly what it holds.
pub(crate) fn chunk_with_message_claiming(claimed: u64) -> Vec<u8> {
    let mut inner = vec![0x05];
    inner.extend_from_slice(&claimed.to_le_bytes());
    inner.extend_from_slice(&1u16.to_le_bytes()); // channel
    inner.extend_from_slice(&0u32.to_le_bytes()); // sequence
    inner.extend_from_slice(&0u64.to_le_bytes()); // log time
    inner.extend_from_slice(&0u64.to_le_bytes()); // publish time
    let z = zstd::bulk::compress(&inner, 3).expect("zstd");
    file(&[chunk(inner.len() as u64, "zstd", &z)])
}

/// A zstd chunk whose header declares `declared` uncompressed bytes while its data is a few
/// bytes of zeros compressed (a decompression bomb's header).
pub(crate) fn chunk_declaring_uncompressed(declared: u64) -> Vec<u8> {
    let z = zstd::bulk::compress(&[0u8; 64], 3).expect("zstd");
    file(&[chunk(declared, "zstd", &z)])
}

fn string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s);
}

/// A zstd chunk of `n` `ros2msg` schemas (`test_msgs/msg/Big<i>`, each a definition of
/// `def_len` bytes of `#`) and a channel `/t<i>` (`cdr`, no metadata) on each: tens of MiB
/// of definitions in a file of kilobytes.
pub(crate) fn chunk_of_ros2_schemas(n: u16, def_len: usize) -> Vec<u8> {
    let def = vec![b'#'; def_len];
    let mut inner = Vec::new();
    for i in 0..n {
        let mut body = (i + 1).to_le_bytes().to_vec();
        string(&mut body, format!("test_msgs/msg/Big{i}").as_bytes());
        string(&mut body, b"ros2msg");
        string(&mut body, &def);
        inner.extend_from_slice(&record(0x03, &body));
        let mut body = (i + 1).to_le_bytes().to_vec(); // channel id
        body.extend_from_slice(&(i + 1).to_le_bytes()); // schema id
        string(&mut body, format!("/t{i}").as_bytes());
        string(&mut body, b"cdr");
        body.extend_from_slice(&0u32.to_le_bytes()); // metadata: empty map
        inner.extend_from_slice(&record(0x04, &body));
    }
    let z = zstd::bulk::compress(&inner, 3).expect("zstd");
    file(&[chunk(inner.len() as u64, "zstd", &z)])
}
