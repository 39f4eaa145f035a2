//! [`Route`]: where a network runs — the CPU reference, or a GPU route. One enum for the
//! library's logs and capability reports and for every tool's `--route` option.

use std::fmt;
use std::str::FromStr;

/// Where a network runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// The CPU reference (the oracle; tools only).
    Cpu,
    /// The exact GPU route: portable compute shaders emulating the MMA profile with integer
    /// arithmetic (any Vulkan 1.2 device with 8/16-bit storage and shaderFloat16/Int8).
    Exact,
}

impl Route {
    /// Every route, in the order they are listed.
    pub const ALL: [Route; 2] = [Route::Cpu, Route::Exact];

    /// The name used in options and logs.
    pub fn name(self) -> &'static str {
        match self {
            Route::Cpu => "cpu",
            Route::Exact => "exact",
        }
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Route {
    type Err = String;

    /// `cpu`, `exact`, or `gpu` (the name `parity --route` has always accepted for the exact
    /// route).
    fn from_str(s: &str) -> Result<Route, String> {
        match s {
            "cpu" => Ok(Route::Cpu),
            "exact" | "gpu" => Ok(Route::Exact),
            other => Err(format!(
                "unknown route `{other}` (expected one of: cpu, exact; `gpu` means exact)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_gpu_means_exact() {
        for r in Route::ALL {
            assert_eq!(r.name().parse::<Route>(), Ok(r));
            assert_eq!(r.to_string(), r.name());
        }
        assert_eq!("gpu".parse::<Route>(), Ok(Route::Exact));
        assert!("tensor".parse::<Route>().is_err());
    }
}
