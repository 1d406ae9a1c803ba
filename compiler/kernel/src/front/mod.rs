//! Frontends: one per kernel language, each to the same HIR.

pub mod python;
