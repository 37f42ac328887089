//! snapshot.rs -- the bytes of a state-machine snapshot (format 1) and
//! of the stored current snapshot (`s/snapshot`).
//!
//! Snapshot data, what openraft streams to a follower:
//!
//! ```text
//! "RVORSNAP"                  8 bytes, magic
//! version                     u32 BE, 1
//! repeated, in key order:
//!   key length   u32 BE,  key bytes    (the user's key, without "d/")
//!   value length u32 BE,  value bytes
//! 0xFFFFFFFF                  u32 BE, end mark
//! count                       u64 BE, the number of pairs above
//! ```
//!
//! The stored current snapshot is u32 BE length, the JSON of its
//! `SnapshotMeta`, then the data above.  The state machine's last applied
//! log id and membership are in the meta, not in the data.

use openraft::AnyError;

const MAGIC: &[u8; 8] = b"RVORSNAP";
const VERSION: u32 = 1;
const END: u32 = u32::MAX;

/// Appends pairs to snapshot data; `finish` ends it.
pub(crate) struct SnapshotWriter {
    out: Vec<u8>,
    count: u64,
}

impl SnapshotWriter {
    pub(crate) fn new() -> Self {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_be_bytes());
        SnapshotWriter { out, count: 0 }
    }

    pub(crate) fn pair(&mut self, key: &[u8], value: &[u8]) -> Result<(), AnyError> {
        for part in [key, value] {
            let len = u32::try_from(part.len()).ok().filter(|&n| n != END);
            let len = len.ok_or_else(|| AnyError::error("key or value of 4 GiB or more in a snapshot"))?;
            self.out.extend_from_slice(&len.to_be_bytes());
            self.out.extend_from_slice(part);
        }
        self.count += 1;
        Ok(())
    }

    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.out.extend_from_slice(&END.to_be_bytes());
        self.out.extend_from_slice(&self.count.to_be_bytes());
        self.out
    }
}

fn take<'a>(data: &mut &'a [u8], n: usize) -> Result<&'a [u8], AnyError> {
    if data.len() < n {
        return Err(AnyError::error("snapshot data is truncated"));
    }
    let (head, rest) = data.split_at(n);
    *data = rest;
    Ok(head)
}

fn take_u32(data: &mut &[u8]) -> Result<u32, AnyError> {
    Ok(u32::from_be_bytes(take(data, 4)?.try_into().expect("4 bytes")))
}

/// Key-value pairs borrowed from snapshot data.
pub(crate) type Pairs<'a> = Vec<(&'a [u8], &'a [u8])>;

/// The pairs of snapshot data, all checked (magic, version, lengths,
/// count, nothing after the end) before any is returned.
pub(crate) fn parse(mut data: &[u8]) -> Result<Pairs<'_>, AnyError> {
    if take(&mut data, 8)? != MAGIC {
        return Err(AnyError::error("not ravel-openraft snapshot data (bad magic)"));
    }
    let version = take_u32(&mut data)?;
    if version != VERSION {
        return Err(AnyError::error(format!("snapshot data format {version}, this build reads {VERSION}")));
    }
    let mut pairs = Vec::new();
    loop {
        let klen = take_u32(&mut data)?;
        if klen == END {
            break;
        }
        let key = take(&mut data, klen as usize)?;
        let vlen = take_u32(&mut data)?;
        let value = take(&mut data, vlen as usize)?;
        pairs.push((key, value));
    }
    let count = u64::from_be_bytes(take(&mut data, 8)?.try_into().expect("8 bytes"));
    if count != pairs.len() as u64 || !data.is_empty() {
        return Err(AnyError::error("snapshot data is damaged (count or length mismatch)"));
    }
    Ok(pairs)
}

/// `s/snapshot`'s value: the meta's JSON with its length, then the data.
pub(crate) fn encode_stored(meta_json: &[u8], data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + meta_json.len() + data.len());
    v.extend_from_slice(&(meta_json.len() as u32).to_be_bytes());
    v.extend_from_slice(meta_json);
    v.extend_from_slice(data);
    v
}

/// Splits `s/snapshot`'s value into the meta's JSON and the data.
pub(crate) fn decode_stored(mut value: &[u8]) -> Result<(&[u8], &[u8]), AnyError> {
    let len = take_u32(&mut value)? as usize;
    let meta = take(&mut value, len)?;
    Ok((meta, value))
}
