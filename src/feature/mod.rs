//! The seam every network plugs into, with no knowledge of the C ABI: the caller's device
//! ([`DeviceContext`]), typed image inputs ([`ImageInput`], [`Rect`]), the error a feature
//! reports ([`FeatureError`]), where a network runs ([`Route`]) and the two traits a network
//! implements ([`Backend`] creates instances, [`Instance`] records frames), and the failure
//! injection of the lifetime tests (`fault`).
//!
//! A network (`crate::nr`, later `crate::rr`) implements the traits with its own typed creation
//! and evaluation parameters. The NGX layer (`crate::ngx`) turns a caller's parameter object
//! into those types and maps [`FeatureError`] to result codes; nothing here names an NGX code,
//! and nothing here may import `crate::ngx`.

mod backend;
mod device;
mod error;
pub mod fault;
mod image;
mod route;

pub use backend::{Backend, Instance, RouteReport};
pub use device::DeviceContext;
pub use error::FeatureError;
pub use image::{ImageInput, Rect};
pub use route::{Route, RouteRequest};
