//! Where `synth-model` and `extract-model` write: `--out DIR`, or without it the user's data
//! directory (`$XDG_DATA_HOME/openngx/model`, else `~/.local/share/openngx/model`; for Ray
//! Reconstruction `openngx/rr-model`), which the library and the NGX Core search on their own
//! (`openngx::ngx::model_dir`), so that an unmodified game finds the model with nothing set.

use std::path::{Path, PathBuf};

use openngx::ngx::model_dir::{user_model_dir, MODEL_SUBDIR};

/// Which network's model a tool writes (`--feature`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Network {
    /// DLSS-NR (feature 18).
    Nr,
    /// DLSS Ray Reconstruction (feature 13, DLSS-D).
    Rr,
}

impl Network {
    /// The model directory's name next to the library (`openngx-model`, `openngx-rr-model`).
    pub fn subdir(self) -> &'static str {
        match self {
            Network::Nr => MODEL_SUBDIR,
            Network::Rr => openngx::rr::weights::model::MODEL_SUBDIR,
        }
    }
}

/// The directory to write for `network`, and whether it is the default one.
pub fn resolve(out: Option<&Path>, network: Network) -> Result<(PathBuf, bool), String> {
    if let Some(p) = out {
        return Ok((p.to_path_buf(), false));
    }
    let dir = user_model_dir(network.subdir())
        .ok_or("no user data directory (neither XDG_DATA_HOME nor HOME is set): pass --out DIR")?;
    // The default's parents (`~/.local/share/openngx`) may not exist yet; an explicit --out must
    // name an existing parent, as before.
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    Ok((dir, true))
}

/// The line printed after writing the default directory.
pub fn default_note(dir: &Path) -> String {
    format!(
        "{} is the user data directory: libopenngx and the NGX Core find it without \
         OPENNGX_MODEL_DIR (`openngx doctor` shows the search)",
        dir.display()
    )
}
