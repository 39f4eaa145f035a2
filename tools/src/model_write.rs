//! Writing a model directory (any network's) so that it appears only when complete: every file
//! goes into a temporary directory beside the output, which is renamed into place at the end. An
//! existing non-empty output is refused unless forced, and even then swapped out only once the
//! new directory is whole (a failure puts the old one back). Synthesis and DLL extraction of both
//! networks write through here.
//!
//! [`OutDir::check`] runs every check that needs no data first, so a tool can refuse a bad
//! `--out` before it reads a large DLL or generates weights.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use openngx::model::manifest::Manifest;
use openngx::model::ModelError;

fn out_err(path: &Path, reason: impl Into<String>) -> ModelError {
    ModelError::Output {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// A checked output directory, not yet written.
#[derive(Debug, Clone)]
pub struct OutDir {
    out: PathBuf,
    parent: PathBuf,
    name: String,
    /// `out` exists and is not empty (it will be replaced: `force` was given).
    replace: bool,
}

impl OutDir {
    /// Check that `out` can be written: it has a final component, its parent exists, and it is
    /// missing or empty, or `force` is given.
    pub fn check(out: &Path, force: bool) -> Result<OutDir, ModelError> {
        let name = out
            .file_name()
            .ok_or_else(|| out_err(out, "output path has no final component"))?
            .to_string_lossy()
            .into_owned();
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let existing = match std::fs::read_dir(out) {
            Ok(mut it) => Some(it.next().is_some()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ModelError::io(out, e)),
        };
        if existing == Some(true) && !force {
            return Err(out_err(
                out,
                "exists and is not empty (use --force to replace it)",
            ));
        }
        if !parent.is_dir() {
            return Err(out_err(&parent, "parent directory does not exist"));
        }
        Ok(OutDir {
            out: out.to_path_buf(),
            parent,
            name,
            replace: existing == Some(true),
        })
    }

    /// The directory that will be written.
    pub fn path(&self) -> &Path {
        &self.out
    }

    /// Write `files` (paths relative to `<out>/model/`, written in parallel) and `manifest`,
    /// then move the directory into place.
    pub fn write(&self, files: &[(String, &[u8])], manifest: &Manifest) -> Result<(), ModelError> {
        let pid = std::process::id();
        let tmp = self
            .parent
            .join(format!(".{}.openngx-tmp-{pid}", self.name));
        let result = write_tree(&tmp, files, manifest).and_then(|()| {
            if self.replace {
                let old = self
                    .parent
                    .join(format!(".{}.openngx-old-{pid}", self.name));
                std::fs::rename(&self.out, &old).map_err(|e| ModelError::io(&self.out, e))?;
                if let Err(e) = std::fs::rename(&tmp, &self.out) {
                    // Put the old directory back so a failure leaves it as it was.
                    let _ = std::fs::rename(&old, &self.out);
                    return Err(ModelError::io(&self.out, e));
                }
                std::fs::remove_dir_all(&old).map_err(|e| ModelError::io(&old, e))
            } else {
                // rename(2) replaces an empty directory (or creates the name) in one step.
                std::fs::rename(&tmp, &self.out).map_err(|e| ModelError::io(&self.out, e))
            }
        });
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        result
    }
}

fn write_tree(
    tmp: &Path,
    files: &[(String, &[u8])],
    manifest: &Manifest,
) -> Result<(), ModelError> {
    if tmp.exists() {
        std::fs::remove_dir_all(tmp).map_err(|e| ModelError::io(tmp, e))?;
    }
    let model_dir = tmp.join("model");
    std::fs::create_dir_all(&model_dir).map_err(|e| ModelError::io(&model_dir, e))?;
    files
        .par_iter()
        .map(|(file, bytes)| {
            let path = model_dir.join(file);
            std::fs::write(&path, bytes).map_err(|e| ModelError::io(&path, e))
        })
        .collect::<Result<Vec<()>, _>>()?;
    let manifest_path = tmp.join("manifest.json");
    std::fs::write(&manifest_path, manifest.to_json())
        .map_err(|e| ModelError::io(&manifest_path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use openngx::model::manifest::Totals;

    fn manifest() -> Manifest {
        Manifest {
            generator: Some("test".into()),
            network: None,
            totals: Totals {
                block_count: 0,
                tensor_count: None,
                byte_length: None,
            },
            stages: Vec::new(),
            tensors: Vec::new(),
        }
    }

    #[test]
    fn writes_whole_directories_and_replaces_only_when_forced() {
        let top = tempfile::tempdir().expect("temp dir");
        let out = top.path().join("m");
        let target = OutDir::check(&out, false).expect("new directory");
        target
            .write(&[("a".into(), b"one".as_slice())], &manifest())
            .expect("write");
        assert_eq!(std::fs::read(out.join("model/a")).expect("a"), b"one");
        assert!(out.join("manifest.json").is_file());
        let e = OutDir::check(&out, false).unwrap_err();
        assert!(e.to_string().contains("exists and is not empty"), "{e}");
        let target = OutDir::check(&out, true).expect("forced");
        target
            .write(&[("b".into(), b"two".as_slice())], &manifest())
            .expect("replace");
        assert!(!out.join("model/a").exists(), "the old directory is gone");
        assert_eq!(std::fs::read(out.join("model/b")).expect("b"), b"two");
        // Nothing left beside it.
        let names: Vec<_> = std::fs::read_dir(top.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["m"]);
        let e = OutDir::check(&top.path().join("missing/m"), false).unwrap_err();
        assert!(
            e.to_string().contains("parent directory does not exist"),
            "{e}"
        );
    }
}
