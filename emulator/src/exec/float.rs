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

/// The bfloat16 half of `x` as a number (exact: a bfloat16 is the top half of a binary32).
pub(super) fn bf16_of(x: u32, hi: bool) -> f64 {
    let h = if hi { x >> 16 } else { x & 0xFFFF };
    f64::from(f32::from_bits(h << 16))
}

/// `old` with its `hi` or low half set to the bfloat16 `bits`.
pub(super) fn set_bf16(old: u32, hi: bool, bits: u16) -> u32 {
    let h = u32::from(bits);
    if hi { (old & 0xFFFF) | (h << 16) } else { (old & 0xFFFF_0000) | h }
}

/// `x + y` rounded once to bfloat16, to nearest even: the sum is rounded to odd at binary64
/// (the error of the binary64 sum, found exactly, says which way), then to odd at binary32,
/// then to nearest even at bfloat16; rounding to odd with two or more extra bits first makes
/// the last rounding the one a single rounding of the exact sum gives. `bma` passes an exact
/// product (two 8-bit significands fit binary64) as `x`.
pub(super) fn bf16_sum(x: f64, y: f64) -> u16 {
    let s = x + y;
    if !s.is_finite() {
        return bf16_from_f32(s as f32);
    }
    // TwoSum: `err` is exactly (x + y) - s.
    let b = s - x;
    let err = (x - (s - b)) + (y - b);
    let mut odd = s;
    if err != 0.0 && odd.to_bits() & 1 == 0 {
        // The exact sum lies between s and its neighbour toward err: take the odd one.
        odd = if err > 0.0 { s.next_up() } else { s.next_down() };
    }
    bf16_from_f32(f32_odd(odd))
}

/// `x` rounded to binary32 by rounding to odd (the neighbour with an odd last bit when
/// inexact).
fn f32_odd(x: f64) -> f32 {
    let r = x as f32;
    if !r.is_finite() || f64::from(r) == x || r.to_bits() & 1 == 1 {
        // Beyond the binary32 range the result is infinite whichever way: bfloat16 ends there too.
        return r;
    }
    if f64::from(r) > x { r.next_down() } else { r.next_up() }
}

/// A binary32 rounded to bfloat16, to nearest even; NaN gives the canonical quiet NaN 0x7FC0.
pub(super) fn bf16_from_f32(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return 0x7FC0;
    }
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}
