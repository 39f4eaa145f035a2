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
    /// The tensor-core route: the GEMMs on the device's f16 cooperative matrices, in the
    /// profile a probe identified (`h25`), only where it matched exactly.
    Tensor,
}

impl Route {
    /// Every route, in the order they are listed.
    pub const ALL: [Route; 3] = [Route::Cpu, Route::Exact, Route::Tensor];

    /// The name used in options and logs.
    pub fn name(self) -> &'static str {
        match self {
            Route::Cpu => "cpu",
            Route::Exact => "exact",
            Route::Tensor => "tensor",
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

    /// `cpu`, `exact`, `tensor`, or `gpu` (the name `parity --route` has always accepted for the exact
    /// route).
    fn from_str(s: &str) -> Result<Route, String> {
        match s {
            "cpu" => Ok(Route::Cpu),
            "exact" | "gpu" => Ok(Route::Exact),
            "tensor" => Ok(Route::Tensor),
            other => Err(format!(
                "unknown route `{other}` (expected one of: cpu, exact, tensor; `gpu` means exact)"
            )),
        }
    }
}

/// What a caller asks of a feature's route: the library's choice, or one route by name (an
/// impossible request is refused, never replaced).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RouteRequest {
    /// The tensor route where the device's profile is identified and the application enabled
    /// its device features, else the exact route.
    #[default]
    Auto,
    Exact,
    Tensor,
}

impl RouteRequest {
    /// `auto`, `exact` or `tensor` (the values of `OPENNGX_ROUTE`).
    pub fn parse(s: &str) -> Option<RouteRequest> {
        match s {
            "auto" | "" => Some(RouteRequest::Auto),
            "exact" => Some(RouteRequest::Exact),
            "tensor" => Some(RouteRequest::Tensor),
            _ => None,
        }
    }

    /// The numbers of the creation parameter: 0 auto, 1 exact, 2 tensor.
    pub fn from_number(v: u32) -> Option<RouteRequest> {
        match v {
            0 => Some(RouteRequest::Auto),
            1 => Some(RouteRequest::Exact),
            2 => Some(RouteRequest::Tensor),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_requests_parse() {
        assert_eq!(RouteRequest::parse("tensor"), Some(RouteRequest::Tensor));
        assert_eq!(RouteRequest::parse("exact"), Some(RouteRequest::Exact));
        assert_eq!(RouteRequest::parse("auto"), Some(RouteRequest::Auto));
        assert_eq!(RouteRequest::parse("fast"), None);
        assert_eq!(RouteRequest::from_number(2), Some(RouteRequest::Tensor));
        assert_eq!(RouteRequest::from_number(3), None);
    }

    #[test]
    fn names_round_trip_and_gpu_means_exact() {
        for r in Route::ALL {
            assert_eq!(r.name().parse::<Route>(), Ok(r));
            assert_eq!(r.to_string(), r.name());
        }
        assert_eq!("gpu".parse::<Route>(), Ok(Route::Exact));
        assert_eq!("tensor".parse::<Route>(), Ok(Route::Tensor));
        assert!("fast".parse::<Route>().is_err());
    }
}
