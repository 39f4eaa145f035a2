//! `NVSDK_NGX_Resource_VK` inputs: copying one out of a parameter (`SetVoidPointer` value) during
//! the call and checking it for a role — resource type, format, read-write flag and the region
//! the feature touches. The format lists are each feature description's.

use std::ffi::CStr;

use ash::vk;

use super::abi::*;
use super::params::ParamRef;
use crate::feature::{FeatureError, ImageInput, Rect};

/// What a resource is used for: the formats accepted, and whether the feature writes it (then
/// it must be read-write, and a wrong format is an output-format error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Read by the feature.
    Input(&'static [vk::Format]),
    /// Written by the feature.
    Output(&'static [vk::Format]),
}

impl Role {
    /// Formats the role accepts.
    pub fn formats(self) -> &'static [vk::Format] {
        match self {
            Role::Input(f) | Role::Output(f) => f,
        }
    }

    fn is_output(self) -> bool {
        matches!(self, Role::Output(_))
    }
}

/// Reads the `NVSDK_NGX_Resource_VK*` stored under `key`. `Ok(None)` when the key is missing or
/// holds NULL; an error when it holds something that is not a pointer.
pub fn read_resource(
    params: &ParamRef,
    key: &CStr,
) -> Result<Option<NVSDK_NGX_Resource_VK>, FeatureError> {
    match params.get_vp(key) {
        Ok(p) if p.is_null() => Ok(None),
        // SAFETY: the Vulkan NGX contract: values of resource keys are `NVSDK_NGX_Resource_VK*`
        // that stay valid for the duration of the call; the struct is copied immediately
        // (unaligned read: the caller owns its alignment).
        Ok(p) => Ok(Some(unsafe {
            (p as *const NVSDK_NGX_Resource_VK).read_unaligned()
        })),
        Err(NVSDK_NGX_Result_Fail) => Ok(None),
        Err(_) => Err(FeatureError::InvalidParameter {
            key: key.to_string_lossy().into_owned(),
            reason: "must be set with SetVoidPointer to a NVSDK_NGX_Resource_VK".into(),
        }),
    }
}

/// Checks a resource for `role` and the region `rect` the feature will touch.
pub fn check_image(
    key: &str,
    role: Role,
    res: &NVSDK_NGX_Resource_VK,
    rect: Rect,
) -> Result<ImageInput, FeatureError> {
    if res.Type != NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW {
        return Err(FeatureError::InvalidParameter {
            key: key.into(),
            reason: format!("resource type {} is not an image view (0)", res.Type),
        });
    }
    // SAFETY: Type says the image-view member is the valid one.
    let info = unsafe { res.Resource.ImageViewInfo };
    if info.ImageView == vk::ImageView::null() || info.Image == vk::Image::null() {
        return Err(FeatureError::InvalidParameter {
            key: key.into(),
            reason: "VkImageView or VkImage is VK_NULL_HANDLE".into(),
        });
    }
    if !role.formats().contains(&info.Format) {
        return Err(if role.is_output() {
            FeatureError::UnsupportedOutputFormat {
                key: key.into(),
                format: info.Format,
            }
        } else {
            FeatureError::UnsupportedInputFormat {
                key: key.into(),
                format: info.Format,
            }
        });
    }
    if role.is_output() && !res.ReadWrite {
        return Err(FeatureError::NotReadWrite { key: key.into() });
    }
    let fits_x = rect
        .x
        .checked_add(rect.width)
        .is_some_and(|e| e <= info.Width);
    let fits_y = rect
        .y
        .checked_add(rect.height)
        .is_some_and(|e| e <= info.Height);
    if !fits_x || !fits_y {
        return Err(FeatureError::InvalidParameter {
            key: key.into(),
            reason: format!(
                "image is {}x{} but the feature needs {}x{} at ({}, {})",
                info.Width, info.Height, rect.width, rect.height, rect.x, rect.y
            ),
        });
    }
    Ok(ImageInput {
        view: info.ImageView,
        image: info.Image,
        subresource: info.SubresourceRange,
        format: info.Format,
        width: info.Width,
        height: info.Height,
        read_write: res.ReadWrite,
        rect,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ngx::dlss_nr::roles;
    use crate::ngx::result::ResultCode;
    use ash::vk::Handle;

    fn res(format: vk::Format, w: u32, h: u32, rw: bool) -> NVSDK_NGX_Resource_VK {
        NVSDK_NGX_Resource_VK {
            Resource: NVSDK_NGX_Resource_VK_Resource {
                ImageViewInfo: NVSDK_NGX_ImageViewInfo_VK {
                    ImageView: vk::ImageView::from_raw(1),
                    Image: vk::Image::from_raw(2),
                    SubresourceRange: vk::ImageSubresourceRange::default(),
                    Format: format,
                    Width: w,
                    Height: h,
                },
            },
            Type: NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW,
            ReadWrite: rw,
        }
    }

    const R: Rect = Rect {
        x: 0,
        y: 0,
        width: 64,
        height: 64,
    };

    #[test]
    fn formats_and_sizes_map_to_their_codes() {
        let ok = check_image(
            "c",
            roles::COLOR,
            &res(vk::Format::A2B10G10R10_UNORM_PACK32, 64, 64, false),
            R,
        )
        .expect("accepted");
        assert_eq!((ok.width, ok.rect), (64, R));
        let e = check_image(
            "c",
            roles::COLOR,
            &res(vk::Format::B8G8R8A8_UNORM, 64, 64, false),
            R,
        )
        .expect_err("bgra");
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_UnsupportedInputFormat);
        let e = check_image(
            "o",
            roles::OUTPUT,
            &res(vk::Format::R8G8B8A8_SRGB, 64, 64, true),
            R,
        )
        .expect_err("srgb out");
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_UnsupportedFormat);
        let e = check_image(
            "o",
            roles::OUTPUT,
            &res(vk::Format::R16G16B16A16_SFLOAT, 64, 64, false),
            R,
        )
        .expect_err("ro");
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_RWFlagMissing);
        let e = check_image(
            "c",
            roles::COLOR,
            &res(vk::Format::R16G16B16A16_SFLOAT, 63, 64, false),
            R,
        )
        .expect_err("small");
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_InvalidParameter);
        assert!(e.to_string().contains("63x64"), "{e}");
        let off = Rect { x: u32::MAX, ..R };
        assert!(check_image(
            "c",
            roles::COLOR,
            &res(vk::Format::R16G16B16A16_SFLOAT, 64, 64, false),
            off
        )
        .is_err());
        let mut buf = res(vk::Format::R16G16B16A16_SFLOAT, 64, 64, true);
        buf.Type = NVSDK_NGX_RESOURCE_VK_TYPE_VK_BUFFER;
        assert_eq!(
            check_image("o", roles::OUTPUT, &buf, R)
                .map_err(|e| e.code())
                .err(),
            Some(NVSDK_NGX_Result_FAIL_InvalidParameter)
        );
        let e = check_image(
            "m",
            roles::MOTION,
            &res(vk::Format::R16G16B16A16_SFLOAT, 64, 64, false),
            R,
        )
        .expect_err("rgba mv");
        assert_eq!(e.code(), NVSDK_NGX_Result_FAIL_UnsupportedInputFormat);
    }
}
