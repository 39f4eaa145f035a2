//! `NVSDK_NGX_Parameter` objects: the library's own parameter maps (a C++-compatible object
//! whose first word points at a 17-slot vtable) and [`ParamRef`], which reads and writes *any*
//! parameter object — ours or one the application implemented in C++ — through its own vtable.
//!
//! Storage rules (ngx-abi.md §4.4, §9): a value is stored tagged with the setter's type and
//! replaces any earlier value of the key; numeric getters convert between the five numeric
//! types; pointer getters only return pointers; a missing key returns `NVSDK_NGX_Result_Fail`
//! and an incompatible type `FAIL_InvalidParameter`, and in both cases the output is untouched.
//!
//! Slot order: Itanium (GCC/Clang) order on every non-MSVC target, MSVC's reversed-overload-group
//! order on `*-windows-msvc` (ngx-abi.md §4.2). Ownership of the objects (app vs library) is kept
//! by `state.rs`; this module only knows how one object behaves.

use std::collections::HashMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};

use parking_lot::Mutex;

use super::abi::*;
use super::guard::{c_str, guard, guard_void, write_out};

/// A stored value, tagged with the setter that stored it. Pointers are kept as addresses (the
/// library never dereferences a stored pointer except a `NVSDK_NGX_Resource_VK*` during the call
/// that reads it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// `Set(unsigned long long)`.
    Ull(u64),
    /// `Set(float)`.
    F(f32),
    /// `Set(double)`.
    D(f64),
    /// `Set(unsigned int)`.
    Ui(u32),
    /// `Set(int)`.
    I(i32),
    /// `Set(ID3D11Resource*)`.
    D3d11(usize),
    /// `Set(ID3D12Resource*)`.
    D3d12(usize),
    /// `Set(void*)`.
    Vp(usize),
}

impl Value {
    fn as_f64(self) -> Option<f64> {
        match self {
            Value::Ull(v) => Some(v as f64),
            Value::F(v) => Some(f64::from(v)),
            Value::D(v) => Some(v),
            Value::Ui(v) => Some(f64::from(v)),
            Value::I(v) => Some(f64::from(v)),
            _ => None,
        }
    }
    /// Integer view of an integer or pointer value, with C's modular conversions.
    fn as_u64(self) -> Option<u64> {
        match self {
            Value::Ull(v) => Some(v),
            Value::Ui(v) => Some(u64::from(v)),
            Value::I(v) => Some(v as i64 as u64),
            // An address read as an integer (what other implementations allow for ULL).
            Value::Vp(p) => Some(p as u64),
            _ => None,
        }
    }
    /// A stored float or double (widened exactly), for the saturating float -> integer reads.
    fn as_float(self) -> Option<f64> {
        match self {
            Value::F(v) => Some(f64::from(v)),
            Value::D(v) => Some(v),
            _ => None,
        }
    }
}

/// Which getter a read uses (decides the conversions allowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetKind {
    /// `Get(unsigned long long*)`.
    Ull,
    /// `Get(float*)`.
    F,
    /// `Get(double*)`.
    D,
    /// `Get(unsigned int*)`.
    Ui,
    /// `Get(int*)`.
    I,
    /// `Get(ID3D11Resource**)`.
    D3d11,
    /// `Get(ID3D12Resource**)`.
    D3d12,
    /// `Get(void**)`.
    Vp,
}

/// Converts a stored value for a getter; `None` when the types are incompatible.
///
/// Integer -> integer conversions are C's (modular: `SetI(-1)` reads as `GetUI` 4294967295), and
/// so are integer -> float ones (rounded once to the nearest); a value read as its own type is
/// returned bit for bit.
/// Float or double -> integer conversions, undefined in C when out of range, saturate: the value
/// is truncated toward zero and clamped to the target's range, and NaN reads as 0 (Rust's `as`
/// from a float does exactly this). So `SetF(1e10)` reads as `GetUI` 4294967295, `SetF(-5)` as
/// `GetULL` 0 and as `GetI` -5, `SetD(-1e300)` as `GetI` -2147483648.
pub fn convert(v: Value, kind: GetKind) -> Option<Value> {
    match kind {
        GetKind::Ull => match v.as_float() {
            Some(f) => Some(Value::Ull(f as u64)),
            None => v.as_u64().map(Value::Ull),
        },
        // Straight to f32, not through f64: a float keeps its bits (a signalling NaN would come
        // back quieted) and an integer is rounded once, as C's conversion does (twice can differ).
        GetKind::F => match v {
            Value::F(x) => Some(Value::F(x)),
            Value::D(x) => Some(Value::F(x as f32)),
            Value::Ull(x) => Some(Value::F(x as f32)),
            Value::Ui(x) => Some(Value::F(x as f32)),
            Value::I(x) => Some(Value::F(x as f32)),
            _ => None,
        },
        GetKind::D => v.as_f64().map(Value::D),
        GetKind::Ui => match (v.as_float(), v) {
            (Some(f), _) => Some(Value::Ui(f as u32)),
            // A pointer is not an unsigned int (only GetULL reads an address).
            (None, Value::Vp(_)) => None,
            (None, _) => v.as_u64().map(|u| Value::Ui(u as u32)),
        },
        GetKind::I => match (v.as_float(), v) {
            (Some(f), _) => Some(Value::I(f as i32)),
            (None, Value::Vp(_)) => None,
            (None, _) => v.as_u64().map(|u| Value::I(u as i32)),
        },
        GetKind::D3d11 => match v {
            Value::D3d11(p) | Value::Vp(p) => Some(Value::D3d11(p)),
            _ => None,
        },
        GetKind::D3d12 => match v {
            Value::D3d12(p) | Value::Vp(p) => Some(Value::D3d12(p)),
            _ => None,
        },
        GetKind::Vp => match v {
            Value::Vp(p) => Some(Value::Vp(p)),
            _ => None,
        },
    }
}

/// Fills a map with its defaults (capability maps re-populate on `Reset()`).
pub type Populate = fn(&ParamObject);

/// The library's parameter object. `#[repr(C)]` with the vtable pointer first, so a C++ caller
/// can call its virtual methods.
///
/// The object is a small shell around its contents: destroying a map frees the contents and
/// keeps the shell (`state::retire`), so that its address is never handed out again — see there
/// for why that is the only sound answer to a double destroy. A retired shell still answers its
/// virtual methods: setters do nothing and getters return `FAIL_InvalidParameter`.
#[repr(C)]
pub struct ParamObject {
    vtable: *const *const c_void,
    /// `None` once the map was destroyed.
    contents: Mutex<Option<Box<Contents>>>,
}

/// What a live map holds.
struct Contents {
    map: HashMap<Vec<u8>, Value>,
    populate: Option<Populate>,
}

// SAFETY: the vtable pointer refers to an immutable static; the contents are behind a mutex.
unsafe impl Send for ParamObject {}
// SAFETY: as above.
unsafe impl Sync for ParamObject {}

impl ParamObject {
    /// A new object, filled by `populate` when given. Box it: its address is the C pointer.
    pub fn new(populate: Option<Populate>) -> Box<ParamObject> {
        let obj = Box::new(ParamObject {
            vtable: VTABLE.slots.as_ptr(),
            contents: Mutex::new(Some(Box::new(Contents {
                map: HashMap::new(),
                populate,
            }))),
        });
        if let Some(p) = populate {
            p(&obj);
        }
        obj
    }

    /// The object as the C type.
    pub fn as_c(&self) -> *mut NVSDK_NGX_Parameter {
        self as *const ParamObject as *mut NVSDK_NGX_Parameter
    }

    /// Stores `v` under `key`, replacing any earlier value (nothing once retired).
    pub fn set(&self, key: &[u8], v: Value) {
        if let Some(c) = self.contents.lock().as_mut() {
            c.map.insert(key.to_vec(), v);
        }
    }

    /// The stored value, unconverted.
    pub fn raw(&self, key: &[u8]) -> Option<Value> {
        self.contents
            .lock()
            .as_ref()
            .and_then(|c| c.map.get(key).copied())
    }

    /// Reads `key` for getter `kind`: `Err(Fail)` when missing, `Err(FAIL_InvalidParameter)` when
    /// the stored type cannot convert or the map was destroyed.
    pub fn get(&self, key: &[u8], kind: GetKind) -> Result<Value, NVSDK_NGX_Result> {
        let v = {
            let g = self.contents.lock();
            let c = g.as_ref().ok_or(NVSDK_NGX_Result_FAIL_InvalidParameter)?;
            c.map.get(key).copied().ok_or(NVSDK_NGX_Result_Fail)?
        };
        convert(v, kind).ok_or(NVSDK_NGX_Result_FAIL_InvalidParameter)
    }

    /// Clears every key, then restores the defaults of a pre-populated map.
    pub fn reset(&self) {
        let populate = match self.contents.lock().as_mut() {
            Some(c) => {
                c.map.clear();
                c.populate
            }
            None => return,
        };
        // Outside the lock: populating sets keys.
        if let Some(p) = populate {
            p(self);
        }
    }

    /// Frees the contents; the shell stays valid and answers as a destroyed map.
    pub fn retire(&self) {
        let contents = self.contents.lock().take();
        drop(contents);
    }

    /// True once [`ParamObject::retire`] ran.
    pub fn is_retired(&self) -> bool {
        self.contents.lock().is_none()
    }

    /// Number of stored keys.
    pub fn len(&self) -> usize {
        self.contents.lock().as_ref().map_or(0, |c| c.map.len())
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

// ---------------------------------------------------------------------------------------------
// Slot order

/// The 17 virtual methods, in declaration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Method {
    /// `Set(const char*, unsigned long long)`.
    SetUll,
    /// `Set(const char*, float)`.
    SetF,
    /// `Set(const char*, double)`.
    SetD,
    /// `Set(const char*, unsigned int)`.
    SetUi,
    /// `Set(const char*, int)`.
    SetI,
    /// `Set(const char*, ID3D11Resource*)`.
    SetD3d11,
    /// `Set(const char*, ID3D12Resource*)`.
    SetD3d12,
    /// `Set(const char*, void*)`.
    SetVp,
    /// `Get(const char*, unsigned long long*) const`.
    GetUll,
    /// `Get(const char*, float*) const`.
    GetF,
    /// `Get(const char*, double*) const`.
    GetD,
    /// `Get(const char*, unsigned int*) const`.
    GetUi,
    /// `Get(const char*, int*) const`.
    GetI,
    /// `Get(const char*, ID3D11Resource**) const`.
    GetD3d11,
    /// `Get(const char*, ID3D12Resource**) const`.
    GetD3d12,
    /// `Get(const char*, void**) const`.
    GetVp,
    /// `Reset()`.
    Reset,
}

/// Vtable slot of `m` for the C++ ABI of this target.
pub const fn slot(m: Method) -> usize {
    let i = m as usize;
    if cfg!(all(windows, target_env = "msvc")) {
        // MSVC groups the overloads of one name and lays each group out in reverse.
        if i < 8 {
            7 - i
        } else if i < 16 {
            23 - i
        } else {
            16
        }
    } else {
        i
    }
}

type SetUllFn = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter, *const c_char, u64);
type SetFFn = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter, *const c_char, f32);
type SetDFn = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter, *const c_char, f64);
type SetUiFn = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter, *const c_char, u32);
type SetIFn = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter, *const c_char, i32);
type SetPtrFn = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter, *const c_char, *mut c_void);
type GetFn<T> =
    unsafe extern "C" fn(*mut NVSDK_NGX_Parameter, *const c_char, *mut T) -> NVSDK_NGX_Result;
type ResetFn = unsafe extern "C" fn(*mut NVSDK_NGX_Parameter);

/// The vtable block: two readable prefix words (Itanium offset-to-top and typeinfo, both 0; a
/// caller probing RTTI reads zeros instead of faulting) followed by the 17 slots.
#[repr(C)]
struct VtableBlock {
    _prefix: [usize; 2],
    slots: [*const c_void; 17],
}

// SAFETY: immutable static of function addresses.
unsafe impl Sync for VtableBlock {}

const fn build_slots() -> [*const c_void; 17] {
    let mut s = [std::ptr::null::<c_void>(); 17];
    s[slot(Method::SetUll)] = vt_set_ull as SetUllFn as *const c_void;
    s[slot(Method::SetF)] = vt_set_f as SetFFn as *const c_void;
    s[slot(Method::SetD)] = vt_set_d as SetDFn as *const c_void;
    s[slot(Method::SetUi)] = vt_set_ui as SetUiFn as *const c_void;
    s[slot(Method::SetI)] = vt_set_i as SetIFn as *const c_void;
    s[slot(Method::SetD3d11)] = vt_set_d3d11 as SetPtrFn as *const c_void;
    s[slot(Method::SetD3d12)] = vt_set_d3d12 as SetPtrFn as *const c_void;
    s[slot(Method::SetVp)] = vt_set_vp as SetPtrFn as *const c_void;
    s[slot(Method::GetUll)] = vt_get_ull as GetFn<u64> as *const c_void;
    s[slot(Method::GetF)] = vt_get_f as GetFn<f32> as *const c_void;
    s[slot(Method::GetD)] = vt_get_d as GetFn<f64> as *const c_void;
    s[slot(Method::GetUi)] = vt_get_ui as GetFn<u32> as *const c_void;
    s[slot(Method::GetI)] = vt_get_i as GetFn<i32> as *const c_void;
    s[slot(Method::GetD3d11)] = vt_get_d3d11 as GetFn<*mut c_void> as *const c_void;
    s[slot(Method::GetD3d12)] = vt_get_d3d12 as GetFn<*mut c_void> as *const c_void;
    s[slot(Method::GetVp)] = vt_get_vp as GetFn<*mut c_void> as *const c_void;
    s[slot(Method::Reset)] = vt_reset as ResetFn as *const c_void;
    s
}

static VTABLE: VtableBlock = VtableBlock {
    _prefix: [0, 0],
    slots: build_slots(),
};

/// The vtable pointer every library-made object carries (to recognise our own objects).
pub fn own_vtable() -> *const *const c_void {
    VTABLE.slots.as_ptr()
}

// ---------------------------------------------------------------------------------------------
// The virtual methods of our objects. `this` is always a `ParamObject` (only our objects carry
// this vtable).

/// # Safety
/// `this` must be a live `ParamObject` (guaranteed by vtable dispatch).
unsafe fn obj<'a>(this: *mut NVSDK_NGX_Parameter) -> Option<&'a ParamObject> {
    // SAFETY: caller contract; NULL gives None.
    unsafe { (this as *const ParamObject).as_ref() }
}

fn vt_set(entry: &str, this: *mut NVSDK_NGX_Parameter, name: *const c_char, v: Value) {
    guard_void(entry, || {
        // SAFETY: vtable dispatch gives our object; NULL name is rejected.
        let (Some(o), Some(k)) = (unsafe { obj(this) }, unsafe { c_str(name) }) else {
            return;
        };
        o.set(k.to_bytes(), v);
    });
}

unsafe extern "C" fn vt_set_ull(this: *mut NVSDK_NGX_Parameter, name: *const c_char, v: u64) {
    vt_set("Parameter::Set(ull)", this, name, Value::Ull(v));
}
unsafe extern "C" fn vt_set_f(this: *mut NVSDK_NGX_Parameter, name: *const c_char, v: f32) {
    vt_set("Parameter::Set(float)", this, name, Value::F(v));
}
unsafe extern "C" fn vt_set_d(this: *mut NVSDK_NGX_Parameter, name: *const c_char, v: f64) {
    vt_set("Parameter::Set(double)", this, name, Value::D(v));
}
unsafe extern "C" fn vt_set_ui(this: *mut NVSDK_NGX_Parameter, name: *const c_char, v: u32) {
    vt_set("Parameter::Set(uint)", this, name, Value::Ui(v));
}
unsafe extern "C" fn vt_set_i(this: *mut NVSDK_NGX_Parameter, name: *const c_char, v: i32) {
    vt_set("Parameter::Set(int)", this, name, Value::I(v));
}
unsafe extern "C" fn vt_set_d3d11(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    v: *mut c_void,
) {
    vt_set(
        "Parameter::Set(ID3D11Resource*)",
        this,
        name,
        Value::D3d11(v as usize),
    );
}
unsafe extern "C" fn vt_set_d3d12(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    v: *mut c_void,
) {
    vt_set(
        "Parameter::Set(ID3D12Resource*)",
        this,
        name,
        Value::D3d12(v as usize),
    );
}
unsafe extern "C" fn vt_set_vp(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    v: *mut c_void,
) {
    vt_set("Parameter::Set(void*)", this, name, Value::Vp(v as usize));
}

fn vt_get<T>(
    entry: &str,
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut T,
    kind: GetKind,
    unwrap: fn(Value) -> Option<T>,
) -> NVSDK_NGX_Result {
    guard(entry, || {
        // SAFETY: vtable dispatch gives our object; NULL name/out are rejected.
        let (Some(o), Some(k)) = (unsafe { obj(this) }, unsafe { c_str(name) }) else {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        };
        if out.is_null() {
            return NVSDK_NGX_Result_FAIL_InvalidParameter;
        }
        match o.get(k.to_bytes(), kind).map(unwrap) {
            Ok(Some(v)) => {
                // SAFETY: `out` is non-NULL and the caller passed it for a `T`.
                unsafe { write_out(out, v) };
                NVSDK_NGX_Result_Success
            }
            Ok(None) => NVSDK_NGX_Result_FAIL_InvalidParameter,
            Err(code) => code,
        }
    })
}

unsafe extern "C" fn vt_get_ull(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut u64,
) -> NVSDK_NGX_Result {
    vt_get("Parameter::Get(ull)", this, name, out, GetKind::Ull, |v| {
        if let Value::Ull(x) = v {
            Some(x)
        } else {
            None
        }
    })
}
unsafe extern "C" fn vt_get_f(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut f32,
) -> NVSDK_NGX_Result {
    vt_get("Parameter::Get(float)", this, name, out, GetKind::F, |v| {
        if let Value::F(x) = v {
            Some(x)
        } else {
            None
        }
    })
}
unsafe extern "C" fn vt_get_d(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut f64,
) -> NVSDK_NGX_Result {
    vt_get("Parameter::Get(double)", this, name, out, GetKind::D, |v| {
        if let Value::D(x) = v {
            Some(x)
        } else {
            None
        }
    })
}
unsafe extern "C" fn vt_get_ui(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut u32,
) -> NVSDK_NGX_Result {
    vt_get("Parameter::Get(uint)", this, name, out, GetKind::Ui, |v| {
        if let Value::Ui(x) = v {
            Some(x)
        } else {
            None
        }
    })
}
unsafe extern "C" fn vt_get_i(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut i32,
) -> NVSDK_NGX_Result {
    vt_get("Parameter::Get(int)", this, name, out, GetKind::I, |v| {
        if let Value::I(x) = v {
            Some(x)
        } else {
            None
        }
    })
}
unsafe extern "C" fn vt_get_d3d11(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut *mut c_void,
) -> NVSDK_NGX_Result {
    vt_get(
        "Parameter::Get(ID3D11Resource**)",
        this,
        name,
        out,
        GetKind::D3d11,
        |v| {
            if let Value::D3d11(x) = v {
                Some(x as *mut c_void)
            } else {
                None
            }
        },
    )
}
unsafe extern "C" fn vt_get_d3d12(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut *mut c_void,
) -> NVSDK_NGX_Result {
    vt_get(
        "Parameter::Get(ID3D12Resource**)",
        this,
        name,
        out,
        GetKind::D3d12,
        |v| {
            if let Value::D3d12(x) = v {
                Some(x as *mut c_void)
            } else {
                None
            }
        },
    )
}
unsafe extern "C" fn vt_get_vp(
    this: *mut NVSDK_NGX_Parameter,
    name: *const c_char,
    out: *mut *mut c_void,
) -> NVSDK_NGX_Result {
    vt_get(
        "Parameter::Get(void**)",
        this,
        name,
        out,
        GetKind::Vp,
        |v| {
            if let Value::Vp(x) = v {
                Some(x as *mut c_void)
            } else {
                None
            }
        },
    )
}
unsafe extern "C" fn vt_reset(this: *mut NVSDK_NGX_Parameter) {
    guard_void("Parameter::Reset", || {
        // SAFETY: vtable dispatch gives our object.
        if let Some(o) = unsafe { obj(this) } {
            o.reset();
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Reading any parameter object through its own vtable

/// A parameter object of unknown origin, used only through its vtable (never downcast: callers
/// may pass objects they implemented themselves). Valid for the duration of one entry-point call.
#[derive(Clone, Copy)]
pub struct ParamRef {
    p: *mut NVSDK_NGX_Parameter,
}

impl ParamRef {
    /// Wraps a caller pointer; `None` for NULL.
    ///
    /// # Safety
    /// `p` must be NULL or a live parameter object whose first word is a vtable pointer with the
    /// 17 slots of this target's C++ ABI, for as long as the `ParamRef` is used.
    pub unsafe fn new(p: *const NVSDK_NGX_Parameter) -> Option<ParamRef> {
        if p.is_null() {
            None
        } else {
            Some(ParamRef {
                p: p as *mut NVSDK_NGX_Parameter,
            })
        }
    }

    /// The raw pointer.
    pub fn as_ptr(&self) -> *mut NVSDK_NGX_Parameter {
        self.p
    }

    /// True when the object is one of the library's own (it carries our vtable).
    pub fn is_own(&self) -> bool {
        // SAFETY: `new`'s contract: the first word is readable.
        unsafe { *(self.p as *const *const *const c_void) == own_vtable() }
    }

    fn fn_at(&self, m: Method) -> Option<*const c_void> {
        // SAFETY: `new`'s contract: the first word is the vtable pointer with 17 readable slots.
        unsafe {
            let vptr = *(self.p as *const *const *const c_void);
            if vptr.is_null() {
                return None;
            }
            let f = *vptr.add(slot(m));
            (!f.is_null()).then_some(f)
        }
    }

    /// `Set(name, unsigned long long)`.
    pub fn set_ull(&self, name: &CStr, v: u64) {
        if let Some(f) = self.fn_at(Method::SetUll) {
            // SAFETY: the slot holds this method by the C++ ABI.
            unsafe { std::mem::transmute::<*const c_void, SetUllFn>(f)(self.p, name.as_ptr(), v) }
        }
    }
    /// `Set(name, float)`.
    pub fn set_f(&self, name: &CStr, v: f32) {
        if let Some(f) = self.fn_at(Method::SetF) {
            // SAFETY: as above.
            unsafe { std::mem::transmute::<*const c_void, SetFFn>(f)(self.p, name.as_ptr(), v) }
        }
    }
    /// `Set(name, double)`.
    pub fn set_d(&self, name: &CStr, v: f64) {
        if let Some(f) = self.fn_at(Method::SetD) {
            // SAFETY: as above.
            unsafe { std::mem::transmute::<*const c_void, SetDFn>(f)(self.p, name.as_ptr(), v) }
        }
    }
    /// `Set(name, unsigned int)`.
    pub fn set_ui(&self, name: &CStr, v: u32) {
        if let Some(f) = self.fn_at(Method::SetUi) {
            // SAFETY: as above.
            unsafe { std::mem::transmute::<*const c_void, SetUiFn>(f)(self.p, name.as_ptr(), v) }
        }
    }
    /// `Set(name, int)`.
    pub fn set_i(&self, name: &CStr, v: i32) {
        if let Some(f) = self.fn_at(Method::SetI) {
            // SAFETY: as above.
            unsafe { std::mem::transmute::<*const c_void, SetIFn>(f)(self.p, name.as_ptr(), v) }
        }
    }
    /// `Set(name, ID3D11Resource* | ID3D12Resource* | void*)` for `m` in the three pointer setters.
    // `v` is only handed to the object to store, never dereferenced here.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn set_ptr(&self, m: Method, name: &CStr, v: *mut c_void) {
        debug_assert!(matches!(
            m,
            Method::SetD3d11 | Method::SetD3d12 | Method::SetVp
        ));
        if let Some(f) = self.fn_at(m) {
            // SAFETY: as above.
            unsafe { std::mem::transmute::<*const c_void, SetPtrFn>(f)(self.p, name.as_ptr(), v) }
        }
    }
    /// `Reset()`.
    pub fn reset(&self) {
        if let Some(f) = self.fn_at(Method::Reset) {
            // SAFETY: as above.
            unsafe { std::mem::transmute::<*const c_void, ResetFn>(f)(self.p) }
        }
    }

    /// Calls getter `m` writing into `out`; returns the object's result code.
    ///
    /// # Safety
    /// `T` must be the out type of `m` (`u64`, `f32`, `f64`, `u32`, `i32` or `*mut c_void`).
    pub unsafe fn get_raw<T>(&self, m: Method, name: &CStr, out: *mut T) -> NVSDK_NGX_Result {
        match self.fn_at(m) {
            // SAFETY: caller matches `T` to the slot.
            Some(f) => unsafe {
                std::mem::transmute::<*const c_void, GetFn<T>>(f)(self.p, name.as_ptr(), out)
            },
            None => NVSDK_NGX_Result_Fail,
        }
    }

    fn get_typed<T: Copy>(&self, m: Method, name: &CStr, init: T) -> Result<T, NVSDK_NGX_Result> {
        let mut v = init;
        // SAFETY: each public getter below pairs `m` with its out type.
        let r = unsafe { self.get_raw(m, name, &mut v) };
        if super::result::failed(r) {
            Err(r)
        } else {
            Ok(v)
        }
    }

    /// `Get(name, unsigned long long*)`.
    pub fn get_ull(&self, name: &CStr) -> Result<u64, NVSDK_NGX_Result> {
        self.get_typed(Method::GetUll, name, 0u64)
    }
    /// `Get(name, float*)`.
    pub fn get_f(&self, name: &CStr) -> Result<f32, NVSDK_NGX_Result> {
        self.get_typed(Method::GetF, name, 0f32)
    }
    /// `Get(name, double*)`.
    pub fn get_d(&self, name: &CStr) -> Result<f64, NVSDK_NGX_Result> {
        self.get_typed(Method::GetD, name, 0f64)
    }
    /// `Get(name, unsigned int*)`.
    pub fn get_ui(&self, name: &CStr) -> Result<u32, NVSDK_NGX_Result> {
        self.get_typed(Method::GetUi, name, 0u32)
    }
    /// `Get(name, int*)`.
    pub fn get_i(&self, name: &CStr) -> Result<i32, NVSDK_NGX_Result> {
        self.get_typed(Method::GetI, name, 0i32)
    }
    /// `Get(name, void**)`.
    pub fn get_vp(&self, name: &CStr) -> Result<*mut c_void, NVSDK_NGX_Result> {
        self.get_typed(Method::GetVp, name, std::ptr::null_mut::<c_void>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> std::ffi::CString {
        std::ffi::CString::new(s).unwrap_or_default()
    }

    #[test]
    fn itanium_slot_order_matches_the_spec() {
        if cfg!(all(windows, target_env = "msvc")) {
            assert_eq!(slot(Method::SetVp), 0);
            assert_eq!(slot(Method::SetUll), 7);
            assert_eq!(slot(Method::GetVp), 8);
            assert_eq!(slot(Method::GetUll), 15);
        } else {
            for (i, m) in [
                Method::SetUll,
                Method::SetF,
                Method::GetUll,
                Method::GetVp,
                Method::Reset,
            ]
            .iter()
            .zip([0, 1, 8, 15, 16])
            {
                assert_eq!(slot(*i), m);
            }
        }
        assert_eq!(slot(Method::Reset), 16);
        assert!(VTABLE.slots.iter().all(|p| !p.is_null()));
    }

    #[test]
    fn values_convert_between_numeric_types_and_pointers_stay_pointers() {
        let o = ParamObject::new(None);
        // SAFETY: `o` is a live parameter object of ours and outlives `p`.
        let p = unsafe { ParamRef::new(o.as_c()) }.expect("non-null");
        assert!(p.is_own());
        p.set_i(&k("n"), -3);
        assert_eq!(p.get_i(&k("n")), Ok(-3));
        assert_eq!(p.get_f(&k("n")), Ok(-3.0));
        assert_eq!(p.get_ull(&k("n")), Ok(u64::MAX - 2));
        assert_eq!(p.get_ui(&k("n")), Ok(u32::MAX - 2));
        p.set_f(&k("x"), 2.75);
        assert_eq!(p.get_d(&k("x")), Ok(2.75));
        assert_eq!(p.get_ui(&k("x")), Ok(2));
        p.set_d(&k("x"), 1.5); // re-Set with another type replaces the value and its tag
        assert_eq!(o.raw(b"x"), Some(Value::D(1.5)));
        let marker = 0x1234usize as *mut c_void;
        p.set_ptr(Method::SetVp, &k("r"), marker);
        assert_eq!(p.get_vp(&k("r")), Ok(marker));
        assert_eq!(p.get_ull(&k("r")), Ok(0x1234));
        assert_eq!(
            p.get_f(&k("r")),
            Err(NVSDK_NGX_Result_FAIL_InvalidParameter)
        );
        assert_eq!(
            p.get_vp(&k("n")),
            Err(NVSDK_NGX_Result_FAIL_InvalidParameter)
        );
        assert_eq!(p.get_i(&k("missing")), Err(NVSDK_NGX_Result_Fail));
        p.set_ull(&k("big"), 1 << 40);
        assert_eq!(p.get_ull(&k("big")), Ok(1 << 40));
        assert_eq!(p.get_ui(&k("big")), Ok(0));
        p.set_ui(&k("u"), 7);
        assert_eq!(p.get_i(&k("u")), Ok(7));
        p.reset();
        assert!(o.is_empty());
    }

    /// A float read back as a float keeps its bits, a signalling NaN's included, and an integer
    /// read as a float is rounded once, as C's conversion does. Found by the `params` fuzz
    /// target: both went through f64 first, so `SetF` of a signalling NaN read back quieted
    /// (0x7f800001 -> 0x7fc00001), and `SetULL(2^60 + 2^36 + 1)` read as `GetF` 2^60 (rounded to
    /// f64, then to f32: a tie) instead of 2^60 + 2^37.
    #[test]
    fn float_reads_keep_float_bits_and_round_integers_once() {
        let f = |v: Value| match convert(v, GetKind::F) {
            Some(Value::F(x)) => x.to_bits(),
            other => panic!("{other:?}"),
        };
        for bits in [
            0x7F80_0001u32,
            0xFFC0_1234,
            0x7FC0_0000,
            0x0000_0001,
            0x8000_0000,
        ] {
            assert_eq!(f(Value::F(f32::from_bits(bits))), bits, "{bits:#x}");
        }
        let big = (1u64 << 60) + (1 << 36) + 1;
        assert_eq!(
            f32::from_bits(f(Value::Ull(big))),
            ((1u64 << 60) + (1 << 37)) as f32
        );
        assert_eq!(f(Value::Ui(u32::MAX)), (u32::MAX as f32).to_bits());
        assert_eq!(f(Value::I(-16_777_217)), (-16_777_216f32).to_bits());
        assert_eq!(f(Value::D(0.1)), 0.1f32.to_bits());
    }

    #[test]
    fn missing_keys_leave_outputs_untouched() {
        let o = ParamObject::new(None);
        // SAFETY: `o` is a live parameter object of ours and outlives `p`.
        let p = unsafe { ParamRef::new(o.as_c()) }.expect("non-null");
        let mut v: u32 = 0xDEAD_BEEF;
        // SAFETY: out type matches GetUi.
        let r = unsafe { p.get_raw(Method::GetUi, &k("nope"), &mut v) };
        assert_eq!((r, v), (NVSDK_NGX_Result_Fail, 0xDEAD_BEEF));
        // SAFETY: NULL out pointer is rejected.
        let r = unsafe { p.get_raw::<u32>(Method::GetUi, &k("nope"), std::ptr::null_mut()) };
        assert_eq!(r, NVSDK_NGX_Result_FAIL_InvalidParameter);
    }

    #[test]
    fn reset_restores_defaults_of_populated_maps() {
        fn pop(o: &ParamObject) {
            o.set(b"Default", Value::I(1));
        }
        let o = ParamObject::new(Some(pop));
        o.set(b"Extra", Value::Ui(2));
        assert_eq!(o.len(), 2);
        o.reset();
        assert_eq!(o.len(), 1);
        assert_eq!(o.raw(b"Default"), Some(Value::I(1)));
    }
}
