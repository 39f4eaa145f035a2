//! The quick model-directory check the NGX layer runs before a DLSS-NR feature is created. The
//! loaded models themselves are shared through `crate::model::ModelCache` (one per backend).

use std::path::Path;

/// The check the NGX layer runs on a model directory before creating a feature: the manifest
/// parses and validates, and every stage file is a regular file inside the directory, with the
/// size the manifest states, used by one stage only (`model::load::check_files`). The hashes
/// are checked when the feature loads the model (that costs a full read).
pub fn quick_check(dir: &Path) -> Result<(), String> {
    crate::model::load::check_files(dir).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_check_names_the_problem() {
        let d = std::env::temp_dir().join(format!("openngx-quick-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("mkdir");
        let e = quick_check(&d).expect_err("no manifest");
        assert!(e.contains("manifest.json"), "{e}");
        std::fs::write(d.join("manifest.json"), "{}").expect("write");
        let e = quick_check(&d).expect_err("empty manifest");
        assert!(e.contains("manifest.json"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
