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

#[cfg(test)]
mod tests {
    use super::{bf16_from_f32, bf16_sum};

    /// bfloat16 bits of sign, exponent `e` (unbiased) and 7-bit fraction `m` (normal).
    fn bf16(negative: bool, e: i32, m: u32) -> u16 {
        (u16::from(negative) << 15) | (((e + 127) as u16) << 7) | m as u16
    }

    fn value(h: u16) -> f64 {
        f64::from(f32::from_bits(u32::from(h) << 16))
    }

    /// `n * 2^-scale` rounded to bfloat16, to nearest even, exactly (normal range only).
    fn round(n: i128, scale: i32) -> u16 {
        if n == 0 {
            return 0;
        }
        let (negative, a) = (n < 0, n.unsigned_abs());
        let len = 128 - a.leading_zeros() as i32;
        let shift = len - 8;
        let mut q = if shift > 0 {
            let q = a >> shift;
            let rem = a & ((1u128 << shift) - 1);
            let half = 1u128 << (shift - 1);
            q + u128::from(rem > half || (rem == half && q & 1 == 1))
        } else {
            a << -shift
        };
        let mut e = len - 1 - scale;
        if q == 256 {
            q = 128;
            e += 1;
        }
        bf16(negative, e, (q as u32) & 0x7F)
    }

    /// `a * b + c` rounded once, against exact integer arithmetic: random operands whose
    /// exponents put the addend anywhere from far above the product to 60 binades below it,
    /// where a double rounding through binary64 or binary32 would show.
    #[test]
    fn bf16_multiply_add_rounds_once() {
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut midpoints = 0;
        for _ in 0..200_000 {
            let r = next();
            let (ea, eb) = ((r % 41) as i32 - 20, ((r >> 8) % 41) as i32 - 20);
            // The addend's exponent relative to the product's: 60 binades below to 20 above.
            let d = ((r >> 16) % 81) as i32 - 60;
            let (ma, mb, mc) =
                ((r >> 24) as u32 & 0x7F, (r >> 32) as u32 & 0x7F, (r >> 40) as u32 & 0x7F);
            let a = bf16(r >> 48 & 1 == 1, ea, ma);
            let b = bf16(r >> 49 & 1 == 1, eb, mb);
            let c = bf16(r >> 50 & 1 == 1, ea + eb + d, mc);
            let sig = |h: u16| {
                let s = i128::from(128 + (h & 0x7F));
                if h & 0x8000 != 0 { -s } else { s }
            };
            // Exactly: 2^(ea + eb - 14) * (sa * sb + sc * 2^(d + 7)), as an integer times
            // 2^(ea + eb - 67).
            let exact = ((sig(a) * sig(b)) << 53) + (sig(c) << (d + 60));
            let want = round(exact, 67 - ea - eb);
            let got = bf16_sum(value(a) * value(b), value(c));
            assert_eq!(want, got, "{a:04x} * {b:04x} + {c:04x}");
            // A product on a midpoint, nudged by a far smaller addend: a double rounding case.
            let p = sig(a) * sig(b);
            if p.unsigned_abs() & 0x7F == 0x40 && d < -40 {
                midpoints += 1;
            }
        }
        assert!(midpoints > 100, "only {midpoints} midpoint cases");
        // The conversion: ties to even, NaN canonical, overflow to infinity.
        assert_eq!(bf16_from_f32(f32::from_bits(0x3F80_8000)), 0x3F80);
        assert_eq!(bf16_from_f32(f32::from_bits(0x3F81_8000)), 0x3F82);
        assert_eq!(bf16_from_f32(f32::from_bits(0x7F7F_FFFF)), 0x7F80);
        assert_eq!(bf16_from_f32(f32::NAN), 0x7FC0);
        assert_eq!(bf16_sum(f64::INFINITY, f64::NEG_INFINITY), 0x7FC0);
        assert_eq!(bf16_sum(-0.0, -0.0), 0x8000);
    }
}
