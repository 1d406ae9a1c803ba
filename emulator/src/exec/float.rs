//! Floating-point values as register bits: canonical NaNs, so that results are the same on
//! every host, the spec's `fmin`/`fmax` (NaN and signed-zero rules), and binary16 halves.

pub(super) fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

/// The bits of a binary64 result, with the canonical quiet NaN.
pub(super) fn bits64(x: f64) -> u64 {
    if x.is_nan() { 0x7FF8_0000_0000_0000 } else { x.to_bits() }
}

/// The bits of an arithmetic result. Every NaN an operation produces is the canonical quiet
/// NaN 0x7FC00000, whatever the host CPU would give, so results are the same on every machine.
pub(super) fn bits(x: f32) -> u32 {
    if x.is_nan() { 0x7FC0_0000 } else { x.to_bits() }
}

pub(super) fn fmin(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        // -0.0 is smaller than +0.0.
        if a.is_sign_negative() { a } else { b }
    } else if a < b {
        a
    } else {
        b
    }
}

pub(super) fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        if a.is_sign_positive() { a } else { b }
    } else if a > b {
        a
    } else {
        b
    }
}

pub(super) fn half_of(x: u32, hi: bool) -> f64 {
    let h = if hi { (x >> 16) as u16 } else { x as u16 };
    half::f16::from_bits(h).to_f64()
}

pub(super) fn set_half(old: u32, hi: bool, value: f64) -> u32 {
    // The canonical binary16 quiet NaN, as for binary32.
    let h = if value.is_nan() { 0x7E00 } else { u32::from(half::f16::from_f64(value).to_bits()) };
    if hi { (old & 0xFFFF) | (h << 16) } else { (old & 0xFFFF_0000) | h }
}
