//! Extraction of the weights from NVIDIA's `nvngx_dlssnr.dll` (spec nr-network §3.7) into a model
//! directory of our own format (§3.1).
//!
//! The DLL is only ever read as bytes: the PE headers, the section table and the resource tree are
//! parsed here to find the RCDATA resource `WEIGHTS_HT`; nothing is loaded or executed. The resource
//! is a container of 153 records whose every length field, name and pad word is checked; anything
//! but exactly the known record set with the known sizes ([`layout::records`]) is refused with an
//! error that names the byte offset and the field. The model directory is then written with the
//! reference packing (11 stage files) and a manifest with SHA-256, into a temporary directory that
//! is renamed into place only when complete.
//!
//! This module owns the PE and container formats; the model directory format itself belongs to
//! `manifest` / `load`.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use openngx::model::blocks::{BLOCK_COUNT, STAGES};
use openngx::model::layout::{self, Param, RecordId, RECORD_COUNT};
use openngx::model::manifest::{Manifest, Stage, Tensor, Totals};
use openngx::model::ModelError;

/// Resource type id of RCDATA.
pub const RT_RCDATA: u32 = 10;
/// Name of the weights resource.
pub const RESOURCE_NAME: &str = "WEIGHTS_HT";
/// Longest record name the container may hold.
pub const MAX_NAME_LEN: u64 = 128;
/// Bytes of the per-record header (u64 size, u64 dataLength, u32 1) and of the trailer
/// (u64 0, u64 1, u32 dataLength/2).
pub const RECORD_PAD: usize = 20;

/// Why a DLL or its weights container was refused.
#[derive(Debug, thiserror::Error)]
pub enum DllError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The PE structure is malformed (offset = file offset of the field).
    #[error("PE file offset {offset:#x}: {field}: {reason}")]
    Pe {
        offset: u64,
        field: String,
        reason: String,
    },
    /// The PE is well formed but has no usable `WEIGHTS_HT` RCDATA resource.
    #[error("no RCDATA resource `WEIGHTS_HT`: {reason}")]
    MissingResource { reason: String },
    /// The container inside the resource is malformed (offset = offset inside the resource;
    /// `file_offset` = the same byte in the DLL).
    #[error(
        "WEIGHTS_HT offset {offset} (file offset {file_offset:#x}){}: {field}: {reason}",
        record.map(|r| format!(", record {r}")).unwrap_or_default()
    )]
    Container {
        offset: u64,
        file_offset: u64,
        /// 0-based index of the record being read, if any.
        record: Option<usize>,
        field: String,
        reason: String,
    },
    /// Writing the model directory failed.
    #[error(transparent)]
    Model(#[from] ModelError),
}

fn pe_err(offset: usize, field: impl Into<String>, reason: impl Into<String>) -> DllError {
    DllError::Pe {
        offset: offset as u64,
        field: field.into(),
        reason: reason.into(),
    }
}

/// Little-endian reads that report the field they were reading when the file is too short.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn slice(&self, at: usize, len: usize, field: &str) -> Result<&'a [u8], DllError> {
        at.checked_add(len)
            .and_then(|end| self.bytes.get(at..end))
            .ok_or_else(|| {
                pe_err(
                    at,
                    field,
                    format!(
                        "needs {len} bytes, the file ends at {:#x}",
                        self.bytes.len()
                    ),
                )
            })
    }
    fn u16(&self, at: usize, field: &str) -> Result<u16, DllError> {
        let b = self.slice(at, 2, field)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&self, at: usize, field: &str) -> Result<u32, DllError> {
        let b = self.slice(at, 4, field)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// One entry of the section table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub virtual_address: u32,
    pub virtual_size: u32,
    pub raw_offset: u32,
    pub raw_size: u32,
}

/// The parts of a PE file the extractor needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeImage {
    pub sections: Vec<Section>,
    /// RVA and size of the resource directory (data directory 2); RVA 0 = none.
    pub resource_rva: u32,
    pub resource_size: u32,
}

impl PeImage {
    /// Parse the DOS header, the PE/COFF header, the optional header's data directories and the
    /// section table.
    pub fn parse(pe: &[u8]) -> Result<PeImage, DllError> {
        let r = Reader { bytes: pe };
        if r.slice(0, 2, "DOS header e_magic")? != b"MZ" {
            return Err(pe_err(0, "DOS header e_magic", "not `MZ`: not a PE file"));
        }
        let nt = r.u32(0x3C, "DOS header e_lfanew")? as usize;
        if r.slice(nt, 4, "PE signature")? != b"PE\0\0" {
            return Err(pe_err(nt, "PE signature", "not `PE\\0\\0`"));
        }
        let coff = nt + 4;
        let n_sections = r.u16(coff + 2, "COFF NumberOfSections")? as usize;
        let opt_size = r.u16(coff + 16, "COFF SizeOfOptionalHeader")? as usize;
        let opt = coff + 20;
        let magic = r.u16(opt, "optional header Magic")?;
        // Data directories start after the fixed fields, which differ between PE32 and PE32+.
        let (count_at, dirs_at) = match magic {
            0x10B => (opt + 92, opt + 96),
            0x20B => (opt + 108, opt + 112),
            m => {
                return Err(pe_err(
                    opt,
                    "optional header Magic",
                    format!("{m:#x} is neither PE32 (0x10b) nor PE32+ (0x20b)"),
                ))
            }
        };
        let n_dirs = r.u32(count_at, "optional header NumberOfRvaAndSizes")? as usize;
        let (resource_rva, resource_size) = if n_dirs > 2 {
            let at = dirs_at + 2 * 8;
            if at + 8 > opt + opt_size {
                return Err(pe_err(
                    at,
                    "resource data directory",
                    format!("lies outside the optional header ({opt_size} bytes)"),
                ));
            }
            (
                r.u32(at, "resource data directory RVA")?,
                r.u32(at + 4, "resource data directory Size")?,
            )
        } else {
            (0, 0)
        };
        let table = opt + opt_size;
        let mut sections = Vec::with_capacity(n_sections);
        for i in 0..n_sections {
            let at = table + 40 * i;
            let field = |f: &str| format!("section[{i}] {f}");
            let raw_name = r.slice(at, 8, &field("Name"))?;
            let end = raw_name.iter().position(|&b| b == 0).unwrap_or(8);
            let s = Section {
                name: String::from_utf8_lossy(&raw_name[..end]).into_owned(),
                virtual_size: r.u32(at + 8, &field("VirtualSize"))?,
                virtual_address: r.u32(at + 12, &field("VirtualAddress"))?,
                raw_size: r.u32(at + 16, &field("SizeOfRawData"))?,
                raw_offset: r.u32(at + 20, &field("PointerToRawData"))?,
            };
            let raw_end = s.raw_offset as u64 + s.raw_size as u64;
            if raw_end > pe.len() as u64 {
                return Err(pe_err(
                    at + 16,
                    field("SizeOfRawData"),
                    format!(
                        "raw data {:#x}..{raw_end:#x} runs past the end of the file ({:#x})",
                        s.raw_offset,
                        pe.len()
                    ),
                ));
            }
            sections.push(s);
        }
        Ok(PeImage {
            sections,
            resource_rva,
            resource_size,
        })
    }

    /// File offset of the `len` bytes at `rva`; they must lie inside one section's raw data (bytes
    /// that exist only in memory — past SizeOfRawData — cannot be read from the file).
    pub fn rva_to_offset(&self, rva: u32, len: u64) -> Option<usize> {
        self.locate(rva, len).map(|(offset, _)| offset)
    }

    /// [`PeImage::rva_to_offset`] and the section that backs the bytes. Sections may overlap in
    /// RVA (a hostile or broken table): the first one whose raw data holds all `len` bytes is
    /// used, and every later bound is taken from that same section.
    fn locate(&self, rva: u32, len: u64) -> Option<(usize, &Section)> {
        self.sections.iter().find_map(|s| {
            let rel = rva.checked_sub(s.virtual_address)? as u64;
            if rel >= s.virtual_size.max(s.raw_size) as u64 {
                return None;
            }
            (rel + len <= s.raw_size as u64).then(|| (s.raw_offset as usize + rel as usize, s))
        })
    }

    /// The section containing `rva`, if any (for messages).
    fn section_of(&self, rva: u32) -> Option<&Section> {
        self.sections.iter().find(|s| {
            rva.checked_sub(s.virtual_address)
                .is_some_and(|rel| rel < s.virtual_size.max(s.raw_size))
        })
    }
}

const ENTRY_IS_DIR: u32 = 0x8000_0000;

/// Entries of the resource directory at `dir` (offset relative to the tree start): `(id or name
/// offset with its high bit, child offset with its high bit, entry offset)`.
fn dir_entries(
    tree: &Reader,
    base: usize,
    dir: usize,
    what: &str,
) -> Result<Vec<(u32, u32, usize)>, DllError> {
    let rebase = |e: DllError| match e {
        DllError::Pe {
            offset,
            field,
            reason,
        } => DllError::Pe {
            offset: offset + base as u64,
            field,
            reason,
        },
        other => other,
    };
    let named = tree
        .u16(dir + 12, &format!("{what} NumberOfNamedEntries"))
        .map_err(rebase)? as usize;
    let ids = tree
        .u16(dir + 14, &format!("{what} NumberOfIdEntries"))
        .map_err(rebase)? as usize;
    let mut out = Vec::with_capacity(named + ids);
    for i in 0..named + ids {
        let at = dir + 16 + 8 * i;
        let key = tree
            .u32(at, &format!("{what} entry {i} Name"))
            .map_err(rebase)?;
        let child = tree
            .u32(at + 4, &format!("{what} entry {i} OffsetToData"))
            .map_err(rebase)?;
        out.push((key, child, at));
    }
    Ok(out)
}

/// Where the weights resource was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceLoc {
    /// File offset of the first byte.
    pub offset: usize,
    pub len: usize,
    /// Language id of the entry used.
    pub language: u32,
}

/// Find the RCDATA resource named `WEIGHTS_HT` (name compared case-insensitively, as Windows'
/// `FindResource` does). With several languages the first entry (lowest id) is used.
pub fn find_weights_resource(pe: &[u8]) -> Result<ResourceLoc, DllError> {
    let image = PeImage::parse(pe)?;
    if image.resource_rva == 0 {
        return Err(DllError::MissingResource {
            reason: "the PE has no resource directory (data directory 2 is empty)".into(),
        });
    }
    let not_backed = || {
        pe_err(
            0,
            "resource data directory RVA",
            format!(
                "RVA {:#x} is not backed by any section's raw data",
                image.resource_rva
            ),
        )
    };
    let (base, section) = image
        .locate(image.resource_rva, 16)
        .ok_or_else(not_backed)?;
    // Offsets inside the tree are relative to its start; bound them by the raw data of the
    // section that holds the start (not merely the first section whose RVA range contains it:
    // with overlapping sections those differ, and the range could be reversed).
    let section_end = section.raw_offset as usize + section.raw_size as usize;
    let tree = Reader {
        bytes: pe.get(base..section_end).ok_or_else(not_backed)?,
    };
    let sub = |child: u32, at: usize, what: &str| -> Result<usize, DllError> {
        if child & ENTRY_IS_DIR == 0 {
            return Err(pe_err(
                base + at + 4,
                format!("{what} OffsetToData"),
                "points at a data entry where a subdirectory is expected",
            ));
        }
        Ok((child & !ENTRY_IS_DIR) as usize)
    };

    // Level 1: resource types.
    let types = dir_entries(&tree, base, 0, "resource root")?;
    let Some(&(_, child, at)) = types.iter().find(|(k, _, _)| *k == RT_RCDATA) else {
        return Err(DllError::MissingResource {
            reason: "the resource tree has no RCDATA (type 10) directory".into(),
        });
    };
    let names_dir = sub(child, at, "RCDATA type entry")?;

    // Level 2: names.
    let mut found = None;
    for (key, child, at) in dir_entries(&tree, base, names_dir, "RCDATA directory")? {
        if key & ENTRY_IS_DIR == 0 {
            continue; // an integer id, not a name
        }
        let name_at = (key & !ENTRY_IS_DIR) as usize;
        let field = "RCDATA name string";
        let len = tree
            .u16(name_at, field)
            .map_err(|_| pe_err(base + name_at, field, "runs past the resource section"))?
            as usize;
        let units = tree
            .slice(name_at + 2, 2 * len, field)
            .map_err(|_| pe_err(base + name_at, field, "runs past the resource section"))?;
        let name: String = char::decode_utf16(
            units
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]])),
        )
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
        if name.eq_ignore_ascii_case(RESOURCE_NAME) {
            found = Some(sub(child, at, "WEIGHTS_HT name entry")?);
            break;
        }
    }
    let Some(lang_dir) = found else {
        return Err(DllError::MissingResource {
            reason: "the RCDATA directory has no entry named WEIGHTS_HT".into(),
        });
    };

    // Level 3: languages -> data entry.
    let langs = dir_entries(&tree, base, lang_dir, "WEIGHTS_HT language directory")?;
    let Some(&(language, child, at)) = langs.first() else {
        return Err(DllError::MissingResource {
            reason: "the WEIGHTS_HT directory has no language entry".into(),
        });
    };
    if child & ENTRY_IS_DIR != 0 {
        return Err(pe_err(
            base + at + 4,
            "WEIGHTS_HT language entry OffsetToData",
            "points at a subdirectory where a data entry is expected",
        ));
    }
    let entry = child as usize;
    let rebase = |e: DllError| match e {
        DllError::Pe { field, .. } => pe_err(
            base + entry,
            field,
            "data entry runs past the resource section",
        ),
        other => other,
    };
    let data_rva = tree
        .u32(entry, "WEIGHTS_HT data entry OffsetToData")
        .map_err(rebase)?;
    let size = tree
        .u32(entry + 4, "WEIGHTS_HT data entry Size")
        .map_err(rebase)?;
    let offset = image.rva_to_offset(data_rva, size as u64).ok_or_else(|| {
        pe_err(
            base + entry,
            "WEIGHTS_HT data entry OffsetToData",
            format!(
                "RVA {data_rva:#x} + {size} bytes is not inside one section's raw data{}",
                image
                    .section_of(data_rva)
                    .map(|s| format!(
                        " (section `{}` maps RVA {:#x}, {} raw bytes at file offset {:#x})",
                        s.name, s.virtual_address, s.raw_size, s.raw_offset
                    ))
                    .unwrap_or_default()
            ),
        )
    })?;
    Ok(ResourceLoc {
        offset,
        len: size as usize,
        language: language & !ENTRY_IS_DIR,
    })
}

/// One record found in the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerRecord {
    pub id: RecordId,
    /// The data bytes, as a range of the container.
    pub data: Range<usize>,
}

/// Parse `block<B>.layer<L>.<layer|blend_scale>` strictly (decimal, no sign, no leading zeros).
pub fn parse_record_name(name: &str) -> Option<RecordId> {
    let num = |s: &str| -> Option<usize> {
        let ok = !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && (s == "0" || !s.starts_with('0'))
            && s.len() <= 6;
        ok.then(|| s.parse().ok()).flatten()
    };
    let rest = name.strip_prefix("block")?;
    let (block, rest) = rest.split_once(".layer")?;
    let (layer, param) = rest.split_once('.')?;
    Some(RecordId {
        block: num(block)?,
        layer: num(layer)?,
        param: Param::parse(param)?,
    })
}

/// Parse the `WEIGHTS_HT` container: exactly the 153 records of [`layout::records`] (in any
/// order, each once) with their known sizes. `file_offset` is where the container starts in the
/// DLL (for messages only).
pub fn parse_container(bytes: &[u8], file_offset: usize) -> Result<Vec<ContainerRecord>, DllError> {
    let err =
        |offset: usize, record: Option<usize>, field: &str, reason: String| DllError::Container {
            offset: offset as u64,
            file_offset: (file_offset + offset) as u64,
            record,
            field: field.to_string(),
            reason,
        };
    let u64_at = |at: usize, record: Option<usize>, field: &str| -> Result<u64, DllError> {
        at.checked_add(8)
            .and_then(|end| bytes.get(at..end))
            .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .ok_or_else(|| {
                err(
                    at,
                    record,
                    field,
                    format!("needs 8 bytes, the container ends at {}", bytes.len()),
                )
            })
    };
    let u32_at = |at: usize, record: Option<usize>, field: &str| -> Result<u32, DllError> {
        at.checked_add(4)
            .and_then(|end| bytes.get(at..end))
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| {
                err(
                    at,
                    record,
                    field,
                    format!("needs 4 bytes, the container ends at {}", bytes.len()),
                )
            })
    };
    let expect64 = |at: usize, rec: usize, field: &str, want: u64| -> Result<(), DllError> {
        let v = u64_at(at, Some(rec), field)?;
        if v != want {
            return Err(err(
                at,
                Some(rec),
                field,
                format!("is {v}, expected {want}"),
            ));
        }
        Ok(())
    };

    let total = u64_at(0, None, "total length")?;
    if total != bytes.len() as u64 {
        return Err(err(
            0,
            None,
            "total length",
            format!("is {total}, the resource holds {} bytes", bytes.len()),
        ));
    }
    let mut seen: HashMap<RecordId, usize> = HashMap::new();
    let mut out = Vec::with_capacity(RECORD_COUNT);
    let mut at = 8usize;
    while at < bytes.len() {
        let rec = out.len();
        if rec == RECORD_COUNT {
            return Err(err(
                at,
                Some(rec),
                "record count",
                format!(
                    "{} bytes follow the {RECORD_COUNT}th record; the model has exactly {RECORD_COUNT} records",
                    bytes.len() - at
                ),
            ));
        }
        let name_len = u64_at(at, Some(rec), "name length")?;
        if !(1..=MAX_NAME_LEN).contains(&name_len) {
            return Err(err(
                at,
                Some(rec),
                "name length",
                format!("is {name_len}, expected 1..={MAX_NAME_LEN}"),
            ));
        }
        let name_at = at + 8;
        let raw = bytes
            .get(name_at..name_at + name_len as usize)
            .ok_or_else(|| {
                err(
                    name_at,
                    Some(rec),
                    "name",
                    format!("{name_len} bytes run past the container end"),
                )
            })?;
        let name = std::str::from_utf8(raw)
            .map_err(|e| err(name_at, Some(rec), "name", format!("is not UTF-8: {e}")))?;
        let id = parse_record_name(name).ok_or_else(|| {
            err(
                name_at,
                Some(rec),
                "name",
                format!(
                    "`{}` is not block<B>.layer<L>.<layer|blend_scale>",
                    name.escape_debug()
                ),
            )
        })?;
        let index = layout::record_index(id).ok_or_else(|| {
            err(
                name_at,
                Some(rec),
                "name",
                format!("`{name}` is not a record of the DLSS-NR model"),
            )
        })?;
        if let Some(first) = seen.insert(id, rec) {
            return Err(err(
                name_at,
                Some(rec),
                "name",
                format!("`{name}` appears twice (first as record {first})"),
            ));
        }
        let want_len = layout::records()[index].len;

        let size_at = name_at + name_len as usize;
        let size = u64_at(size_at, Some(rec), "size")?;
        expect64(size_at + 8, rec, "header size", size)?;
        let data_len_at = size_at + 16;
        let data_len = u64_at(data_len_at, Some(rec), "header dataLength")?;
        if data_len % 2 != 0 {
            return Err(err(
                data_len_at,
                Some(rec),
                "header dataLength",
                format!("`{name}`: {data_len} is odd (the data is f16-aligned)"),
            ));
        }
        if data_len != want_len as u64 {
            return Err(err(
                data_len_at,
                Some(rec),
                "header dataLength",
                format!("`{name}`: {data_len} bytes, the model's record has {want_len}"),
            ));
        }
        if size != data_len + 2 * RECORD_PAD as u64 {
            return Err(err(
                size_at,
                Some(rec),
                "size",
                format!(
                    "is {size}, expected dataLength + 40 = {}",
                    data_len + 2 * RECORD_PAD as u64
                ),
            ));
        }
        let one_at = size_at + 24;
        let one = u32_at(one_at, Some(rec), "header word")?;
        if one != 1 {
            return Err(err(
                one_at,
                Some(rec),
                "header word",
                format!("is {one}, expected 1"),
            ));
        }
        let data_at = one_at + 4;
        let data_end = data_at + want_len;
        if data_end > bytes.len() {
            return Err(err(
                data_at,
                Some(rec),
                "data",
                format!(
                    "`{name}`: {want_len} bytes run past the container end ({})",
                    bytes.len()
                ),
            ));
        }
        expect64(data_end, rec, "trailer word 0", 0)?;
        expect64(data_end + 8, rec, "trailer word 1", 1)?;
        let half_at = data_end + 16;
        let halves = u32_at(half_at, Some(rec), "trailer element count")?;
        if halves as u64 != data_len / 2 {
            return Err(err(
                half_at,
                Some(rec),
                "trailer element count",
                format!("is {halves}, expected dataLength/2 = {}", data_len / 2),
            ));
        }
        out.push(ContainerRecord {
            id,
            data: data_at..data_end,
        });
        at = half_at + 4;
    }
    if out.len() != RECORD_COUNT {
        let missing = layout::records()
            .iter()
            .find(|r| !seen.contains_key(&r.id))
            .map(|r| r.id.name())
            .unwrap_or_default();
        return Err(err(
            bytes.len(),
            None,
            "record count",
            format!(
                "the container ends after {} records, expected {RECORD_COUNT} (first missing: `{missing}`)",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// The model in memory, packed like the reference (11 stages in [`STAGES`] order).
#[derive(Debug, Clone)]
pub struct Extracted {
    pub resource: ResourceLoc,
    /// SHA-256 (hex) of the whole `WEIGHTS_HT` resource.
    pub resource_sha256: String,
    pub stages: Vec<(String, Vec<u8>)>,
    pub manifest: Manifest,
}

/// Find, check and repack the weights of a DLL held in memory. `source` names it in the
/// manifest's `generator`.
pub fn extract(pe: &[u8], source: &str) -> Result<Extracted, DllError> {
    let resource = find_weights_resource(pe)?;
    // find_weights_resource proved the range lies in a section's raw data, inside the file;
    // checked anyway, since a panic here would be a crash on a user's file.
    let container = resource
        .offset
        .checked_add(resource.len)
        .and_then(|end| pe.get(resource.offset..end))
        .ok_or_else(|| {
            pe_err(
                resource.offset,
                "WEIGHTS_HT data",
                format!("{} bytes run past the end of the file", resource.len),
            )
        })?;
    let records = parse_container(container, resource.offset)?;
    let by_id: HashMap<RecordId, Range<usize>> =
        records.into_iter().map(|r| (r.id, r.data)).collect();

    let mut stages = Vec::with_capacity(STAGES.len());
    let mut tensors = Vec::with_capacity(RECORD_COUNT);
    for stage in STAGES {
        let mut buf = Vec::new();
        for spec in layout::records().iter().filter(|r| r.stage == stage) {
            // parse_container proved every record of the table is present once, inside the
            // container; a miss would be a bug here, reported rather than panicking.
            let data = by_id
                .get(&spec.id)
                .and_then(|range| container.get(range.clone()))
                .ok_or_else(|| DllError::Container {
                    offset: 0,
                    file_offset: resource.offset as u64,
                    record: None,
                    field: spec.id.name(),
                    reason: "record not found after parsing".into(),
                })?;
            tensors.push(Tensor {
                name: spec.id.name(),
                block: spec.id.block as u64,
                layer: spec.id.layer as u64,
                parameter: spec.id.param.as_str().to_string(),
                stage: stage.to_string(),
                stage_offset: buf.len() as u64,
                byte_length: spec.len as u64,
            });
            buf.extend_from_slice(data);
        }
        stages.push((stage.to_string(), buf));
    }
    let shas: Vec<String> = stages
        .par_iter()
        .map(|(_, b)| hex::encode(Sha256::digest(b)))
        .collect();
    let resource_sha256 = hex::encode(Sha256::digest(container));
    let manifest = Manifest {
        generator: Some(format!(
            "openngx extract-model ({source}, WEIGHTS_HT sha256 {resource_sha256})"
        )),
        network: None,
        totals: Totals {
            block_count: BLOCK_COUNT as u64,
            tensor_count: Some(RECORD_COUNT as u64),
            byte_length: Some(stages.iter().map(|(_, b)| b.len() as u64).sum()),
        },
        stages: stages
            .iter()
            .zip(shas)
            .map(|((id, b), sha256)| Stage {
                id: id.clone(),
                file: id.clone(),
                packed_byte_length: b.len() as u64,
                sha256,
            })
            .collect(),
        tensors,
    };
    // The manifest is built from the same table the validator checks; checking anyway keeps a
    // future edit here from writing a directory the loader refuses.
    manifest.validate()?;
    Ok(Extracted {
        resource,
        resource_sha256,
        stages,
        manifest,
    })
}

/// The largest DLL read (NVIDIA's DLSS DLLs are tens to hundreds of MiB).
pub const DLL_LIMIT: u64 = 2 << 30;

fn io_err(path: &Path, source: std::io::Error) -> DllError {
    DllError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Read `dll`, extract its weights and write the model directory `out` atomically (a temporary
/// directory beside `out` renamed into place when whole). A non-empty `out` is refused unless
/// `force`, and even then replaced only once the new directory is complete.
pub fn extract_to_dir(dll: &Path, out: &Path, force: bool) -> Result<Extracted, DllError> {
    // Check everything before the first byte is read or written.
    let target = crate::model_write::OutDir::check(out, force)?;
    let pe = read_dll(dll)?;
    let source = dll
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dll.display().to_string());
    let ex = extract(&pe, &source)?;
    drop(pe);
    let files: Vec<(String, &[u8])> = ex
        .stages
        .iter()
        .map(|(id, bytes)| (id.clone(), bytes.as_slice()))
        .collect();
    target.write(&files, &ex.manifest)?;
    Ok(ex)
}

/// The whole of a user's DLL, read as an untrusted file: a regular file only (checked on the
/// descriptor, a FIFO cannot block), and never more than [`DLL_LIMIT`] bytes (`--dll /dev/zero` is
/// refused at once).
pub fn read_dll(dll: &Path) -> Result<Vec<u8>, DllError> {
    openngx::model::file::read_regular(dll, DLL_LIMIT).map_err(|e| {
        io_err(
            dll,
            match e {
                openngx::model::file::UntrustedRead::Io(e) => e,
                other => std::io::Error::new(std::io::ErrorKind::InvalidInput, other.to_string()),
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_names() {
        assert_eq!(
            parse_record_name("block70.layer0.blend_scale"),
            Some(RecordId::BLEND_SCALE)
        );
        assert_eq!(
            parse_record_name("block31.layer4.layer"),
            Some(RecordId::layer(31, 4))
        );
        for bad in [
            "",
            "block.layer0.layer",
            "block01.layer0.layer",
            "block+1.layer0.layer",
            "block1.layer0.bias",
            "block1.layer0",
            "Block1.layer0.layer",
            "block1.layer0.layer.",
            "block1.layer 0.layer",
        ] {
            assert_eq!(parse_record_name(bad), None, "{bad:?}");
        }
    }
}

#[cfg(test)]
mod untrusted_input_tests {
    use super::*;

    /// `extract-model --dll /dev/zero` (or a FIFO) is refused at once, nothing read or written.
    #[test]
    fn a_device_or_fifo_dll_is_refused_without_reading() {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("model");
        let e = extract_to_dir(Path::new("/dev/zero"), &out, false).err();
        assert!(
            e.as_ref()
                .is_some_and(|e| e.to_string().contains("not a regular file")),
            "{e:?}"
        );
        assert!(!out.exists(), "nothing written");
    }
}
