//! Call sequences on the parameter-map C API: the input is decoded into operations (Init and
//! Shutdown with fake Vulkan handles, which the NGX layer never calls; Allocate / GetCapability /
//! Get / DestroyParameters; every `NVSDK_NGX_Parameter_Set*` / `Get*` accessor; the objects' own
//! virtual methods called as C++ would, `Reset()` included; the capability maps' callbacks),
//! applied to the library's maps, to destroyed (stale) maps, to NULL, to arbitrary addresses
//! (DestroyParameters only compares them) and to parameter objects implemented here (a C++-style
//! object with its own vtable, and one whose vtable pointer is NULL).
//!
//! Checked against a model written from `docs/ngx.md` ("Entry points", "Parameter objects"):
//! every result code; each getter's value for each stored type (C's modular integer
//! conversions, saturating float -> integer, exact same-type reads); outputs untouched on a
//! failure; a destroyed map answers as one (Set ignored, Get `FAIL_InvalidParameter`, a second
//! destroy refused) and no later map ever gets its address; the accessors reach an application's
//! own object through its vtable with the name unchanged. Each input ends with every map
//! destroyed and every device shut down, and the library must then hold nothing.
#![no_main]

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr::{null, null_mut};
use std::sync::Mutex;

use openngx::ngx::abi::*;
use openngx::ngx::exports::*;
use openngx::ngx::param_exports::*;
use openngx::ngx::state;

/// Operations per input, maps made per input (every destroyed map's 24-byte shell is kept for
/// the life of the process, by design: the cap bounds what a long run accumulates).
const MAX_OPS: usize = 256;
const MAX_MAPS: usize = 8;

/// A stored value as the model sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum V {
    Ull(u64),
    F(f32),
    D(f64),
    Ui(u32),
    I(i32),
    D3d11(usize),
    D3d12(usize),
    Vp(usize),
}

/// The eight types, in setter/getter order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    Ull,
    F,
    D,
    Ui,
    I,
    D3d11,
    D3d12,
    Vp,
}

const TYPES: [T; 8] = [T::Ull, T::F, T::D, T::Ui, T::I, T::D3d11, T::D3d12, T::Vp];

/// What a getter of type `t` returns for a stored `v` (`Err` = the result code), written from
/// docs/ngx.md: numeric getters convert between the five numeric types; integer -> integer is
/// C's modular conversion; float/double -> integer saturates (toward zero, clamped, NaN -> 0);
/// integer -> float/double is C's (one rounding); GetULL also reads a `void*` as its address;
/// GetVoidPointer reads only `void*`; the D3D getters their own type or `void*`.
fn expect(v: V, t: T) -> Result<V, NVSDK_NGX_Result> {
    let bad = Err(NVSDK_NGX_Result_FAIL_InvalidParameter);
    Ok(match (t, v) {
        (T::Ull, V::Ull(x)) => V::Ull(x),
        (T::Ull, V::Ui(x)) => V::Ull(u64::from(x)),
        (T::Ull, V::I(x)) => V::Ull(x as i64 as u64),
        (T::Ull, V::F(x)) => V::Ull(x as u64),
        (T::Ull, V::D(x)) => V::Ull(x as u64),
        (T::Ull, V::Vp(p)) => V::Ull(p as u64),
        (T::F, V::Ull(x)) => V::F(x as f32),
        (T::F, V::Ui(x)) => V::F(x as f32),
        (T::F, V::I(x)) => V::F(x as f32),
        (T::F, V::F(x)) => V::F(x),
        (T::F, V::D(x)) => V::F(x as f32),
        (T::D, V::Ull(x)) => V::D(x as f64),
        (T::D, V::Ui(x)) => V::D(f64::from(x)),
        (T::D, V::I(x)) => V::D(f64::from(x)),
        (T::D, V::F(x)) => V::D(f64::from(x)),
        (T::D, V::D(x)) => V::D(x),
        (T::Ui, V::Ull(x)) => V::Ui(x as u32),
        (T::Ui, V::Ui(x)) => V::Ui(x),
        (T::Ui, V::I(x)) => V::Ui(x as u32),
        (T::Ui, V::F(x)) => V::Ui(x as u32),
        (T::Ui, V::D(x)) => V::Ui(x as u32),
        (T::I, V::Ull(x)) => V::I(x as i32),
        (T::I, V::Ui(x)) => V::I(x as i32),
        (T::I, V::I(x)) => V::I(x),
        (T::I, V::F(x)) => V::I(x as i32),
        (T::I, V::D(x)) => V::I(x as i32),
        (T::D3d11, V::D3d11(p) | V::Vp(p)) => V::D3d11(p),
        (T::D3d12, V::D3d12(p) | V::Vp(p)) => V::D3d12(p),
        (T::Vp, V::Vp(p)) => V::Vp(p),
        _ => return bad,
    })
}

/// Equal as a caller sees them: same bits; a converted NaN only needs to stay a NaN (a change of
/// type may quiet it, as a C cast does), a NaN read back as its own type keeps its bits.
fn same(got: V, want: V, stored: V) -> bool {
    match (got, want) {
        (V::F(a), V::F(b)) if b.is_nan() && !matches!(stored, V::F(_)) => a.is_nan(),
        (V::D(a), V::D(b)) if b.is_nan() && !matches!(stored, V::D(_)) => a.is_nan(),
        (V::F(a), V::F(b)) => a.to_bits() == b.to_bits(),
        (V::D(a), V::D(b)) => a.to_bits() == b.to_bits(),
        (a, b) => a == b,
    }
}

// ---------------------------------------------------------------------------------------------
// The input

struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        (self.0.len() >= n).then(|| {
            let (a, b) = self.0.split_at(n);
            self.0 = b;
            a
        })
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }
    /// `len: u8 % 33`, then the bytes (a C string ends at the first NUL, as in C).
    fn c_string(&mut self) -> Option<CString> {
        let n = self.u8()? as usize % 33;
        let b = self.take(n)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        CString::new(&b[..end]).ok()
    }
    /// A value of type `t`.
    fn value(&mut self, t: T) -> Option<V> {
        Some(match t {
            T::Ull => V::Ull(self.u64()?),
            T::F => V::F(f32::from_bits(self.u32()?)),
            T::D => V::D(f64::from_bits(self.u64()?)),
            T::Ui => V::Ui(self.u32()?),
            T::I => V::I(self.u32()? as i32),
            T::D3d11 => V::D3d11(self.u64()? as usize),
            T::D3d12 => V::D3d12(self.u64()? as usize),
            T::Vp => V::Vp(self.u64()? as usize),
        })
    }
    /// A wide string (UTF-32 code units, any value but 0) of up to 8 units, NUL-terminated.
    fn wide(&mut self) -> Option<Vec<wchar_t>> {
        let n = self.u8()? as usize % 9;
        let mut w = Vec::with_capacity(n + 1);
        for _ in 0..n {
            let u = self.u32()?;
            if u != 0 {
                w.push(u as wchar_t);
            }
        }
        w.push(0);
        Some(w)
    }
}

/// Keys chosen by index: the capability keys, create/evaluate keys, odd ones.
const KEYS: [&CStr; 14] = [
    c"DLSSNR.Available",
    c"DLSSNR.FeatureInitResult",
    c"DLSSNRGetStatsCallback",
    c"DLSSNRComputeScalingRatioCallback",
    c"SuperSampling.Available",
    c"Snippet.OptLevel",
    c"DLSSNR.Width",
    c"DLSSNR.Color",
    c"PerfQualityValue",
    c"DLSSNR.ScalingRatio",
    c"SizeInBytes",
    c"#\x44",
    c"",
    c"k",
];

// ---------------------------------------------------------------------------------------------
// A parameter object of the application's own (C++ style: vtable pointer first)

/// The application's object: stores exactly what it is given and answers a getter only for
/// its own stored type (so every answer is distinguishable), and records the last call.
#[repr(C)]
struct Foreign {
    vtable: *const *const c_void,
    map: RefCell<HashMap<Vec<u8>, V>>,
    last: RefCell<Option<(usize, Vec<u8>)>>,
}

/// What [`Foreign`] answers for a type mismatch (an arbitrary failure code the library must
/// pass through unchanged).
const FOREIGN_MISMATCH: NVSDK_NGX_Result = 0xBAD0_0077;

// SAFETY (all the `f_*`): only ever called through FOREIGN_VTABLE, so `this` is a `Foreign`
// that the target keeps alive while calls can reach it; names are C strings from the library.
unsafe fn foreign<'a>(this: *mut NVSDK_NGX_Parameter) -> &'a Foreign {
    // SAFETY: see above.
    unsafe { &*(this as *const Foreign) }
}

fn f_set(this: *mut NVSDK_NGX_Parameter, slot: usize, name: *const c_char, v: V) {
    // SAFETY: see `foreign`.
    let (o, k) = unsafe { (foreign(this), CStr::from_ptr(name).to_bytes().to_vec()) };
    *o.last.borrow_mut() = Some((slot, k.clone()));
    o.map.borrow_mut().insert(k, v);
}

fn f_get<X>(
    this: *mut NVSDK_NGX_Parameter,
    slot: usize,
    name: *const c_char,
    out: *mut X,
    pick: fn(V) -> Option<X>,
) -> NVSDK_NGX_Result {
    // SAFETY: see `foreign`.
    let (o, k) = unsafe { (foreign(this), CStr::from_ptr(name).to_bytes().to_vec()) };
    *o.last.borrow_mut() = Some((slot, k.clone()));
    match o.map.borrow().get(&k).copied() {
        None => NVSDK_NGX_Result_Fail,
        Some(v) => match pick(v) {
            Some(x) => {
                // SAFETY: the library checked `out` against NULL; it is the caller's output.
                unsafe { out.write_unaligned(x) };
                NVSDK_NGX_Result_Success
            }
            None => FOREIGN_MISMATCH,
        },
    }
}

macro_rules! foreign_methods {
    ($($set:ident $get:ident $slot:expr, $ty:ty, $var:ident;)*) => {
        $(
            unsafe extern "C" fn $set(this: *mut NVSDK_NGX_Parameter, name: *const c_char, v: $ty) {
                f_set(this, $slot, name, V::$var(v as _));
            }
            unsafe extern "C" fn $get(
                this: *mut NVSDK_NGX_Parameter,
                name: *const c_char,
                out: *mut $ty,
            ) -> NVSDK_NGX_Result {
                f_get(this, $slot + 8, name, out, |v| match v {
                    V::$var(x) => Some(x as _),
                    _ => None,
                })
            }
        )*
    };
}

foreign_methods! {
    f_set_ull f_get_ull 0, u64, Ull;
    f_set_f f_get_f 1, f32, F;
    f_set_d f_get_d 2, f64, D;
    f_set_ui f_get_ui 3, u32, Ui;
    f_set_i f_get_i 4, i32, I;
    f_set_d3d11 f_get_d3d11 5, *mut c_void, D3d11;
    f_set_d3d12 f_get_d3d12 6, *mut c_void, D3d12;
    f_set_vp f_get_vp 7, *mut c_void, Vp;
}

unsafe extern "C" fn f_reset(this: *mut NVSDK_NGX_Parameter) {
    // SAFETY: see `foreign`.
    let o = unsafe { foreign(this) };
    *o.last.borrow_mut() = Some((16, Vec::new()));
    o.map.borrow_mut().clear();
}

struct Slots([*const c_void; 17]);
// SAFETY: immutable function addresses.
unsafe impl Sync for Slots {}

type SetFn<X> = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter, *const c_char, X);
type GetFn<X> =
    unsafe extern "C" fn(*mut NVSDK_NGX_Parameter, *const c_char, *mut X) -> NVSDK_NGX_Result;
type ResetFn = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter);

static FOREIGN_VTABLE: Slots = Slots([
    f_set_ull as SetFn<u64> as *const c_void,
    f_set_f as SetFn<f32> as *const c_void,
    f_set_d as SetFn<f64> as *const c_void,
    f_set_ui as SetFn<u32> as *const c_void,
    f_set_i as SetFn<i32> as *const c_void,
    f_set_d3d11 as SetFn<*mut c_void> as *const c_void,
    f_set_d3d12 as SetFn<*mut c_void> as *const c_void,
    f_set_vp as SetFn<*mut c_void> as *const c_void,
    f_get_ull as GetFn<u64> as *const c_void,
    f_get_f as GetFn<f32> as *const c_void,
    f_get_d as GetFn<f64> as *const c_void,
    f_get_ui as GetFn<u32> as *const c_void,
    f_get_i as GetFn<i32> as *const c_void,
    f_get_d3d11 as GetFn<*mut c_void> as *const c_void,
    f_get_d3d12 as GetFn<*mut c_void> as *const c_void,
    f_get_vp as GetFn<*mut c_void> as *const c_void,
    f_reset as ResetFn as *const c_void,
]);

// ---------------------------------------------------------------------------------------------
// Calls, by type

/// `NVSDK_NGX_Parameter_Set*`.
///
/// # Safety
/// `p` NULL or a live parameter object (the library's, stale ones included, or a `Foreign`).
unsafe fn c_set(p: *mut NVSDK_NGX_Parameter, k: *const c_char, v: V) {
    // SAFETY: forwarded.
    unsafe {
        match v {
            V::Ull(x) => NVSDK_NGX_Parameter_SetULL(p, k, x),
            V::F(x) => NVSDK_NGX_Parameter_SetF(p, k, x),
            V::D(x) => NVSDK_NGX_Parameter_SetD(p, k, x),
            V::Ui(x) => NVSDK_NGX_Parameter_SetUI(p, k, x),
            V::I(x) => NVSDK_NGX_Parameter_SetI(p, k, x),
            V::D3d11(x) => NVSDK_NGX_Parameter_SetD3d11Resource(p, k, x as *mut _),
            V::D3d12(x) => NVSDK_NGX_Parameter_SetD3d12Resource(p, k, x as *mut _),
            V::Vp(x) => NVSDK_NGX_Parameter_SetVoidPointer(p, k, x as *mut _),
        }
    }
}

/// The sentinel a getter's output holds before the call.
const SENTINEL: u64 = 0x5A5A_1234_A5A5_4321;

/// `NVSDK_NGX_Parameter_Get*`: the code and the output afterwards (`None`: NULL output).
///
/// # Safety
/// As for [`c_set`].
unsafe fn c_get(p: *mut NVSDK_NGX_Parameter, k: *const c_char, t: T, null_out: bool) -> (u32, V) {
    let mut out = SENTINEL;
    let o: *mut u64 = if null_out { null_mut() } else { &mut out };
    // SAFETY: forwarded; every output type fits in the u64 (reads below take its first bytes).
    let r = unsafe {
        match t {
            T::Ull => NVSDK_NGX_Parameter_GetULL(p, k, o),
            T::F => NVSDK_NGX_Parameter_GetF(p, k, o.cast()),
            T::D => NVSDK_NGX_Parameter_GetD(p, k, o.cast()),
            T::Ui => NVSDK_NGX_Parameter_GetUI(p, k, o.cast()),
            T::I => NVSDK_NGX_Parameter_GetI(p, k, o.cast()),
            T::D3d11 => NVSDK_NGX_Parameter_GetD3d11Resource(p, k, o.cast()),
            T::D3d12 => NVSDK_NGX_Parameter_GetD3d12Resource(p, k, o.cast()),
            T::Vp => NVSDK_NGX_Parameter_GetVoidPointer(p, k, o.cast()),
        }
    };
    (r, read_out(out, t))
}

/// The same through the object's own vtable (what C++ code does: `p->Get(name, &out)`).
///
/// # Safety
/// `p` a live parameter object with a vtable (not NULL, not the NULL-vtable object).
unsafe fn vt_get(p: *mut NVSDK_NGX_Parameter, k: *const c_char, t: T) -> (u32, V) {
    let mut out = SENTINEL;
    // SAFETY: forwarded: slot 8 + type is the getter of that type (Itanium order).
    let r = unsafe {
        let f = *(*(p as *const *const *const c_void)).add(8 + t as usize);
        std::mem::transmute::<*const c_void, GetFn<u64>>(f)(p, k, &mut out)
    };
    (r, read_out(out, t))
}

/// # Safety
/// As for [`vt_get`].
unsafe fn vt_set(p: *mut NVSDK_NGX_Parameter, k: *const c_char, v: V) {
    // SAFETY: forwarded: slot `type` is the setter of that type; each is called with its type.
    unsafe {
        let f = *(*(p as *const *const *const c_void)).add(ty(v) as usize);
        match v {
            V::Ull(x) => std::mem::transmute::<*const c_void, SetFn<u64>>(f)(p, k, x),
            V::F(x) => std::mem::transmute::<*const c_void, SetFn<f32>>(f)(p, k, x),
            V::D(x) => std::mem::transmute::<*const c_void, SetFn<f64>>(f)(p, k, x),
            V::Ui(x) => std::mem::transmute::<*const c_void, SetFn<u32>>(f)(p, k, x),
            V::I(x) => std::mem::transmute::<*const c_void, SetFn<i32>>(f)(p, k, x),
            V::D3d11(x) | V::D3d12(x) | V::Vp(x) => {
                std::mem::transmute::<*const c_void, SetFn<*mut c_void>>(f)(p, k, x as *mut _)
            }
        }
    }
}

/// # Safety
/// As for [`vt_get`].
unsafe fn vt_reset(p: *mut NVSDK_NGX_Parameter) {
    // SAFETY: forwarded: slot 16 is Reset().
    unsafe {
        let f = *(*(p as *const *const *const c_void)).add(16);
        std::mem::transmute::<*const c_void, ResetFn>(f)(p)
    }
}

fn ty(v: V) -> T {
    match v {
        V::Ull(_) => T::Ull,
        V::F(_) => T::F,
        V::D(_) => T::D,
        V::Ui(_) => T::Ui,
        V::I(_) => T::I,
        V::D3d11(_) => T::D3d11,
        V::D3d12(_) => T::D3d12,
        V::Vp(_) => T::Vp,
    }
}

fn read_out(out: u64, t: T) -> V {
    let lo = out as u32;
    match t {
        T::Ull => V::Ull(out),
        T::F => V::F(f32::from_bits(lo)),
        T::D => V::D(f64::from_bits(out)),
        T::Ui => V::Ui(lo),
        T::I => V::I(lo as i32),
        T::D3d11 => V::D3d11(out as usize),
        T::D3d12 => V::D3d12(out as usize),
        T::Vp => V::Vp(out as usize),
    }
}

/// The output was not written (a failed get).
fn untouched(out: V) -> bool {
    read_out(SENTINEL, ty(out)) == out
}

// ---------------------------------------------------------------------------------------------
// The model

/// One parameter object the sequence holds a pointer to.
struct Map {
    p: *mut NVSDK_NGX_Parameter,
    /// From GetParameters (the library frees it; DestroyParameters refuses it).
    library: bool,
    /// Pre-filled with the capabilities (Reset fills it again).
    populated: bool,
    alive: bool,
    /// Every key set since it was made or reset.
    known: HashMap<Vec<u8>, V>,
    /// Keys holding values the model does not track (a callback's outputs).
    unknown: HashSet<Vec<u8>>,
    /// False when keys the model has not seen may exist (the capabilities).
    complete: bool,
}

struct Model {
    maps: Vec<Map>,
    made: usize,
    devices: Vec<u64>,
    /// The GetParameters map while a device is initialised.
    library_map: Option<usize>,
    foreign: Box<Foreign>,
    /// An object whose vtable pointer is NULL (the accessors must not call through it).
    no_vtable: Box<NVSDK_NGX_Parameter>,
}

/// Every map address the library ever handed out (bounded: cleared past 4 M entries).
static EVER: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn fresh_address(p: *mut NVSDK_NGX_Parameter) {
    let mut g = EVER.lock().unwrap_or_else(|e| e.into_inner());
    let set = g.get_or_insert_with(HashSet::new);
    if set.len() > 4 << 20 {
        set.clear();
    }
    assert!(
        set.insert(p as usize),
        "a new map got the address {p:?} of an earlier map"
    );
}

const SUCCESS: u32 = NVSDK_NGX_Result_Success;
const INVALID: u32 = NVSDK_NGX_Result_FAIL_InvalidParameter;
const NOT_INIT: u32 = NVSDK_NGX_Result_FAIL_NotInitialized;

/// Which object an operation uses.
enum Target {
    Map(usize),
    Foreign,
    NoVtable,
    Null,
}

impl Model {
    fn target(&self, sel: u8) -> Target {
        match sel % 8 {
            5 => Target::Foreign,
            6 => Target::NoVtable,
            7 => Target::Null,
            _ if self.maps.is_empty() => Target::Null,
            _ => Target::Map(sel as usize / 8 % self.maps.len()),
        }
    }
    fn ptr(&self, t: &Target) -> *mut NVSDK_NGX_Parameter {
        match *t {
            Target::Map(i) => self.maps[i].p,
            Target::Foreign => &*self.foreign as *const Foreign as *mut NVSDK_NGX_Parameter,
            Target::NoVtable => &*self.no_vtable as *const _ as *mut NVSDK_NGX_Parameter,
            Target::Null => null_mut(),
        }
    }

    fn make(&mut self, populated: bool, null_out: bool) {
        let mut p: *mut NVSDK_NGX_Parameter = null_mut();
        let out = if null_out {
            null_mut()
        } else {
            &mut p as *mut _
        };
        // SAFETY: `out` is NULL or a writable pointer.
        let r = unsafe {
            if populated {
                NVSDK_NGX_VULKAN_GetCapabilityParameters(out)
            } else {
                NVSDK_NGX_VULKAN_AllocateParameters(out)
            }
        };
        let want = if self.devices.is_empty() {
            NOT_INIT
        } else if null_out {
            INVALID
        } else {
            SUCCESS
        };
        assert_eq!(r, want, "Allocate/GetCapabilityParameters");
        if r == SUCCESS {
            assert!(!p.is_null());
            fresh_address(p);
            self.maps.push(Map {
                p,
                library: false,
                populated,
                alive: true,
                known: HashMap::new(),
                unknown: HashSet::new(),
                complete: !populated,
            });
            self.made += 1;
        }
    }

    fn get_parameters(&mut self, null_out: bool) {
        let mut p: *mut NVSDK_NGX_Parameter = null_mut();
        let out = if null_out {
            null_mut()
        } else {
            &mut p as *mut _
        };
        // SAFETY: `out` is NULL or writable.
        let r = unsafe { NVSDK_NGX_VULKAN_GetParameters(out) };
        let want = if self.devices.is_empty() {
            NOT_INIT
        } else if null_out {
            INVALID
        } else {
            SUCCESS
        };
        assert_eq!(r, want, "GetParameters");
        if r != SUCCESS {
            return;
        }
        match self.library_map {
            Some(i) => assert_eq!(p, self.maps[i].p, "GetParameters returned another map"),
            None => {
                fresh_address(p);
                self.maps.push(Map {
                    p,
                    library: true,
                    populated: true,
                    alive: true,
                    known: HashMap::new(),
                    unknown: HashSet::new(),
                    complete: false,
                });
                self.library_map = Some(self.maps.len() - 1);
                self.made += 1;
            }
        }
    }

    fn destroy(&mut self, t: &Target, raw: Option<u64>) {
        let p = match raw {
            Some(a) => a as usize as *mut NVSDK_NGX_Parameter,
            None => self.ptr(t),
        };
        // SAFETY: the pointer is only compared against the registry.
        let r = unsafe { NVSDK_NGX_VULKAN_DestroyParameters(p) };
        let hit = self
            .maps
            .iter()
            .position(|m| m.p == p && m.alive && !m.library);
        match hit {
            Some(i) => {
                assert_eq!(r, SUCCESS, "DestroyParameters of a live map");
                self.maps[i].alive = false;
            }
            None => assert_eq!(r, INVALID, "DestroyParameters of {p:?}"),
        }
    }

    fn set(&mut self, t: &Target, k: &CStr, v: V, vtable: bool) {
        let p = self.ptr(t);
        if vtable && matches!(t, Target::Null | Target::NoVtable) {
            return;
        }
        // SAFETY: `p` is NULL, a map the library made (shells stay valid), or one of ours.
        unsafe {
            if vtable {
                vt_set(p, k.as_ptr(), v)
            } else {
                c_set(p, k.as_ptr(), v)
            }
        };
        match *t {
            Target::Map(i) => {
                let m = &mut self.maps[i];
                if m.alive {
                    m.unknown.remove(k.to_bytes());
                    m.known.insert(k.to_bytes().to_vec(), v);
                }
            }
            Target::Foreign => {
                let f = &self.foreign;
                assert_eq!(
                    f.last.borrow_mut().take(),
                    Some((ty(v) as usize, k.to_bytes().to_vec())),
                    "the setter did not reach the application's object"
                );
                let stored = f.map.borrow().get(k.to_bytes()).copied();
                assert!(
                    stored.is_some_and(|s| same(s, v, v)),
                    "{stored:?} for {v:?}"
                );
            }
            Target::NoVtable | Target::Null => {}
        }
    }

    fn get(&mut self, t: &Target, k: &CStr, ty_: T, vtable: bool, null_out: bool) {
        let p = self.ptr(t);
        if vtable && matches!(t, Target::Null | Target::NoVtable) {
            return;
        }
        // SAFETY: as in `set`.
        let (r, out) = unsafe {
            if vtable {
                vt_get(p, k.as_ptr(), ty_)
            } else {
                c_get(p, k.as_ptr(), ty_, null_out)
            }
        };
        let null_out = null_out && !vtable;
        if r != SUCCESS {
            assert!(untouched(out), "a failed get wrote its output: {out:?}");
        }
        match *t {
            Target::Null => assert_eq!(r, INVALID, "get on NULL"),
            // The accessors find no method to call: NVSDK_NGX_Result_Fail.
            Target::NoVtable => {
                let want = if null_out {
                    INVALID
                } else {
                    NVSDK_NGX_Result_Fail
                };
                assert_eq!(r, want, "get on an object without a vtable");
            }
            Target::Foreign => {
                let f = &self.foreign;
                if null_out {
                    assert_eq!(r, INVALID);
                    return;
                }
                assert_eq!(
                    f.last.borrow_mut().take(),
                    Some((8 + ty_ as usize, k.to_bytes().to_vec())),
                    "the getter did not reach the application's object"
                );
                match f.map.borrow().get(k.to_bytes()).copied() {
                    None => assert_eq!(r, NVSDK_NGX_Result_Fail),
                    Some(v) if ty(v) == ty_ => assert!(
                        r == SUCCESS && same(out, v, v),
                        "foreign get changed the value: {r:#x} {out:?} for {v:?}"
                    ),
                    Some(_) => assert_eq!(r, FOREIGN_MISMATCH, "foreign code not passed through"),
                }
            }
            Target::Map(i) => {
                let m = &self.maps[i];
                if null_out {
                    assert_eq!(r, INVALID, "get with a NULL output");
                    return;
                }
                if !m.alive {
                    assert_eq!(r, INVALID, "get on a destroyed map");
                    return;
                }
                match m.known.get(k.to_bytes()).copied() {
                    Some(v) => match expect(v, ty_) {
                        Ok(want) => assert!(
                            r == SUCCESS && same(out, want, v),
                            "stored {v:?}, get {ty_:?}: {r:#x} {out:?}, expected {want:?}"
                        ),
                        Err(code) => assert_eq!(r, code, "stored {v:?}, get {ty_:?}"),
                    },
                    None if m.complete && !m.unknown.contains(k.to_bytes()) => {
                        assert_eq!(r, NVSDK_NGX_Result_Fail, "missing key")
                    }
                    None => assert!(
                        [SUCCESS, NVSDK_NGX_Result_Fail, INVALID].contains(&r),
                        "{r:#x}"
                    ),
                }
            }
        }
    }

    fn reset(&mut self, t: &Target) {
        let p = self.ptr(t);
        match *t {
            Target::Map(i) => {
                // SAFETY: a map the library made (a retired shell still has its vtable).
                unsafe { vt_reset(p) };
                let m = &mut self.maps[i];
                if m.alive {
                    m.known.clear();
                    m.unknown.clear();
                    m.complete = !m.populated;
                }
            }
            Target::Foreign => {
                // SAFETY: our own object.
                unsafe { vt_reset(p) };
                assert_eq!(
                    self.foreign.last.borrow_mut().take(),
                    Some((16, Vec::new()))
                );
            }
            Target::NoVtable | Target::Null => {}
        }
    }

    /// A capability map's callback (read with GetVoidPointer, as an application does), called on
    /// a chosen object.
    fn callback(&mut self, from: &Target, which: bool, on: &Target) {
        let Target::Map(i) = *from else { return };
        if !self.maps[i].alive || !self.maps[i].populated {
            return;
        }
        let key = if which {
            c"DLSSNRGetStatsCallback"
        } else {
            c"DLSSNRComputeScalingRatioCallback"
        };
        // The application may have overwritten the key; only a pointer the library stored.
        if self.maps[i].known.contains_key(key.to_bytes()) {
            return;
        }
        let mut f: *mut c_void = null_mut();
        // SAFETY: a live map of the library; `f` is writable.
        let r = unsafe { NVSDK_NGX_Parameter_GetVoidPointer(self.maps[i].p, key.as_ptr(), &mut f) };
        assert_eq!(r, SUCCESS, "capability map without {key:?}");
        if matches!(on, Target::NoVtable) {
            return;
        }
        let target = self.ptr(on);
        // SAFETY: the library stored this callback's address; it takes a parameter object (ours,
        // a stale one of the library, or NULL).
        let r = unsafe {
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut NVSDK_NGX_Parameter) -> u32>(
                f,
            )(target)
        };
        match *on {
            Target::Null => assert_eq!(r, INVALID),
            Target::Map(j) => {
                let m = &mut self.maps[j];
                if m.alive {
                    // The keys it writes (values the model does not track).
                    let written: &[&CStr] = if which {
                        &[c"SizeInBytes", c"#\x44", c"#\x45"]
                    } else {
                        &[c"DLSSNR.ScalingRatio"]
                    };
                    for k in written {
                        m.known.remove(k.to_bytes());
                        m.unknown.insert(k.to_bytes().to_vec());
                    }
                    if which {
                        assert_eq!(r, SUCCESS, "stats callback");
                    }
                }
            }
            Target::Foreign => {
                self.foreign.last.borrow_mut().take();
            }
            Target::NoVtable => {}
        }
    }

    fn init(&mut self, inp: &mut Input) -> Option<()> {
        let mode = inp.u8()?;
        let dev = 0x5000 + u64::from(mode & 3);
        let version = [0x12, 0x13, 0x14, 0x15, 0xFF][(mode >> 2) as usize % 5];
        let nulls = (mode >> 5) & 3; // 0: all handles; else one of them NULL
        let info_mode = inp.u8()?;
        let data_path = if info_mode & 1 == 1 {
            Some(inp.wide()?)
        } else {
            None
        };
        let paths: Vec<Vec<wchar_t>> = (0..(info_mode >> 1) % 4)
            .map(|_| inp.wide())
            .collect::<Option<_>>()?;
        let path_ptrs: Vec<*const wchar_t> = paths.iter().map(|w| w.as_ptr()).collect();
        let info = NVSDK_NGX_FeatureCommonInfo {
            PathListInfo: NVSDK_NGX_PathListInfo {
                Path: if path_ptrs.is_empty() {
                    null()
                } else {
                    path_ptrs.as_ptr()
                },
                // Lists of 10 or more are ignored as garbage (only the first entries exist).
                Length: if info_mode & 0x40 != 0 {
                    10
                } else {
                    path_ptrs.len() as u32
                },
            },
            InternalData: null_mut(),
            LoggingInfo: NVSDK_NGX_LoggingInfo {
                LoggingCallback: Some(log_callback),
                MinimumLoggingLevel: u32::from(info_mode >> 3) % 4,
                DisableOtherLoggingSinks: info_mode & 0x20 != 0,
            },
        };
        let info_ptr = if info_mode & 0x80 != 0 {
            &info as *const _
        } else {
            null()
        };
        let handle = |n: u8, v: u64| if nulls == n { 0 } else { v };
        let (instance, pd, device) = (handle(1, 0x1000), handle(2, 0x2000), handle(3, dev));
        let project = inp.u8()? % 3;
        let pid = if project == 2 {
            Some(inp.c_string()?)
        } else {
            None
        };
        let data_ptr = data_path.as_ref().map_or(null(), |w| w.as_ptr());
        use ash::vk::Handle;
        // SAFETY: every pointer is NULL or valid for the call; the handles are never called.
        let r = unsafe {
            match &pid {
                None => NVSDK_NGX_VULKAN_Init(
                    u64::from(mode),
                    data_ptr,
                    VkInstance::from_raw(instance),
                    VkPhysicalDevice::from_raw(pd),
                    VkDevice::from_raw(device),
                    None,
                    None,
                    info_ptr,
                    version,
                ),
                Some(id) => NVSDK_NGX_VULKAN_Init_with_ProjectID(
                    id.as_ptr(),
                    NVSDK_NGX_ENGINE_TYPE_CUSTOM,
                    c"1.0".as_ptr(),
                    data_ptr,
                    VkInstance::from_raw(instance),
                    VkPhysicalDevice::from_raw(pd),
                    VkDevice::from_raw(device),
                    None,
                    None,
                    info_ptr,
                    version,
                ),
            }
        };
        // Wide strings hold code units that are not characters (surrogates, > 0x10FFFF).
        let bad_wide = data_path.as_ref().is_some_and(|w| {
            w.iter()
                .any(|&u| u != 0 && char::from_u32(u as u32).is_none())
        });
        let want = if pid.as_ref().is_some_and(|s| s.is_empty()) || nulls != 0 {
            INVALID
        } else if version < 0x13 {
            NVSDK_NGX_Result_FAIL_OutOfDate
        } else if bad_wide {
            INVALID
        } else {
            SUCCESS
        };
        assert_eq!(r, want, "Init (mode {mode:#x}, project {pid:?})");
        if r == SUCCESS && !self.devices.contains(&dev) {
            self.devices.push(dev);
        }
        Some(())
    }

    fn shutdown(&mut self, which: u8) {
        use ash::vk::Handle;
        let (r, gone): (u32, Vec<u64>) = match which % 3 {
            0 => (NVSDK_NGX_VULKAN_Shutdown(), self.devices.clone()),
            1 => (
                NVSDK_NGX_VULKAN_Shutdown1(VkDevice::null()),
                self.devices.clone(),
            ),
            _ => {
                let dev = 0x5000 + u64::from(which >> 2 & 3);
                let gone = if self.devices.contains(&dev) {
                    vec![dev]
                } else {
                    vec![]
                };
                (NVSDK_NGX_VULKAN_Shutdown1(VkDevice::from_raw(dev)), gone)
            }
        };
        if gone.is_empty() {
            assert_eq!(r, NOT_INIT, "Shutdown of nothing");
            return;
        }
        assert_eq!(r, SUCCESS, "Shutdown");
        self.devices.retain(|d| !gone.contains(d));
        if self.devices.is_empty() {
            // The GetParameters map is freed with the last device (retired: it answers as a
            // destroyed map).
            if let Some(i) = self.library_map.take() {
                self.maps[i].alive = false;
            }
        }
    }
}

/// Init's logging callback: every message is a C string; none reports an internal error (a
/// panic the library caught).
unsafe extern "C" fn log_callback(msg: *const c_char, _level: u32, _feature: u32) {
    assert!(!msg.is_null());
    // SAFETY: the library passes a NUL-terminated message alive for the call.
    let m = unsafe { CStr::from_ptr(msg) }.to_string_lossy();
    assert!(!m.contains("internal error"), "{m}");
}

openngx_fuzz::fuzz_target!(|data| {
    let mut inp = Input(data);
    let mut m = Model {
        maps: Vec::new(),
        made: 0,
        devices: Vec::new(),
        library_map: None,
        foreign: Box::new(Foreign {
            vtable: FOREIGN_VTABLE.0.as_ptr(),
            map: RefCell::new(HashMap::new()),
            last: RefCell::new(None),
        }),
        no_vtable: Box::new(NVSDK_NGX_Parameter { vtable: null() }),
    };
    for _ in 0..MAX_OPS {
        let Some(op) = inp.u8() else { break };
        let done = (|| -> Option<()> {
            // The low 7 bits choose the operation, the high bit is its flag (a NULL output, the
            // stats callback rather than the scaling one).
            let (kind, flag) = ((op & 0x7F) % 12, op & 0x80 != 0);
            if trace() {
                eprintln!(
                    "op {kind} flag {flag} ({} maps, devices {:x?})",
                    m.maps.len(),
                    m.devices
                );
            }
            match kind {
                0 => m.init(&mut inp)?,
                1 => m.shutdown(inp.u8()?),
                2 | 3 if m.made < MAX_MAPS => m.make(kind == 3, flag),
                4 if m.made < MAX_MAPS => m.get_parameters(flag),
                5 => {
                    let sel = inp.u8()?;
                    let raw = (sel == 0xFF).then(|| inp.u64()).flatten();
                    let t = m.target(sel);
                    m.destroy(&t, raw);
                }
                6 | 7 => {
                    let t = m.target(inp.u8()?);
                    let k = key(&mut inp)?;
                    let t_ = TYPES[inp.u8()? as usize % 8];
                    let v = inp.value(t_)?;
                    m.set(&t, &k, v, kind == 7);
                }
                8 | 9 => {
                    let t = m.target(inp.u8()?);
                    let k = key(&mut inp)?;
                    let ty_ = TYPES[inp.u8()? as usize % 8];
                    m.get(&t, &k, ty_, kind == 9, flag);
                }
                10 => {
                    let t = m.target(inp.u8()?);
                    m.reset(&t);
                }
                11 => {
                    let from = m.target(inp.u8()?);
                    let on = m.target(inp.u8()?);
                    m.callback(&from, flag, &on);
                }
                _ => {}
            }
            Some(())
        })();
        if done.is_none() {
            break;
        }
    }
    // NULL names: setters ignore them, getters refuse them.
    if let Some(map) = m.maps.first() {
        let p = map.p;
        let mut out = 0u32;
        // SAFETY: a map the library made; NULL name.
        unsafe {
            NVSDK_NGX_Parameter_SetUI(p, null(), 1);
            assert_eq!(NVSDK_NGX_Parameter_GetUI(p, null(), &mut out), INVALID);
        }
    }
    // The end of the sequence: destroy what is left, shut down, and the library holds nothing.
    for i in 0..m.maps.len() {
        if m.maps[i].alive && !m.maps[i].library {
            m.destroy(&Target::Map(i), None);
        }
    }
    if !m.devices.is_empty() {
        m.shutdown(0);
    }
    let left = state::with(|s| s.remaining());
    assert_eq!(left.total(), 0, "the library still holds {left:?}");
});

/// `OPENNGX_FUZZ_TRACE=1`: each operation on stderr (to read what a saved input does).
fn trace() -> bool {
    static T: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *T.get_or_init(|| std::env::var_os("OPENNGX_FUZZ_TRACE").is_some_and(|v| v == "1"))
}

/// A key: by index from [`KEYS`], or (index >= 200) bytes from the input.
fn key(inp: &mut Input) -> Option<CString> {
    let i = inp.u8()?;
    if i >= 200 {
        inp.c_string()
    } else {
        Some(KEYS[i as usize % KEYS.len()].to_owned())
    }
}
