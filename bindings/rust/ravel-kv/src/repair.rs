//! repair.rs -- [`repair`]: salvaging a damaged database directory, and
//! its [`RepairReport`].

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;
use std::ptr;

use ravel_sys as sys;

use crate::error::{check, Result};
use crate::options::Options;
use crate::text::{c_path, take_ravel_text};

/// What a line of a repair's report says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RepairKind {
    /// What was found and done.
    Note,
    /// What was recovered.
    Kept,
    /// What was lost.
    Lost,
    /// What was kept but may be stale or wrong.
    Warn,
}

impl RepairKind {
    fn from_raw(kind: c_int) -> RepairKind {
        match kind {
            sys::RAVEL_REPAIR_KEPT => RepairKind::Kept,
            sys::RAVEL_REPAIR_LOST => RepairKind::Lost,
            sys::RAVEL_REPAIR_WARN => RepairKind::Warn,
            _ => RepairKind::Note,
        }
    }
}

/// What [`repair`] recovered and lost: per table file the entries kept and
/// each damaged block (its offset and key range), per WAL segment the
/// records replayed and dropped, and totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// The report's lines with their kinds, in order.
    pub lines: Vec<(RepairKind, String)>,
    /// The whole text.
    pub text: String,
}

impl RepairReport {
    /// The lines of kind [`RepairKind::Lost`].
    pub fn lost(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter(|(k, _)| *k == RepairKind::Lost).map(|(_, l)| l.as_str())
    }
}

unsafe extern "C" fn collect_line(ctx: *mut c_void, kind: c_int, line: *const c_char) {
    // SAFETY: CTX is the Vec repair() passed, alive for the call; LINE is
    // NUL-terminated for the callback's duration.
    let lines = unsafe { &mut *ctx.cast::<Vec<(RepairKind, String)>>() };
    let text = unsafe { CStr::from_ptr(line) }.to_string_lossy().into_owned();
    lines.push((RepairKind::from_raw(kind), text));
}

/// Salvages the damaged database directory DIR (a lost or damaged
/// manifest, WAL damage, partly damaged table files): keeps every entry
/// that verifies, moves every original file into `DIR/lost-repair-*/`
/// (deleting nothing) and returns the report of what was kept and lost.
/// OPTIONS (`None`: the defaults) shapes the new table files.
/// [`Code::Locked`](crate::Code::Locked), changing nothing, if the
/// database is open for writing (close its readers too);
/// [`Code::Invalid`](crate::Code::Invalid) if DIR is not a database
/// directory.
pub fn repair(dir: impl AsRef<Path>, options: Option<&Options>) -> Result<RepairReport> {
    let cdir = c_path(dir.as_ref())?;
    let opts = options.map_or(ptr::null(), |o| o.as_ptr());
    let mut lines: Vec<(RepairKind, String)> = Vec::new();
    let mut text: *mut c_char = ptr::null_mut();
    // SAFETY: CDIR is NUL-terminated; OPTS NULL or live; COLLECT_LINE only
    // pushes onto LINES, alive for the call; TEXT a valid out-pointer.
    let rc = unsafe {
        sys::ravel_repair(
            cdir.as_ptr(),
            opts,
            Some(collect_line),
            (&mut lines as *mut Vec<(RepairKind, String)>).cast(),
            &mut text,
        )
    };
    // SAFETY: TEXT is NULL or text ravel allocated for us.
    let text = unsafe { take_ravel_text(text) };
    check(rc)?;
    Ok(RepairReport { lines, text })
}
