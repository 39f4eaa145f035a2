//! PNG in and out: proxy images for fixtures and the demo, side-by-side pictures for people.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// Why a PNG could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: PNG decoding failed: {detail}")]
    Decode { path: String, detail: String },
    #[error("{path}: PNG encoding failed: {detail}")]
    Encode { path: String, detail: String },
    #[error("{path}: image is {got_w}x{got_h}, smaller than the requested {want_w}x{want_h}")]
    TooSmall {
        path: String,
        got_w: u32,
        got_h: u32,
        want_w: u32,
        want_h: u32,
    },
}

/// Read a PNG as RGBA code values in 0..1 (8- or 16-bit; grey and RGB get alpha 1), cropped to
/// the top-left `width x height` (the image must be at least that large).
pub fn read_png_rgba(path: &Path, width: u32, height: u32) -> Result<Vec<[f32; 4]>, ImageError> {
    let p = path.display().to_string();
    let file = File::open(path).map_err(|source| ImageError::Io {
        path: p.clone(),
        source,
    })?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| ImageError::Decode {
        path: p.clone(),
        detail: e.to_string(),
    })?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| ImageError::Decode {
            path: p.clone(),
            detail: "image too large".into(),
        })?;
    let mut buf = vec![0u8; size];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| ImageError::Decode {
            path: p.clone(),
            detail: e.to_string(),
        })?;
    if info.width < width || info.height < height {
        return Err(ImageError::TooSmall {
            path: p,
            got_w: info.width,
            got_h: info.height,
            want_w: width,
            want_h: height,
        });
    }
    let channels = info.color_type.samples();
    let sixteen = info.bit_depth == png::BitDepth::Sixteen;
    let sample = |i: usize| -> f32 {
        if sixteen {
            u16::from_be_bytes([buf[2 * i], buf[2 * i + 1]]) as f32 / 65535.0
        } else {
            buf[i] as f32 / 255.0
        }
    };
    let mut out = Vec::with_capacity((width * height) as usize);
    for y in 0..height as usize {
        for x in 0..width as usize {
            let base = (y * info.width as usize + x) * channels;
            let px = match channels {
                1 => [sample(base), sample(base), sample(base), 1.0],
                2 => [sample(base), sample(base), sample(base), sample(base + 1)],
                3 => [sample(base), sample(base + 1), sample(base + 2), 1.0],
                _ => [
                    sample(base),
                    sample(base + 1),
                    sample(base + 2),
                    sample(base + 3),
                ],
            };
            out.push(px);
        }
    }
    Ok(out)
}

/// Write 8-bit RGB pixels (code values 0..1, clamped, rounded) as a PNG.
pub fn write_png_rgb(
    path: &Path,
    width: u32,
    height: u32,
    rgb: &[[f32; 3]],
) -> Result<(), ImageError> {
    let p = path.display().to_string();
    let file = File::create(path).map_err(|source| ImageError::Io {
        path: p.clone(),
        source,
    })?;
    let mut enc = png::Encoder::new(BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(|e| ImageError::Encode {
        path: p.clone(),
        detail: e.to_string(),
    })?;
    let data: Vec<u8> = rgb
        .iter()
        .flat_map(|c| c.map(|v| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8))
        .collect();
    w.write_image_data(&data).map_err(|e| ImageError::Encode {
        path: p,
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trip_and_crop() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("a.png");
        let px: Vec<[f32; 3]> = (0..12)
            .map(|i| [i as f32 / 11.0, 0.5, 1.0 - i as f32 / 11.0])
            .collect();
        write_png_rgb(&path, 4, 3, &px).expect("write");
        let back = read_png_rgba(&path, 2, 2).expect("read");
        assert_eq!(back.len(), 4);
        assert_eq!(back[0], [0.0, 128.0 / 255.0, 1.0, 1.0]);
        assert_eq!(back[2][0], (4.0f32 / 11.0 * 255.0 + 0.5).floor() / 255.0);
        let err = read_png_rgba(&path, 5, 3).expect_err("too small");
        assert!(
            err.to_string().contains("smaller than the requested 5x3"),
            "{err}"
        );
        let err = read_png_rgba(&dir.path().join("missing.png"), 1, 1).expect_err("missing");
        assert!(err.to_string().contains("missing.png"), "{err}");
    }
}
