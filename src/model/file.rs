//! Reading a file a user handed in (a model's manifest and stages, a DLL, a fixture) as
//! untrusted: the file is opened without blocking, so a FIFO or a device cannot hang the open;
//! it must be a regular file, checked on the opened descriptor (not the path, which could be
//! swapped between a check and the open); and the read is bounded by the bytes actually read,
//! never by what the file claims, so `/dev/zero` or a growing file cannot exhaust memory.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Why an untrusted file was not read.
#[derive(Debug, thiserror::Error)]
pub enum UntrustedRead {
    #[error("cannot open or read: {0}")]
    Io(#[from] std::io::Error),
    /// A FIFO, device, socket or directory.
    #[error("not a regular file")]
    NotRegular,
    /// More than `limit` bytes could be read.
    #[error("larger than the limit of {limit} bytes")]
    TooLarge { limit: u64 },
}

/// The whole of the regular file at `path`, at most `limit` bytes (see the module doc).
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, UntrustedRead> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(UntrustedRead::NotRegular);
    }
    read_bounded(file, limit)
}

fn read_bounded(file: File, limit: u64) -> Result<Vec<u8>, UntrustedRead> {
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(UntrustedRead::TooLarge { limit });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_within_the_limit_is_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let p = dir.path().join("f");
        std::fs::write(&p, b"abcdef").expect("write");
        assert_eq!(read_regular(&p, 6).expect("read"), b"abcdef");
        assert!(matches!(
            read_regular(&p, 5),
            Err(UntrustedRead::TooLarge { limit: 5 })
        ));
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("temp dir");
        // /dev/zero through a symlink: refused on the descriptor, nothing read.
        let link = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        assert!(matches!(
            read_regular(&link, 1 << 30),
            Err(UntrustedRead::NotRegular)
        ));
        // A FIFO with no writer: the non-blocking open returns at once and is refused.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a NUL-terminated path in a directory this test owns.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = std::time::Instant::now();
        assert!(matches!(
            read_regular(&fifo, 1024),
            Err(UntrustedRead::NotRegular)
        ));
        assert!(t.elapsed().as_secs() < 5, "the FIFO blocked");
        assert!(matches!(
            read_regular(dir.path(), 1024),
            Err(UntrustedRead::NotRegular)
        ));
        assert!(matches!(
            read_regular(&dir.path().join("missing"), 1),
            Err(UntrustedRead::Io(_))
        ));
    }
}
