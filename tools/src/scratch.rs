//! Scratch directories that live as long as one test process, for what tests keep in statics.
//!
//! A `tempfile::TempDir` held in a `static` is never dropped (Rust runs no destructors of
//! statics), so every test process that kept a synthetic model that way left 141 MiB behind in
//! `/tmp` or in the target directory's `tmp/` (which CI keeps warm between runs): gigabytes after
//! a few dozen runs. [`process_dir`] gives a directory named for the process instead, removes it
//! when the process exits normally (`atexit`, which the test harness reaches after its last test),
//! and removes the directories of the same prefix whose process is gone (a run that was killed
//! or crashed), so nothing accumulates either way.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// Directories to remove at exit.
static AT_EXIT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_at_exit() {
    let dirs = std::mem::take(&mut *AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()));
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Whether process `pid` exists (signal 0 checks without sending anything; EPERM means it
/// exists under another user).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 sends nothing; it only reports whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes `<root>/<prefix>-<pid>` entries whose process no longer runs.
fn sweep(root: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_prefix('-'))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !alive(pid) {
            let path = entry.path();
            let _ = match entry.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
        }
    }
}

/// A fresh directory `<root>/<prefix>-<pid>` owned by this process: removed at its normal exit,
/// and by the next call with the same root and prefix if the process died first. `prefix` must
/// not be a prefix of another caller's (the sweep matches `prefix-<digits>` exactly).
pub fn process_dir(root: &Path, prefix: &str) -> io::Result<PathBuf> {
    sweep(root, prefix);
    let dir = root.join(format!("{prefix}-{}", std::process::id()));
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::create_dir_all(&dir)?;
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: `remove_at_exit` is a plain `extern "C" fn()` that never unwinds.
        unsafe { libc::atexit(remove_at_exit) };
    });
    AT_EXIT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(dir.clone());
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_processes_directories_are_swept_and_live_ones_kept() {
        let root = tempfile::tempdir().expect("temp dir");
        // A pid far above any pid_max is never alive.
        let dead = root.path().join("t-4294967295");
        std::fs::create_dir_all(dead.join("model")).expect("dir");
        let other = root.path().join("other-4294967295");
        std::fs::create_dir_all(&other).expect("dir");
        let parent = root
            .path()
            .join(format!("t-{}", std::os::unix::process::parent_id()));
        std::fs::create_dir_all(&parent).expect("dir");
        let mine = process_dir(root.path(), "t").expect("process dir");
        assert_eq!(mine, root.path().join(format!("t-{}", std::process::id())));
        assert!(mine.is_dir());
        assert!(!dead.exists(), "a dead process's directory is removed");
        assert!(other.exists(), "another prefix is left alone");
        assert!(parent.exists(), "a live process's directory is left alone");
        // Asked again, the process's directory starts empty.
        std::fs::write(mine.join("f"), b"x").expect("write");
        let again = process_dir(root.path(), "t").expect("process dir");
        assert_eq!(again, mine);
        assert!(!mine.join("f").exists());
        // Removed at exit: run the handler as exit would.
        remove_at_exit();
        assert!(!mine.exists());
    }
}
