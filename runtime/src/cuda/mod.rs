//! The CUDA device (the only module that calls cudarc).

use std::sync::Arc;

use crate::device::{Device, DeviceId};

/// A GPU found by [`detect`], and notes for the user (every GPU listed, which one is used).
pub struct Found {
    pub device: Arc<dyn Device>,
    pub notes: Vec<String>,
}

/// Find a CUDA GPU to use as device `id`; never panics: the error says why there is none.
pub fn detect(_id: DeviceId) -> Result<Found, String> {
    Err("this build has no CUDA device yet".into())
}
