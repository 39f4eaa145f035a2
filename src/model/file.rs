//! Reading a file a user handed in (a model's manifest and stages, a DLL, a fixture) as
//! untrusted: the file is opened without blocking, so a FIFO or a device cannot hang the open;
//! it must be a regular file, checked on the opened descriptor (not the path, which could be
//! swapped between a check and the open); and the read is bounded by the bytes actually read,
//! never by what the file claims, so `/dev/zero` or a growing file cannot exhaust memory.
//!
//! A file named inside a directory (a stage under its model, a fixture's data file) must also
//! stay inside it: [`open_beneath`] refuses a name that resolves, through symlinks or symlinked
//! sub-directories, to anything outside the directory, and reports the file's identity
//! (device, inode) so that two names of one file can be counted as one.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

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
    /// The name resolves (through a link) to a file outside the directory it must stay in.
    #[error("resolves to {}, outside {}", resolved.display(), root.display())]
    Escapes { resolved: PathBuf, root: PathBuf },
    /// The name itself is not a plain relative path (absolute, `..`, empty).
    #[error("not a plain relative path")]
    BadName,
}

/// An untrusted regular file, opened and checked (see [`open_beneath`]).
#[derive(Debug)]
pub struct Opened {
    file: File,
    /// Its size when it was checked (the read is bounded separately).
    pub len: u64,
    /// (device, inode): equal for two names of one file (hard or symbolic links).
    pub identity: (u64, u64),
}

impl Opened {
    /// The whole file, at most `limit` bytes.
    pub fn read(self, limit: u64) -> Result<Vec<u8>, UntrustedRead> {
        read_bounded(self.file, limit)
    }
}

/// The whole of the regular file at `path`, at most `limit` bytes (see the module doc).
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, UntrustedRead> {
    let (file, _) = open_regular(path)?;
    read_bounded(file, limit)
}

/// The regular file `name` inside `root`, at most `limit` bytes ([`open_beneath`] + read).
pub fn read_beneath(root: &Path, name: &Path, limit: u64) -> Result<Vec<u8>, UntrustedRead> {
    open_beneath(root, name)?.read(limit)
}

/// Open the regular file `name` (relative) inside the directory `root`, refusing it when it
/// resolves to a file outside `root`.
///
/// How escape is ruled out without a check-then-use race: the file is opened first (following
/// links, non-blocking), then the path is resolved (`canonicalize`) and must lie under the
/// canonical `root`, and the resolved path must name the very file that is open (same device and
/// inode as `fstat` of the descriptor). Everything read afterwards comes from the descriptor. If
/// a link is swapped between the open and the check, the resolved path names another file and
/// the open is refused; if the opened file is reachable under `root` by its resolved path, it is
/// inside the directory, whatever links led to it. (A hard link inside `root` to a file outside
/// is the file itself; it needs write access to `root` and is not an escape.) `root` itself may
/// be a link: the user chose it.
pub fn open_beneath(root: &Path, name: &Path) -> Result<Opened, UntrustedRead> {
    let plain = name.components().next().is_some()
        && name
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain {
        return Err(UntrustedRead::BadName);
    }
    let path = root.join(name);
    let (file, meta) = open_regular(&path)?;
    let root = root.canonicalize()?;
    let resolved = path.canonicalize()?;
    if !resolved.starts_with(&root) || resolved == root {
        return Err(UntrustedRead::Escapes { resolved, root });
    }
    let now = std::fs::metadata(&resolved)?;
    if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
        // Changed between the open and the check: whatever was opened is not proven inside.
        return Err(UntrustedRead::Escapes { resolved, root });
    }
    Ok(Opened {
        file,
        len: meta.len(),
        identity: (meta.dev(), meta.ino()),
    })
}

/// Open `path` without blocking (a FIFO or a tty cannot hang or take over the open) and refuse
/// anything but a regular file, judged on the descriptor.
fn open_regular(path: &Path) -> Result<(File, std::fs::Metadata), UntrustedRead> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(UntrustedRead::NotRegular);
    }
    Ok((file, meta))
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

    #[test]
    fn names_may_not_leave_their_directory_through_links() {
        let top = tempfile::tempdir().expect("temp dir");
        let root = top.path().join("root");
        let outside = top.path().join("outside");
        std::fs::create_dir_all(root.join("real")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::fs::write(root.join("real/x"), b"in").expect("write");
        std::fs::write(outside.join("x"), b"out").expect("write");
        let link = |to: &Path, at: &str| std::os::unix::fs::symlink(to, root.join(at));
        link(&outside, "sub").expect("symlink");
        link(&outside.join("x"), "y").expect("symlink");
        link(Path::new("real/x"), "z").expect("symlink");
        link(Path::new("../outside/x"), "w").expect("symlink");

        // A symlinked sub-directory, a link to a file outside, a relative link climbing out.
        for name in ["sub/x", "y", "w"] {
            assert!(
                matches!(
                    read_beneath(&root, Path::new(name), 16),
                    Err(UntrustedRead::Escapes { .. })
                ),
                "{name}"
            );
        }
        // Links that stay inside are followed, and report the identity of the file they reach.
        assert_eq!(read_beneath(&root, Path::new("z"), 16).expect("z"), b"in");
        let a = open_beneath(&root, Path::new("real/x")).expect("real/x");
        let b = open_beneath(&root, Path::new("./z")).expect("z");
        assert_eq!(a.identity, b.identity);
        assert_eq!(a.len, 2);
        // The root itself may be reached through a link.
        std::os::unix::fs::symlink(&root, top.path().join("alias")).expect("symlink");
        assert_eq!(
            read_beneath(&top.path().join("alias"), Path::new("z"), 16).expect("alias"),
            b"in"
        );
        for name in ["", "/etc/passwd", "../outside/x", "real/../../outside/x"] {
            assert!(
                matches!(
                    open_beneath(&root, Path::new(name)),
                    Err(UntrustedRead::BadName)
                ),
                "{name:?}"
            );
        }
    }
}
