//! text.rs -- moving strings and byte slices across the C boundary:
//! NUL-terminated copies of Rust strings and paths, and the text ravel
//! returns (owned by the caller, released with ravel_free).

use std::ffi::{c_char, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use ravel_sys as sys;

use crate::error::{Code, Error, Result};

/// A NUL-terminated copy of S; WHAT names it in the error if S holds a NUL
/// byte, which C could not see past.
pub(crate) fn c_string(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(Code::Invalid, format!("{what} {s:?} contains a NUL byte")))
}

/// A NUL-terminated copy of PATH's bytes.
pub(crate) fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::new(Code::Invalid, format!("path {} contains a NUL byte", path.display())))
}

/// The pointer to hand C for the bytes of B (never NULL; C reads none of
/// it when B is empty).
pub(crate) fn bytes_ptr(b: &[u8]) -> *const c_void {
    b.as_ptr().cast()
}

/// Copies the text ravel returned in P into a String and frees P.
///
/// # Safety
/// P is NULL or a NUL-terminated string ravel allocated for the caller,
/// not yet freed; it is freed here.
pub(crate) unsafe fn take_ravel_text(p: *mut c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    let text = CStr::from_ptr(p).to_string_lossy().into_owned();
    sys::ravel_free(p.cast());
    text
}
