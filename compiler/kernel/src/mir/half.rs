//! IEEE binary16: the bits of the `f16` nearest to a value, and the value of `f16` bits. MIR
//! holds every float constant as an `f64`; legalisation rounds `f16` constants with these,
//! and LIR writes them as immediates.

/// The value of `f16` bits.
pub fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    sign * match exp {
        0 => mant * 2f64.powi(-24),
        0x1f if mant == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        e => (1.0 + mant / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The bits of the `f16` nearest to `x` (ties to even; overflow to infinity).
pub fn f16_bits(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = bits & ((1 << 52) - 1);
    if exp == 0x7ff {
        // Infinity or NaN (a NaN stays quiet).
        return sign | 0x7c00 | if mant != 0 { 0x200 } else { 0 };
    }
    // The exponent f16 would give it (bias 15).
    let e = exp - 1023 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    let (m, shift) = if e <= 0 {
        // Subnormal or zero: the implicit bit joins the mantissa, shifted further.
        if e < -11 {
            return sign;
        }
        (mant | (1 << 52), (42 + 1 - e) as u32)
    } else {
        (mant, 42u32)
    };
    let half = 1u64 << (shift - 1);
    let rest = m & ((1u64 << shift) - 1);
    let mut r = m >> shift;
    if rest > half || (rest == half && r & 1 == 1) {
        r += 1;
    }
    if e <= 0 {
        sign | r as u16
    } else {
        // A carry out of the mantissa moves into the exponent (0x7c00 is infinity).
        sign | (((e as u64) << 10) + r) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::f16_bits;

    #[test]
    fn f16_bits_round_to_nearest_even() {
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-2.0), 0xc000);
        assert_eq!(f16_bits(0.0), 0x0000);
        assert_eq!(f16_bits(65504.0), 0x7bff);
        assert_eq!(f16_bits(65520.0), 0x7c00, "halfway to the next power: infinity");
        assert_eq!(f16_bits(1e9), 0x7c00);
        assert_eq!(f16_bits(5.960464477539063e-8), 0x0001, "the smallest subnormal");
        assert_eq!(f16_bits(2.0f64.powi(-25)), 0x0000, "half of it: ties to even, zero");
        assert_eq!(f16_bits(0.1), 0x2e66);
        assert_eq!(f16_bits(1.0 + 2.0f64.powi(-11)), 0x3c00, "a tie rounds to even");
        assert_eq!(f16_bits(1.0 + 3.0 * 2.0f64.powi(-11)), 0x3c02);
        assert_eq!(f16_bits(f64::INFINITY), 0x7c00);
        for h in [0x0001u16, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0x7bff, 0xc000, 0x2e66] {
            assert_eq!(f16_bits(super::f16_value(h)), h, "{h:#06x} round trips");
        }
    }
}
