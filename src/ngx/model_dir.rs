//! Where a feature's model directory is looked up. A game linked with NVIDIA's static library
//! knows nothing of openngx, so the library (and the NGX Core built from the same code) must find
//! the model on its own. In order:
//!
//! 1. `$OPENNGX_MODEL_DIR` — when set (non-empty) it is authoritative: it is the only candidate
//!    and must validate, so a user who points at a directory never silently gets another.
//! 2. `openngx-model/` next to the loaded library (found with `dladdr`: `libopenngx.so`'s
//!    directory, or the Core's).
//! 3. `openngx-model/` under the application data path given to Init.
//! 4. `openngx-model/` under each `FeatureCommonInfo.PathListInfo` entry given to Init.
//! 5. The user's data directory: `$XDG_DATA_HOME/openngx/model`, or
//!    `$HOME/.local/share/openngx/model` when `XDG_DATA_HOME` is unset, empty or relative
//!    (the XDG base-directory rule).
//! 6. The installed data directory `<prefix>/share/openngx/model`, the prefix derived from where
//!    the library lies: `<prefix>/lib/libopenngx.so.0`, or the Core in its private directory
//!    `<prefix>/lib/openngx/libnvidia-ngx.so.1` (a directory named `openngx` is stepped over),
//!    and a multiarch `<prefix>/lib/<triplet>/` is understood too.
//!
//! The user's directory comes before the installed one, as XDG orders `XDG_DATA_HOME` before
//! `XDG_DATA_DIRS`: a user without root can replace a system-wide model without setting
//! anything. What the application names (3, 4) comes before both because it is more specific.
//!
//! The directory names (`openngx-model` next to the library and under the application paths,
//! `openngx/model` under the data directories) are the feature's: `openngx-<name>` maps to
//! `openngx/<name>`. The first candidate that exists as a directory is validated with the
//! feature's check; a failure is final (no silent fallback to a later candidate, which could be a
//! different model).
//!
//! [`Search`] gathers everything the lookup reads from the process (environment, the library's
//! own path, the paths given to Init) in one value, so the order is testable without touching the
//! process-global environment. Owns no state.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Environment variable naming the model directory.
pub const MODEL_DIR_ENV: &str = "OPENNGX_MODEL_DIR";
/// DLSS-NR's directory name, searched next to the library and under the application paths.
pub const MODEL_SUBDIR: &str = "openngx-model";
/// The project's directory under `share/` and under the user's data directory.
pub const DATA_DIR_NAME: &str = "openngx";
/// The private directory under `<prefix>/lib` that holds the Core (off the default search path
/// so that it never shadows NVIDIA's own `libnvidia-ngx.so.1`).
pub const CORE_DIR_NAME: &str = "openngx";

/// What a feature's model lookup needs: the directory name and the check of a candidate.
pub struct ModelLookup<'a> {
    /// The directory name searched next to the library and under the application paths.
    pub subdir: &'a str,
    /// Validates a candidate (`Err` carries the reason).
    pub check: &'a dyn Fn(&Path) -> Result<(), String>,
}

/// Why no model directory could be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelDirError {
    /// `$OPENNGX_MODEL_DIR` names something that is not a directory.
    #[error("{MODEL_DIR_ENV}={path}: not a directory")]
    EnvNotADirectory {
        /// The path from the environment.
        path: PathBuf,
    },
    /// A candidate exists but the validator refused it.
    #[error("model directory {path} is invalid: {reason}")]
    Invalid {
        /// The directory.
        path: PathBuf,
        /// The validator's reason.
        reason: String,
    },
    /// No candidate exists.
    #[error("no model directory found (set {MODEL_DIR_ENV}); tried: {}", tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NotFound {
        /// Every candidate tried, in order.
        tried: Vec<PathBuf>,
    },
}

impl ModelDirError {
    /// The path the error is about (the first tried path for `NotFound`).
    pub fn path(&self) -> Option<&Path> {
        match self {
            ModelDirError::EnvNotADirectory { path } | ModelDirError::Invalid { path, .. } => {
                Some(path)
            }
            ModelDirError::NotFound { tried } => tried.first().map(PathBuf::as_path),
        }
    }
}

/// Which rule of the order produced a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `openngx-model/` next to the loaded library.
    BesideLibrary,
    /// `openngx-model/` under the application data path.
    AppData,
    /// `openngx-model/` under a `PathListInfo` entry.
    PathList,
    /// `$XDG_DATA_HOME/openngx/model` (or `~/.local/share/openngx/model`).
    UserData,
    /// `<prefix>/share/openngx/model`.
    Installed,
}

impl Place {
    /// A short name for logs and `openngx doctor`.
    pub fn label(self) -> &'static str {
        match self {
            Place::BesideLibrary => "next to the library",
            Place::AppData => "application data path",
            Place::PathList => "PathListInfo path",
            Place::UserData => "user data directory",
            Place::Installed => "installed data directory",
        }
    }
}

/// One candidate directory and the rule that named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The rule.
    pub place: Place,
    /// The directory.
    pub path: PathBuf,
}

/// Everything the lookup reads, gathered once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// `$OPENNGX_MODEL_DIR` (kept as an `OsString`: a path that is not UTF-8 is still a path,
    /// and must not be mistaken for "unset").
    pub model_dir_env: Option<OsString>,
    /// The file of the loaded library (canonical), from `dladdr`.
    pub library: Option<PathBuf>,
    /// The application data path given to Init.
    pub app_data: Option<PathBuf>,
    /// The `PathListInfo` paths given to Init.
    pub extra: Vec<PathBuf>,
    /// `$XDG_DATA_HOME`.
    pub xdg_data_home: Option<OsString>,
    /// `$HOME`.
    pub home: Option<OsString>,
}

impl Search {
    /// The process's view: its environment and this library's own file, with the application's
    /// paths.
    pub fn from_process(app_data: Option<&Path>, extra: &[PathBuf]) -> Search {
        Search {
            model_dir_env: std::env::var_os(MODEL_DIR_ENV),
            library: library_file(),
            app_data: app_data.map(Path::to_path_buf),
            extra: extra.to_vec(),
            xdg_data_home: std::env::var_os("XDG_DATA_HOME"),
            home: std::env::var_os("HOME"),
        }
    }

    /// `$OPENNGX_MODEL_DIR` when set and non-empty (then the only candidate).
    pub fn env_dir(&self) -> Option<PathBuf> {
        self.model_dir_env
            .as_deref()
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    }

    /// The ordered candidates for `subdir` after the environment variable (rules 2-6).
    pub fn candidates(&self, subdir: &str) -> Vec<Candidate> {
        let mut c = Vec::new();
        let mut push = |place, path| c.push(Candidate { place, path });
        if let Some(d) = self.library.as_deref().and_then(Path::parent) {
            push(Place::BesideLibrary, d.join(subdir));
        }
        if let Some(a) = &self.app_data {
            push(Place::AppData, a.join(subdir));
        }
        for p in &self.extra {
            push(Place::PathList, p.join(subdir));
        }
        let name = data_name(subdir);
        if let Some(d) = user_data_dir(self.xdg_data_home.as_deref(), self.home.as_deref()) {
            push(Place::UserData, d.join(DATA_DIR_NAME).join(name));
        }
        if let Some(d) = self.library.as_deref().and_then(installed_data_dir) {
            push(Place::Installed, d.join(DATA_DIR_NAME).join(name));
        }
        c
    }

    /// Finds and validates the model directory (see the module comment for the order).
    pub fn find(&self, lookup: &ModelLookup<'_>) -> Result<PathBuf, ModelDirError> {
        if let Some(path) = self.env_dir() {
            if !path.is_dir() {
                return Err(ModelDirError::EnvNotADirectory { path });
            }
            return (lookup.check)(&path)
                .map(|_| path.clone())
                .map_err(|reason| ModelDirError::Invalid { path, reason });
        }
        let tried: Vec<PathBuf> = self
            .candidates(lookup.subdir)
            .into_iter()
            .map(|c| c.path)
            .collect();
        match tried.iter().find(|p| p.is_dir()) {
            Some(p) => {
                (lookup.check)(p)
                    .map(|_| p.clone())
                    .map_err(|reason| ModelDirError::Invalid {
                        path: p.clone(),
                        reason,
                    })
            }
            None => Err(ModelDirError::NotFound { tried }),
        }
    }
}

/// The name under the data directories for a feature's `subdir`: `openngx-model` -> `model`.
pub fn data_name(subdir: &str) -> &str {
    subdir.strip_prefix("openngx-").unwrap_or(subdir)
}

/// The user's data directory (XDG): `$XDG_DATA_HOME` when it is an absolute path, else
/// `$HOME/.local/share`; `None` without either.
pub fn user_data_dir(xdg_data_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    // The XDG spec says a relative value is invalid and must be ignored.
    if let Some(x) = xdg_data_home.map(Path::new).filter(|p| p.is_absolute()) {
        return Some(x.to_path_buf());
    }
    home.filter(|h| !h.is_empty())
        .map(|h| Path::new(h).join(".local").join("share"))
}

/// `<prefix>/share` for a library file installed under `<prefix>/lib` (or `<prefix>/lib/openngx/`
/// for the Core, or a multiarch `<prefix>/lib/<triplet>/`).
pub fn installed_data_dir(library: &Path) -> Option<PathBuf> {
    let mut libdir = library.parent()?;
    if libdir.file_name() == Some(OsStr::new(CORE_DIR_NAME)) {
        libdir = libdir.parent()?;
    }
    let mut prefix = libdir.parent()?;
    // `<prefix>/lib/x86_64-linux-gnu`: the triplet directory sits inside `lib`.
    if prefix.file_name() == Some(OsStr::new("lib")) {
        prefix = prefix.parent()?;
    }
    Some(prefix.join("share"))
}

/// The user's default model directory for `subdir`, where `openngx synth-model` and
/// `extract-model` write without `--out`.
pub fn user_model_dir(subdir: &str) -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME");
    let home = std::env::var_os("HOME");
    user_data_dir(xdg.as_deref(), home.as_deref())
        .map(|d| d.join(DATA_DIR_NAME).join(data_name(subdir)))
}

/// The file of the loaded `libopenngx` (or of the Core, or of the executable for a static link),
/// canonical so that `libopenngx.so -> libopenngx.so.0 -> libopenngx.so.0.1.0` resolves to the
/// installed file's real directory.
pub fn library_file() -> Option<PathBuf> {
    // SAFETY: dladdr only reads loader tables; the address is a function of this library, and
    // `dli_fname` is a NUL-terminated string owned by the loader.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let addr = library_file as *const libc::c_void;
        if libc::dladdr(addr, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        let file = std::ffi::CStr::from_ptr(info.dli_fname)
            .to_string_lossy()
            .into_owned();
        let path = PathBuf::from(file);
        Some(std::fs::canonicalize(&path).unwrap_or(path))
    }
}

/// The directory holding the loaded `libopenngx` (or the executable for a static link).
pub fn library_dir() -> Option<PathBuf> {
    library_file().and_then(|f| f.parent().map(Path::to_path_buf))
}

/// The ordered candidate list for `subdir` in this process (without the environment variable).
pub fn candidates(subdir: &str, app_data: Option<&Path>, extra: &[PathBuf]) -> Vec<PathBuf> {
    Search::from_process(app_data, extra)
        .candidates(subdir)
        .into_iter()
        .map(|c| c.path)
        .collect()
}

/// Finds and validates the model directory with this process's environment and library path,
/// `env_value` standing for `$OPENNGX_MODEL_DIR`.
pub fn find_model_dir(
    lookup: &ModelLookup<'_>,
    env_value: Option<&OsStr>,
    app_data: Option<&Path>,
    extra: &[PathBuf],
) -> Result<PathBuf, ModelDirError> {
    let search = Search {
        model_dir_env: env_value.map(OsStr::to_os_string),
        ..Search::from_process(app_data, extra)
    };
    search.find(lookup)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests never read the process environment: every input is in the [`Search`] they build,
    /// so they can run in parallel with tests that set `OPENNGX_MODEL_DIR`.
    fn search() -> Search {
        Search::default()
    }

    fn find(s: &Search) -> Result<PathBuf, ModelDirError> {
        let lookup = ModelLookup {
            subdir: MODEL_SUBDIR,
            check: &crate::ngx::registry::manifest_exists,
        };
        s.find(&lookup)
    }

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("openngx-model-dir-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    fn make_model(d: &Path) {
        std::fs::create_dir_all(d).expect("mkdir");
        std::fs::write(d.join("manifest.json"), "{}").expect("write");
    }

    #[test]
    fn env_value_is_authoritative() {
        let d = tmp("env");
        // A valid model elsewhere in the order is never used while the variable is set.
        let home = d.join("home");
        make_model(&home.join(".local/share/openngx/model"));
        let with_env = |v: &Path| Search {
            model_dir_env: Some(v.as_os_str().to_os_string()),
            home: Some(home.as_os_str().to_os_string()),
            ..search()
        };
        assert!(matches!(
            find(&with_env(&d.join("nope"))),
            Err(ModelDirError::EnvNotADirectory { .. })
        ));
        let e = find(&with_env(&d)).expect_err("no manifest");
        assert!(
            matches!(&e, ModelDirError::Invalid { reason, .. } if reason.contains("manifest.json")),
            "{e}"
        );
        std::fs::write(d.join("manifest.json"), "{}").expect("write");
        assert_eq!(find(&with_env(&d)), Ok(d.clone()));
        // Empty means unset: the search goes on to the user's directory.
        let empty = Search {
            model_dir_env: Some(OsString::new()),
            ..with_env(&d)
        };
        assert_eq!(find(&empty), Ok(home.join(".local/share/openngx/model")));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_non_utf8_env_value_is_still_authoritative() {
        use std::os::unix::ffi::OsStringExt;
        let s = Search {
            model_dir_env: Some(OsString::from_vec(b"/nonexistent/\xff".to_vec())),
            ..search()
        };
        assert!(matches!(
            find(&s),
            Err(ModelDirError::EnvNotADirectory { .. })
        ));
    }

    #[test]
    fn app_data_and_extra_paths_are_searched_in_order() {
        let a = tmp("app");
        let b = tmp("extra");
        let s = Search {
            app_data: Some(a.clone()),
            extra: vec![b.clone()],
            ..search()
        };
        let e = find(&s).expect_err("nothing there");
        match &e {
            ModelDirError::NotFound { tried } => {
                assert_eq!(tried, &[a.join(MODEL_SUBDIR), b.join(MODEL_SUBDIR)]);
            }
            other => panic!("unexpected {other}"),
        }
        make_model(&b.join(MODEL_SUBDIR));
        assert_eq!(find(&s), Ok(b.join(MODEL_SUBDIR)));
        // An existing but invalid earlier candidate wins and fails: no silent fallback.
        std::fs::create_dir_all(a.join(MODEL_SUBDIR)).expect("mkdir");
        assert!(matches!(find(&s), Err(ModelDirError::Invalid { .. })));
        let _ = std::fs::remove_dir_all(&a);
        let _ = std::fs::remove_dir_all(&b);
    }

    /// The whole order for the Core installed under a prefix: each candidate, made valid from the
    /// last to the first, takes over; an invalid earlier one is final.
    #[test]
    fn the_core_searches_beside_itself_app_paths_user_then_installed_data() {
        let root = tmp("order");
        let prefix = root.join("prefix");
        let core = prefix.join("lib/openngx/libnvidia-ngx.so.1");
        let s = Search {
            library: Some(core.clone()),
            app_data: Some(root.join("app")),
            extra: vec![root.join("p1"), root.join("p2")],
            xdg_data_home: Some(root.join("xdg").into_os_string()),
            home: Some(root.join("home").into_os_string()),
            ..search()
        };
        let expected = [
            (
                Place::BesideLibrary,
                prefix.join("lib/openngx/openngx-model"),
            ),
            (Place::AppData, root.join("app/openngx-model")),
            (Place::PathList, root.join("p1/openngx-model")),
            (Place::PathList, root.join("p2/openngx-model")),
            (Place::UserData, root.join("xdg/openngx/model")),
            (Place::Installed, prefix.join("share/openngx/model")),
        ];
        let got: Vec<_> = s
            .candidates(MODEL_SUBDIR)
            .into_iter()
            .map(|c| (c.place, c.path))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(
            find(&s),
            Err(ModelDirError::NotFound {
                tried: expected.iter().map(|(_, p)| p.clone()).collect()
            })
        );
        for (_, dir) in expected.iter().rev() {
            make_model(dir);
            assert_eq!(find(&s).as_ref(), Ok(dir));
        }
        // An empty directory in front of valid ones is the answer, and fails.
        let early = &expected[0].1;
        std::fs::remove_file(early.join("manifest.json")).expect("rm");
        assert!(matches!(find(&s), Err(ModelDirError::Invalid { ref path, .. }) if path == early));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn libopenngx_finds_the_installed_data_beside_its_lib_directory() {
        let s = Search {
            library: Some(PathBuf::from("/opt/o/lib/libopenngx.so.0.1.0")),
            home: Some(OsString::from("/home/u")),
            ..search()
        };
        let got: Vec<_> = s
            .candidates(MODEL_SUBDIR)
            .into_iter()
            .map(|c| c.path)
            .collect();
        assert_eq!(
            got,
            [
                PathBuf::from("/opt/o/lib/openngx-model"),
                PathBuf::from("/home/u/.local/share/openngx/model"),
                PathBuf::from("/opt/o/share/openngx/model"),
            ]
        );
    }

    #[test]
    fn installed_data_dir_from_the_library_path() {
        let share = |lib: &str| installed_data_dir(Path::new(lib));
        let usr = Some(PathBuf::from("/usr/share"));
        assert_eq!(share("/usr/lib/libopenngx.so.0.1.0"), usr);
        assert_eq!(share("/usr/lib/openngx/libnvidia-ngx.so.1"), usr);
        assert_eq!(share("/usr/lib/x86_64-linux-gnu/libopenngx.so.0"), usr);
        assert_eq!(
            share("/usr/lib/x86_64-linux-gnu/openngx/libnvidia-ngx.so.1"),
            usr
        );
        assert_eq!(share("/usr/lib64/libopenngx.so.0"), usr);
        // The tools link the library statically: next to `<prefix>/bin/openngx`.
        assert_eq!(share("/usr/bin/openngx"), usr);
        assert_eq!(share("/libopenngx.so"), None);
    }

    #[test]
    fn user_data_dir_follows_xdg() {
        let os = |s: &str| Some(OsString::from(s));
        let user =
            |x: Option<OsString>, h: Option<OsString>| user_data_dir(x.as_deref(), h.as_deref());
        assert_eq!(user(os("/x"), os("/h")), Some(PathBuf::from("/x")));
        // Relative or empty XDG_DATA_HOME is ignored (XDG base-directory spec).
        assert_eq!(
            user(os("rel"), os("/h")),
            Some(PathBuf::from("/h/.local/share"))
        );
        assert_eq!(
            user(os(""), os("/h")),
            Some(PathBuf::from("/h/.local/share"))
        );
        assert_eq!(user(None, os("/h")), Some(PathBuf::from("/h/.local/share")));
        assert_eq!(user(None, os("")), None);
        assert_eq!(user(None, None), None);
        assert_eq!(data_name(MODEL_SUBDIR), "model");
    }

    #[test]
    fn library_dir_is_found() {
        assert!(library_dir().is_some_and(|d| d.is_dir()));
        assert!(library_file().is_some_and(|f| f.is_file()));
    }
}
