//! Which route a DLSS-NR feature runs, decided once at creation: the creation parameter
//! `OpenNGX.Route`, else `OPENNGX_ROUTE`, else the library's choice (the tensor route where it
//! can run, the exact route otherwise). A request that cannot be met is refused with the reason,
//! never replaced by another route.
//!
//! The library cannot read which features a `VkDevice` was created with, so the tensor route
//! also needs the application's statement that it enabled them (`OpenNGX.TensorFeaturesEnabled`,
//! else `OPENNGX_TENSOR_FEATURES=1`). Without it no cooperative-matrix shader is ever created on
//! the caller's device; the profile probe runs on a device of the library's own.

use crate::feature::{FeatureError, Route, RouteRequest};
use crate::gpu::GpuContext;
use crate::nr::keys;
use crate::nr::record::KernelBuild;
use crate::nr::route::{self, Fusion, NetworkRoute, RouteError, TensorRoute};
use crate::numerics::Profiles;

use super::errors::gpu_error;
use super::params::NrCreate;

/// The environment variable that asks for a route when the creation parameter does not.
pub const ROUTE_ENV: &str = "OPENNGX_ROUTE";
/// The environment variable that states the tensor route's device features are enabled.
pub const TENSOR_FEATURES_ENV: &str = "OPENNGX_TENSOR_FEATURES";
/// The environment variable that chooses which neighbouring ops run as one kernel (a
/// [`Fusion`] name; the same bytes whatever it says).
pub const FUSION_ENV: &str = "OPENNGX_FUSION";

/// The fusion `OPENNGX_FUSION` asks for (read once, at creation; unset: [`Fusion::default`],
/// each window block's FFN pair as one kernel). A name the
/// library does not know is refused, never ignored. The exact route fuses nothing whatever it
/// says (`nr::route::fuses`).
pub fn fusion_from_env() -> Result<Fusion, FeatureError> {
    match std::env::var(FUSION_ENV) {
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|reason| FeatureError::UnsupportedParameter {
                key: FUSION_ENV.to_owned(),
                reason,
            }),
        Err(_) => Ok(Fusion::default()),
    }
}

/// The request and the statement as the creation parameters and the environment give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteInputs {
    pub request: RouteRequest,
    /// Where the request came from (for the refusal's key).
    pub from_env: bool,
    pub tensor_features: bool,
}

impl RouteInputs {
    /// Read `created`'s parameters and, where they are absent, the environment (once, at
    /// creation).
    pub fn read(created: &NrCreate) -> Result<RouteInputs, FeatureError> {
        let (request, from_env) = match created.route_request() {
            Some(r) => (r, false),
            None => match std::env::var(ROUTE_ENV) {
                Ok(v) => (
                    RouteRequest::parse(v.trim()).ok_or_else(|| {
                        FeatureError::UnsupportedParameter {
                            key: ROUTE_ENV.to_owned(),
                            reason: format!("`{v}`: expected auto, exact or tensor"),
                        }
                    })?,
                    true,
                ),
                Err(_) => (RouteRequest::Auto, false),
            },
        };
        let tensor_features = created
            .tensor_features()
            .unwrap_or_else(|| std::env::var(TENSOR_FEATURES_ENV).is_ok_and(|v| v.trim() == "1"));
        Ok(RouteInputs {
            request,
            from_env,
            tensor_features,
        })
    }
}

/// The chosen route, and for the log why the tensor route was not taken (automatic choice).
pub struct Chosen {
    pub route: Box<dyn NetworkRoute>,
    pub not_tensor: Option<String>,
}

/// Why the tensor route cannot run on `ctx` with `inputs` (`None`: it can, probe included).
fn tensor_obstacle(ctx: &GpuContext, inputs: &RouteInputs) -> Option<String> {
    if !inputs.tensor_features {
        return Some(format!(
            "the application did not state that it enabled the tensor route's device features \
             ({} = 1 or {TENSOR_FEATURES_ENV}=1)",
            keys::TENSOR_FEATURES_ENABLED
        ));
    }
    let missing = TensorRoute::missing(ctx.capabilities());
    if !missing.is_empty() {
        return Some(format!("the device lacks {}", missing.join(", ")));
    }
    None
}

/// Build the route `inputs` ask for on `ctx`, with kernel builds `kernels`.
pub fn choose(
    ctx: &GpuContext,
    inputs: &RouteInputs,
    kernels: KernelBuild,
) -> Result<Chosen, FeatureError> {
    let exact = || {
        route::build(Route::Exact, ctx, Profiles::NATIVE, kernels).map_err(|e| match e {
            RouteError::Gpu(g) => gpu_error(g),
            other => FeatureError::Platform(other.to_string()),
        })
    };
    let refuse = |reason: String| FeatureError::UnsupportedParameter {
        key: if inputs.from_env {
            ROUTE_ENV.to_owned()
        } else {
            keys::ROUTE.to_owned()
        },
        reason: format!("the tensor route was requested but {reason}"),
    };
    match inputs.request {
        RouteRequest::Exact => Ok(Chosen {
            route: exact()?,
            not_tensor: None,
        }),
        RouteRequest::Tensor => {
            if let Some(why) = tensor_obstacle(ctx, inputs) {
                return Err(refuse(why));
            }
            let route = route::build(Route::Tensor, ctx, Profiles::H25, kernels)
                .map_err(|e| refuse(e.to_string()))?;
            Ok(Chosen {
                route,
                not_tensor: None,
            })
        }
        RouteRequest::Auto => {
            if let Some(why) = tensor_obstacle(ctx, inputs) {
                return Ok(Chosen {
                    route: exact()?,
                    not_tensor: Some(why),
                });
            }
            match route::build(Route::Tensor, ctx, Profiles::H25, kernels) {
                Ok(route) => Ok(Chosen {
                    route,
                    not_tensor: None,
                }),
                Err(e) => Ok(Chosen {
                    route: exact()?,
                    not_tensor: Some(e.to_string()),
                }),
            }
        }
    }
}
