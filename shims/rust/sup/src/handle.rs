use std::ptr::NonNull;

use crate::error::{Result, cvt};

/// The owner of one `sup_proc`, shared (in an `Arc`) by the [`Child`] and
/// its readers and writer; the last one dropped releases it.
///
/// [`Child`]: crate::Child
pub(crate) struct Handle(NonNull<sup_sys::sup_proc>);

// SAFETY: `sup_proc` is built for concurrent use (include/sup.h, THREAD
// MODEL): every function on a handle may be called from any thread and
// concurrently, except that no call may *begin* once sup_release has begun.
// The only sup_release is in `Drop`, which runs when the last `Arc<Handle>`
// goes, so no other reference exists and no call can begin after it. The
// handle's memory is not tied to the creating thread.
unsafe impl Send for Handle {}
// SAFETY: as above; every use goes through `&self` and calls only functions
// the header declares safe to call concurrently on one handle.
unsafe impl Sync for Handle {}

impl Handle {
    pub(crate) fn new(p: NonNull<sup_sys::sup_proc>) -> Handle {
        Handle(p)
    }

    pub(crate) fn raw(&self) -> *mut sup_sys::sup_proc {
        self.0.as_ptr()
    }

    /// `sup_poll`: true when final.
    pub(crate) fn poll(&self, timeout_ms: i32) -> Result<bool> {
        // SAFETY: the handle is live while self is.
        Ok(cvt(unsafe { sup_sys::sup_poll(self.raw(), timeout_ms) })? == 1)
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the last reference: no call on the handle is in progress or
        // can begin. Blocks briefly if the child still runs (it is aborted).
        unsafe { sup_sys::sup_release(self.raw()) }
    }
}
