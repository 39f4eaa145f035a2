//! The two functions libFuzzer calls, `LLVMFuzzerInitialize` and `LLVMFuzzerTestOneInput`, for
//! a target written as a closure over the input bytes ([`fuzz_target!`](crate::fuzz_target)).
//!
//! A panic anywhere aborts the process at once, from the panic hook, before any unwinding: the
//! library's C entry points catch panics (`ngx::guard`) and turn them into a result code, so a
//! panic that unwound back to them would be invisible to the fuzzer. An abort is what libFuzzer
//! reports as a crash, with the input that caused it.

use std::panic;

/// Installs the aborting panic hook (after the default hook has printed the message).
pub fn init() {
    let default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        default(info);
        std::process::abort();
    }));
}

/// Runs one input.
pub fn run(body: impl FnOnce()) -> i32 {
    if panic::catch_unwind(panic::AssertUnwindSafe(body)).is_err() {
        // The hook aborts first; this covers a hook replaced by the code under test.
        std::process::abort();
    }
    0
}

/// Defines the libFuzzer entry points of a target: `fuzz_target!(|data| { ... })`, where `data`
/// is the input as `&[u8]`. The target's crate must be `#![no_main]` (libFuzzer has the `main`).
#[macro_export]
macro_rules! fuzz_target {
    (|$data:ident| $body:block) => {
        /// libFuzzer: once, before the first input.
        #[no_mangle]
        pub extern "C" fn LLVMFuzzerInitialize(
            _argc: *mut ::std::os::raw::c_int,
            _argv: *mut *mut *mut ::std::os::raw::c_char,
        ) -> ::std::os::raw::c_int {
            $crate::harness::init();
            0
        }

        /// libFuzzer: one input.
        ///
        /// # Safety
        /// `ptr` points at `len` readable bytes (libFuzzer's contract).
        #[no_mangle]
        pub unsafe extern "C" fn LLVMFuzzerTestOneInput(
            ptr: *const u8,
            len: usize,
        ) -> ::std::os::raw::c_int {
            let $data: &[u8] = if ptr.is_null() || len == 0 {
                &[]
            } else {
                // SAFETY: libFuzzer passes `len` readable bytes at `ptr`, alive for the call.
                unsafe { ::std::slice::from_raw_parts(ptr, len) }
            };
            $crate::harness::run(|| $body)
        }
    };
}
