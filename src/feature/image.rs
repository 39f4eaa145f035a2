//! Typed image inputs: a caller image already checked by the ABI layer (its type, format for
//! the role and the region the feature touches), as plain copied values.

use ash::vk;

/// A rectangle inside an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    /// Left column.
    pub x: u32,
    /// Top row.
    pub y: u32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// One image input or output, copied out of the caller's resource description and checked: the
/// format is one the role accepts and `rect` lies inside the image.
#[derive(Debug, Clone, Copy)]
pub struct ImageInput {
    /// The caller's view.
    pub view: vk::ImageView,
    /// The caller's image.
    pub image: vk::Image,
    /// The subresource the view covers.
    pub subresource: vk::ImageSubresourceRange,
    /// The view format.
    pub format: vk::Format,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Whether the caller declared the image writable (storage usage).
    pub read_write: bool,
    /// The region of the image the feature reads or writes.
    pub rect: Rect,
}
