//! Directories built from fuzz input, for the targets that read a directory (a model, a
//! fixture): the input is a `manifest.json` and, after the [`SPLIT`] marker, a script of
//! directory entries ([`Script`] writes one): sparse files of any size (no disk used), files with
//! given bytes, directories, symbolic links, FIFOs and hard links.
//!
//! Every entry stays inside the scratch area whatever the input says, because a link that led
//! the process to a real device or file could do harm (opening `/dev/watchdog` arms it):
//! * names are plain relative paths (no `..`, no NUL), created only under real directories
//!   (never through a link) and never over an existing entry;
//! * a link points at one of a fixed set of places ([`LINK_TARGETS`]: `/dev/null`, `/dev/zero`,
//!   a FIFO, files and directories outside the model directory but inside the scratch area), or
//!   at a relative path that climbs at most two levels and then only descends. Links are only
//!   made at depth one or more below the scratch directory `top`, so nothing resolves outside
//!   `top`'s parent (the per-process scratch base) except `/dev/null` and `/dev/zero`.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Separates the manifest bytes from the directory script in an input.
pub const SPLIT: &[u8] = b"\n#tree\n";

/// Longest entry name or link target read from a script.
const NAME_MAX: usize = 64;
/// Largest sparse file (16 TiB is ext4's limit; sizes are capped well below).
const SPARSE_MAX: u64 = 1 << 40;

/// The manifest bytes, and the script when the input has one.
pub fn split(data: &[u8]) -> (&[u8], Option<&[u8]>) {
    match data.windows(SPLIT.len()).position(|w| w == SPLIT) {
        Some(at) => (&data[..at], Some(&data[at + SPLIT.len()..])),
        None => (data, None),
    }
}

/// Where a link may point, by index (`top` = the per-input scratch directory).
pub const LINK_TARGETS: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "{top}/outside",
    "{top}/outside/secret",
    "{top}/outside/sub",
    "{top}/fifo",
    "{top}/dir",
    "../outside/secret",
    "..",
];

/// The kinds of script entries (the kind byte modulo their count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// `size: u64 LE`: a sparse file of that size (capped).
    Sparse = 0,
    /// `len: u16 LE, bytes`: a file holding the bytes.
    Bytes = 1,
    /// A directory.
    Dir = 2,
    /// `t: u8`; `t < 128`: a link to [`LINK_TARGETS`]`[t % 9]`; else `len: u8, bytes`: a link to
    /// that relative path (refused when it climbs more than two levels or climbs after descending).
    Link = 3,
    /// A FIFO (no writer: opening it for reading without `O_NONBLOCK` would block forever).
    Fifo = 4,
    /// `name`: a hard link to an entry made earlier.
    HardLink = 5,
    /// The target's own entries (the model target: every stage file at its declared size).
    Auto = 6,
}

const KINDS: u8 = 7;

/// The per-process scratch area: `<base>/top` is made anew for every input.
pub struct Scratch {
    base: PathBuf,
}

/// One input's scratch directory.
pub struct Top {
    /// The scratch directory (`outside/`, `fifo` and `dir/` inside it).
    pub top: PathBuf,
    /// The directory under test (a model or fixture directory), empty at first.
    pub dir: PathBuf,
}

impl Scratch {
    /// `$OPENNGX_FUZZ_SCRATCH` (fuzz/run sets it), else `/dev/shm` (no disk writes), else the
    /// temporary directory; a subdirectory named after the target and the process.
    pub fn new(target: &str) -> Scratch {
        let root = std::env::var_os("OPENNGX_FUZZ_SCRATCH")
            .map(PathBuf::from)
            .or_else(|| Some(PathBuf::from("/dev/shm")).filter(|p| p.is_dir()))
            .unwrap_or_else(std::env::temp_dir);
        let base = root.join(format!("openngx-fuzz-{target}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(&base).expect("create the fuzz scratch directory");
        Scratch { base }
    }

    /// A fresh `top`: `outside/secret` (a small file), `outside/sub/`, `fifo` and an empty `dir/`.
    pub fn fresh(&self) -> Top {
        let top = self.base.join("top");
        if top.exists() {
            // Never follows links (std removes entries with unlinkat on the directory fds).
            fs::remove_dir_all(&top).expect("clear the scratch directory");
        }
        fs::create_dir_all(top.join("outside/sub")).expect("scratch outside/");
        fs::write(top.join("outside/secret"), b"outside the directory\n").expect("secret");
        mkfifo(&top.join("fifo")).expect("scratch fifo");
        let dir = top.join("dir");
        fs::create_dir(&dir).expect("scratch dir/");
        Top { top, dir }
    }
}

impl Drop for Scratch {
    /// (A target's scratch lives as long as the process; `fuzz/run` removes what it leaves.)
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn mkfifo(p: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes())?;
    // SAFETY: a NUL-terminated path; mkfifo only creates the node.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Little-endian reads from the script; `None` once it runs out.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        (self.0.len() >= n).then(|| {
            let (a, b) = self.0.split_at(n);
            self.0 = b;
            a
        })
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }
    /// `len: u8` (modulo NAME_MAX + 1), then that many bytes.
    fn name_bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()? as usize % (NAME_MAX + 1);
        self.take(n)
    }
}

/// A plain relative path (Normal components only), or `None`.
pub fn plain(bytes: &[u8]) -> Option<PathBuf> {
    if bytes.contains(&0) {
        return None;
    }
    let p = Path::new(OsStr::from_bytes(bytes));
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// A relative link target: at most two `..` first, then plain components.
fn relative_target(bytes: &[u8]) -> Option<PathBuf> {
    if bytes.contains(&0) || bytes.first() == Some(&b'/') {
        return None;
    }
    let mut out = PathBuf::new();
    let (mut ups, mut descended) = (0, false);
    for c in Path::new(OsStr::from_bytes(bytes)).components() {
        match c {
            Component::ParentDir if !descended && ups < 2 => {
                ups += 1;
                out.push("..");
            }
            Component::Normal(s) => {
                descended = true;
                out.push(s);
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// Makes the parents of `root/name` as real directories; false when one of them is a link or
/// not a directory (the entry is then skipped: nothing is created through a link).
fn real_parents(root: &Path, name: &Path) -> bool {
    let mut at = root.to_path_buf();
    let comps: Vec<_> = name.components().collect();
    for c in &comps[..comps.len().saturating_sub(1)] {
        at.push(c);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => return false,
            Err(_) => {
                if fs::create_dir(&at).is_err() {
                    return false;
                }
            }
        }
    }
    true
}

/// A new entry's path under `root`, or `None` when it cannot be made there safely.
fn new_entry(root: &Path, name: &Path) -> Option<PathBuf> {
    if !real_parents(root, name) {
        return None;
    }
    let p = root.join(name);
    fs::symlink_metadata(&p).is_err().then_some(p)
}

/// A sparse file of `size` bytes at `root/name` (when it can be made safely).
pub fn sparse(root: &Path, name: &Path, size: u64) {
    if let Some(p) = new_entry(root, name) {
        if let Ok(f) = fs::OpenOptions::new().write(true).create_new(true).open(&p) {
            let _ = f.set_len(size.min(SPARSE_MAX));
        }
    }
}

/// Writes `bytes` as `root/name` unless something is there already (the script may have put a
/// link, FIFO or directory under that name, which the reader must then meet).
pub fn write_new(root: &Path, name: &Path, bytes: &[u8]) {
    if let Some(p) = new_entry(root, name) {
        if let Ok(mut f) = fs::OpenOptions::new().write(true).create_new(true).open(&p) {
            let _ = f.write_all(bytes);
        }
    }
}

/// Runs `script` in `top.dir`; [`Kind::Auto`] calls `auto`.
pub fn apply(top: &Top, script: &[u8], mut auto: impl FnMut(&Path)) {
    let mut r = Reader(script);
    let root = &top.dir;
    while let Some(kind) = r.u8() {
        let kind = kind % KINDS;
        if kind == Kind::Auto as u8 {
            auto(root);
            continue;
        }
        let Some(raw) = r.name_bytes() else { break };
        let name = plain(raw);
        match kind {
            k if k == Kind::Sparse as u8 => {
                let Some(size) = r.u64() else { break };
                if let Some(n) = name {
                    sparse(root, &n, size);
                }
            }
            k if k == Kind::Bytes as u8 => {
                let Some(len) = r.u16() else { break };
                let Some(bytes) = r.take(len as usize) else {
                    break;
                };
                if let Some(n) = name {
                    write_new(root, &n, bytes);
                }
            }
            k if k == Kind::Dir as u8 => {
                if let Some(p) = name.and_then(|n| new_entry(root, &n)) {
                    let _ = fs::create_dir(p);
                }
            }
            k if k == Kind::Link as u8 => {
                let Some(t) = r.u8() else { break };
                let target = if t < 128 {
                    let s = LINK_TARGETS[t as usize % LINK_TARGETS.len()];
                    Some(PathBuf::from(
                        s.replace("{top}", &top.top.to_string_lossy()),
                    ))
                } else {
                    let Some(raw_target) = r.name_bytes() else {
                        break;
                    };
                    relative_target(raw_target)
                };
                if let (Some(p), Some(t)) = (name.and_then(|n| new_entry(root, &n)), target) {
                    let _ = std::os::unix::fs::symlink(t, p);
                }
            }
            k if k == Kind::Fifo as u8 => {
                if let Some(p) = name.and_then(|n| new_entry(root, &n)) {
                    let _ = mkfifo(&p);
                }
            }
            _ => {
                // Kind::HardLink: `name` first, then the existing entry it links to.
                let Some(raw_to) = r.name_bytes() else { break };
                if let (Some(p), Some(to)) = (name.and_then(|n| new_entry(root, &n)), plain(raw_to))
                {
                    // link(2) without AT_SYMLINK_FOLLOW: a link is linked, not its target.
                    let _ = fs::hard_link(root.join(to), p);
                }
            }
        }
    }
}

/// Writes scripts (the seeds; a test's inputs).
#[derive(Default, Debug, Clone)]
pub struct Script(Vec<u8>);

impl Script {
    pub fn new() -> Script {
        Script::default()
    }
    fn entry(mut self, kind: Kind, name: &str) -> Script {
        assert!(name.len() <= NAME_MAX, "{name}: longer than {NAME_MAX}");
        self.0.push(kind as u8);
        self.0.push(name.len() as u8);
        self.0.extend_from_slice(name.as_bytes());
        self
    }
    pub fn sparse(self, name: &str, size: u64) -> Script {
        let mut s = self.entry(Kind::Sparse, name);
        s.0.extend_from_slice(&size.to_le_bytes());
        s
    }
    pub fn bytes(self, name: &str, bytes: &[u8]) -> Script {
        let mut s = self.entry(Kind::Bytes, name);
        s.0.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
        s.0.extend_from_slice(bytes);
        s
    }
    pub fn dir(self, name: &str) -> Script {
        self.entry(Kind::Dir, name)
    }
    /// A link to [`LINK_TARGETS`]`[index]`.
    pub fn link_to(self, name: &str, index: u8) -> Script {
        let mut s = self.entry(Kind::Link, name);
        s.0.push(index);
        s
    }
    /// A link to a relative path.
    pub fn link(self, name: &str, target: &str) -> Script {
        let mut s = self.entry(Kind::Link, name);
        s.0.push(128);
        s.0.push(target.len() as u8);
        s.0.extend_from_slice(target.as_bytes());
        s
    }
    pub fn fifo(self, name: &str) -> Script {
        self.entry(Kind::Fifo, name)
    }
    pub fn hard_link(self, name: &str, to: &str) -> Script {
        let mut s = self.entry(Kind::HardLink, name);
        s.0.push(to.len() as u8);
        s.0.extend_from_slice(to.as_bytes());
        s
    }
    pub fn auto(mut self) -> Script {
        self.0.push(Kind::Auto as u8);
        self
    }
    /// An input: `manifest`, the marker, the script.
    pub fn input(&self, manifest: &[u8]) -> Vec<u8> {
        [manifest, SPLIT, &self.0].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_build_what_they_say_and_nothing_escapes() {
        let scratch = Scratch::new("tree-test");
        let top = scratch.fresh();
        let script = Script::new()
            .sparse("model/big", 1 << 33)
            .bytes("a/b/c.txt", b"abc")
            .dir("d")
            .link_to("null", 0)
            .link_to("out", 2)
            .link("up", "../outside/secret")
            .link("bad", "../../../../etc/passwd")
            .link("late", "a/../../x")
            .fifo("f")
            .hard_link("c2", "a/b/c.txt")
            // Through a link: refused (out -> outside/).
            .bytes("out/x", b"no")
            // Over an existing entry: refused.
            .bytes("d", b"no")
            .bytes("../escape", b"no")
            .auto();
        let mut autos = 0;
        apply(
            &top,
            &script.input(b"{}")[b"{}".len() + SPLIT.len()..],
            |_| autos += 1,
        );
        let d = &top.dir;
        assert_eq!(
            fs::metadata(d.join("model/big")).expect("big").len(),
            1 << 33
        );
        assert_eq!(fs::read(d.join("a/b/c.txt")).expect("c"), b"abc");
        assert_eq!(fs::read(d.join("c2")).expect("c2"), b"abc");
        assert!(fs::symlink_metadata(d.join("d")).expect("d").is_dir());
        assert_eq!(
            fs::read_link(d.join("null")).expect("null"),
            Path::new("/dev/null")
        );
        assert_eq!(
            fs::read(d.join("up")).expect("up"),
            b"outside the directory\n"
        );
        assert!(fs::symlink_metadata(d.join("bad")).is_err());
        assert!(fs::symlink_metadata(d.join("late")).is_err());
        assert!(fs::symlink_metadata(top.top.join("outside/x")).is_err());
        assert!(fs::symlink_metadata(top.top.join("escape")).is_err());
        assert_eq!(autos, 1);
        // Each input starts from a clean directory.
        let again = scratch.fresh();
        assert_eq!(fs::read_dir(&again.dir).expect("dir").count(), 0);
    }

    #[test]
    fn split_finds_the_script() {
        assert_eq!(split(b"{}"), (&b"{}"[..], None));
        let input = Script::new().dir("x").input(b"{\"a\":1}");
        let (m, s) = split(&input);
        assert_eq!(m, b"{\"a\":1}");
        assert_eq!(s, Some(&[Kind::Dir as u8, 1, b'x'][..]));
    }
}
