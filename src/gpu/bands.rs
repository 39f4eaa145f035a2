//! Launches within the device's limits, the part every network shares: the limits a launch must
//! respect ([`BindLimits`], lowered by tests and tools), why a size cannot run ([`RangeError`]),
//! a band of rows ([`Band`]), the greedy cut of an axis into bands that fit ([`split`]) and the
//! sub-range of a binding a band touches ([`sub_binding`]).
//!
//! Which rows of which tensors a band of a node touches is each network's own rule
//! (`nr::record::bands`, `rr::record::bands`); knowing no graph, this module only does the
//! arithmetic both use.

use std::ops::Range;

use super::{BufferBinding, Capabilities};

/// The largest `minStorageBufferOffsetAlignment` Vulkan allows; bands of bindings that start
/// from an unaligned offset are bound from the aligned offset below, so a band leaves this much
/// room under the range limit.
pub const ALIGN_ROOM: u64 = 256;

/// The limits a launch must respect (from the device, possibly lowered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindLimits {
    /// `maxStorageBufferRange`: bytes one storage-buffer binding may cover.
    pub max_range: u64,
    /// `maxComputeWorkGroupCount`.
    pub max_groups: [u32; 3],
    /// The most bytes one buffer may have: `maxMemoryAllocationSize` and, where the device
    /// states one, `maxBufferSize`.
    pub max_buffer: u64,
}

impl BindLimits {
    /// The limits of a device.
    pub fn of(caps: &Capabilities) -> BindLimits {
        BindLimits {
            max_range: u64::from(caps.max_storage_buffer_range),
            max_groups: caps.max_compute_work_group_count,
            max_buffer: caps.max_memory_allocation_size.min(caps.max_buffer_size),
        }
    }

    /// The same limits with the binding range lowered to `bytes` (never raised): tests and
    /// `bench --max-binding-range` force the split route on small sizes with it.
    pub fn lowered(self, bytes: Option<u64>) -> BindLimits {
        BindLimits {
            max_range: bytes.map_or(self.max_range, |b| b.min(self.max_range)),
            ..self
        }
    }

    /// The range limit for one band (room for an alignment skew below it).
    pub fn band_range(&self) -> u64 {
        self.max_range.saturating_sub(ALIGN_ROOM)
    }
}

/// Why a size cannot run within a device's limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {need} {unit} where the device's {limit} is {have}")]
pub struct RangeError {
    /// What does not fit (`node `block-0.qkv`: 256 rows of tensor `…``).
    pub what: String,
    /// The limit, by its Vulkan name.
    pub limit: &'static str,
    /// What it would take.
    pub need: u64,
    /// The device's limit.
    pub have: u64,
    /// `bytes` or `workgroups`.
    pub unit: &'static str,
}

impl RangeError {
    pub(crate) fn range(what: String, need: u64, limits: &BindLimits) -> RangeError {
        RangeError {
            what,
            limit: "maxStorageBufferRange",
            need,
            have: limits.max_range,
            unit: "bytes",
        }
    }

    /// A buffer of `need` bytes above `maxMemoryAllocationSize` / `maxBufferSize`.
    pub fn buffer(what: String, need: u64, limits: &BindLimits) -> RangeError {
        RangeError {
            what,
            limit: "maxMemoryAllocationSize/maxBufferSize",
            need,
            have: limits.max_buffer,
            unit: "bytes",
        }
    }

    pub(crate) fn groups(what: String, axis: usize, need: u64, limits: &BindLimits) -> RangeError {
        RangeError {
            what,
            limit: [
                "maxComputeWorkGroupCount[0]",
                "maxComputeWorkGroupCount[1]",
                "maxComputeWorkGroupCount[2]",
            ][axis.min(2)],
            need,
            have: u64::from(limits.max_groups[axis.min(2)]),
            unit: "workgroups",
        }
    }
}

/// Rows `[start, end)` of a node's band axis (each network's `bands::Axis`) that one launch computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Band {
    pub start: u32,
    pub end: u32,
}

impl Band {
    /// Rows of the band.
    pub fn len(&self) -> u32 {
        self.end - self.start
    }

    /// Whether the band is empty.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// The sub-range of `whole` (a tensor's binding) holding token rows `rows` of `row` bytes each.
/// An empty row range keeps one row (from the tensor's last row) so the binding stays valid; the
/// kernels read nothing from it.
pub fn sub_binding(whole: BufferBinding, rows: Range<u64>, row: u64) -> BufferBinding {
    let total = whole.range / row.max(1);
    let (start, len) = if rows.end > rows.start {
        (rows.start, rows.end - rows.start)
    } else {
        (rows.start.min(total.saturating_sub(1)), 1)
    };
    BufferBinding {
        buffer: whole.buffer,
        offset: whole.offset + start * row,
        range: len * row,
    }
}

/// Bands `[start, end)` cutting `len` rows at multiples of `quantum`, each as long as `fits`
/// allows (greedy, longest first; `fits` must not get true again once false for longer bands
/// from one start). `Err` with the error `fits` gave for the shortest band where none fits.
pub fn split<E>(
    len: u32,
    quantum: u32,
    fits: impl Fn(Band) -> Result<(), E>,
) -> Result<Vec<Band>, E> {
    let quantum = quantum.max(1);
    let mut bands = Vec::new();
    let mut start = 0;
    while start < len {
        // The longest fitting end among start + k * quantum (and len): binary search on k.
        let end_of = |k: u32| (start.saturating_add(k.saturating_mul(quantum))).min(len);
        let steps = (len - start).div_ceil(quantum);
        fits(Band {
            start,
            end: end_of(1),
        })?;
        let (mut lo, mut hi) = (1, steps);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(Band {
                start,
                end: end_of(mid),
            })
            .is_ok()
            {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let end = end_of(lo);
        bands.push(Band { start, end });
        start = end;
    }
    if bands.is_empty() {
        bands.push(Band { start: 0, end: 0 });
    }
    Ok(bands)
}
