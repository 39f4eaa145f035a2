//! The NGX C ABI: exported entry points, parameter objects, result codes and handles.
#![allow(non_camel_case_types, non_upper_case_globals)]
pub mod abi;
