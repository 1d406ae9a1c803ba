//! The binary32 transcendentals (`exp2`, `log2`, `sin`/`cos`) as module-level PTX functions,
//! computed in binary64 and rounded once; written only when a kernel calls them.

use std::fmt::Write as _;

use crate::Out;

/// Module-level helper functions a kernel called.
#[derive(Clone, Copy, Default)]
pub(super) struct Helpers {
    pub(super) sin: bool,
    pub(super) exp2: bool,
    pub(super) log2: bool,
}

impl Helpers {
    /// The binary32 transcendentals, computed in binary64 and rounded once.
    pub(super) fn write(self, out: &mut Out) {
        let mut s = String::new();
        if self.exp2 {
            s.push_str(EXP2);
        }
        if self.log2 {
            s.push_str(LOG2);
        }
        if self.sin {
            s.push_str(SIN_COS);
        }
        for line in s.lines() {
            out.flush_left(line);
        }
        let _ = writeln!(String::new());
    }
}

/// 2^x: k = rint(x), 2^(x-k) by its Taylor series (|x-k| <= 0.5, 11 terms: error below
/// 1e-13), times 2^k built from exponent bits.
pub(super) const EXP2: &str = r"
// wave_exp2f: binary32 2^x, computed in binary64 and rounded once.
.func (.param .b32 out) wave_exp2f(.param .b32 in)
{
    .reg .b32 %x, %r<4>;
    .reg .pred %p<4>;
    .reg .f64 %d<8>;
    .reg .b64 %b<4>;
    ld.param.b32 %x, [in];
    cvt.f64.f32 %d0, %x;
    setp.nan.f64 %p0, %d0, %d0;
    @%p0 bra $done_nan;
    setp.ge.f64 %p1, %d0, 0d4060000000000000;   // x >= 128: +inf
    @%p1 bra $done_inf;
    setp.lt.f64 %p2, %d0, 0dC062E00000000000;   // x < -151: +0
    @%p2 bra $done_zero;
    cvt.rni.f64.f64 %d1, %d0;                    // k
    sub.rn.f64 %d2, %d0, %d1;                    // f in [-0.5, 0.5]
    mul.rn.f64 %d2, %d2, 0d3FE62E42FEFA39EF;     // f * ln 2
    // e^y, y = f ln 2, Horner over 1/n!, n = 12..0
    mov.f64 %d3, 0d3E21EED8EFF8D898;            // 1/12!
    fma.rn.f64 %d3, %d3, %d2, 0d3E5AE64567F544E4; // 1/11!
    fma.rn.f64 %d3, %d3, %d2, 0d3E927E4FB7789F5C; // 1/10!
    fma.rn.f64 %d3, %d3, %d2, 0d3EC71DE3A556C734; // 1/9!
    fma.rn.f64 %d3, %d3, %d2, 0d3EFA01A01A01A01A; // 1/8!
    fma.rn.f64 %d3, %d3, %d2, 0d3F2A01A01A01A01A; // 1/7!
    fma.rn.f64 %d3, %d3, %d2, 0d3F56C16C16C16C17; // 1/6!
    fma.rn.f64 %d3, %d3, %d2, 0d3F81111111111111; // 1/5!
    fma.rn.f64 %d3, %d3, %d2, 0d3FA5555555555555; // 1/4!
    fma.rn.f64 %d3, %d3, %d2, 0d3FC5555555555555; // 1/3!
    fma.rn.f64 %d3, %d3, %d2, 0d3FE0000000000000; // 1/2!
    fma.rn.f64 %d3, %d3, %d2, 0d3FF0000000000000; // 1/1!
    fma.rn.f64 %d3, %d3, %d2, 0d3FF0000000000000; // 1/0!
    cvt.rni.s32.f64 %r0, %d1;
    add.s32 %r0, %r0, 1023;
    cvt.u64.u32 %b0, %r0;
    shl.b64 %b0, %b0, 52;
    mov.b64 %d4, %b0;                            // 2^k
    mul.rn.f64 %d3, %d3, %d4;
    cvt.rn.f32.f64 %x, %d3;
    bra $done;
$done_nan:
    mov.b32 %x, 0x7FC00000;
    bra $done;
$done_inf:
    mov.b32 %x, 0x7F800000;
    bra $done;
$done_zero:
    mov.b32 %x, 0;
$done:
    st.param.b32 [out], %x;
    ret;
}
";

/// log2 x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m-1)/(m+1),
/// |s| <= 0.172, by its series to s^17 (error below 1e-14).
pub(super) const LOG2: &str = r"
// wave_log2f: binary32 log2(x), computed in binary64 and rounded once.
.func (.param .b32 out) wave_log2f(.param .b32 in)
{
    .reg .b32 %x, %r<4>;
    .reg .pred %p<4>;
    .reg .f64 %d<10>;
    .reg .b64 %b<4>;
    ld.param.b32 %x, [in];
    cvt.f64.f32 %d0, %x;
    setp.nan.f64 %p0, %d0, %d0;
    @%p0 bra $done_nan;
    setp.lt.f64 %p0, %d0, 0d0000000000000000;
    @%p0 bra $done_nan;
    setp.eq.f64 %p0, %d0, 0d0000000000000000;
    @%p0 bra $done_minf;
    setp.eq.f64 %p0, %d0, 0d7FF0000000000000;
    @%p0 bra $done_inf;
    mov.b64 %b0, %d0;
    shr.u64 %b1, %b0, 52;
    cvt.u32.u64 %r0, %b1;
    sub.s32 %r0, %r0, 1023;                      // e
    and.b64 %b0, %b0, 0x000FFFFFFFFFFFFF;
    or.b64 %b0, %b0, 0x3FF0000000000000;
    mov.b64 %d1, %b0;                            // m in [1, 2)
    setp.gt.f64 %p1, %d1, 0d3FF6A09E667F3BCD;    // m > sqrt(2)
    @%p1 mul.rn.f64 %d1, %d1, 0d3FE0000000000000;
    @%p1 add.s32 %r0, %r0, 1;
    sub.rn.f64 %d2, %d1, 0d3FF0000000000000;
    add.rn.f64 %d3, %d1, 0d3FF0000000000000;
    div.rn.f64 %d2, %d2, %d3;                    // s
    mul.rn.f64 %d3, %d2, %d2;                    // s^2
    mov.f64 %d4, 0d3FAE1E1E1E1E1E1E;            // 1/17
    fma.rn.f64 %d4, %d4, %d3, 0d3FB1111111111111; // 1/15
    fma.rn.f64 %d4, %d4, %d3, 0d3FB3B13B13B13B14; // 1/13
    fma.rn.f64 %d4, %d4, %d3, 0d3FB745D1745D1746; // 1/11
    fma.rn.f64 %d4, %d4, %d3, 0d3FBC71C71C71C71C; // 1/9
    fma.rn.f64 %d4, %d4, %d3, 0d3FC2492492492492; // 1/7
    fma.rn.f64 %d4, %d4, %d3, 0d3FC999999999999A; // 1/5
    fma.rn.f64 %d4, %d4, %d3, 0d3FD5555555555555; // 1/3
    fma.rn.f64 %d4, %d4, %d3, 0d3FF0000000000000; // 1
    mul.rn.f64 %d4, %d4, %d2;                    // atanh(s)
    mul.rn.f64 %d4, %d4, 0d40071547652B82FE;     // 2 / ln 2
    cvt.rn.f64.s32 %d5, %r0;
    add.rn.f64 %d4, %d4, %d5;
    cvt.rn.f32.f64 %x, %d4;
    bra $done;
$done_nan:
    mov.b32 %x, 0x7FC00000;
    bra $done;
$done_minf:
    mov.b32 %x, 0xFF800000;
    bra $done;
$done_inf:
    mov.b32 %x, 0x7F800000;
$done:
    st.param.b32 [out], %x;
    ret;
}
";

/// sin and cos: reduction by pi/2 in binary64, Cody-Waite (three 29-bit parts of pi/2) below
/// 2^24 and Payne-Hanek (a 96-bit window of 2/pi) above, then Taylor polynomials on
/// [-pi/4, pi/4] (errors below 1e-16). A model of this code in Python, run on 200,000 random
/// inputs, matched the correctly rounded results exactly (docs/backends/ptx.md).
pub(super) const SIN_COS: &str = r"
// 2/pi in binary, 32 bits a word, starting after the binary point (two zero words first).
.const .align 4 .b32 wave_two_over_pi[12] = { 0, 0, 0xA2F9836E, 0x4E441529, 0xFC2757D1,
    0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB, 0xDEBBC561, 0xB7246E3A, 0x424DD2E0 };

// wave_trigf: binary32 sin (which = 0) or cos (which = 1), computed in binary64 and rounded
// once. x = r + q pi/2 with |r| <= pi/4; cos x = sin(x + pi/2) adds `which` to q.
.func (.param .b32 out) wave_trigf(.param .b32 in, .param .b32 which)
{
    .reg .b32 %x, %e, %m, %w<4>, %s, %q, %t<8>;
    .reg .pred %p<4>;
    .reg .f64 %d<4>, %r2, %sn, %cs, %v;
    .reg .b64 %b<8>, %addr;
    ld.param.b32 %x, [in];
    and.b32 %t0, %x, 0x7FFFFFFF;
    setp.ge.u32 %p0, %t0, 0x7F800000;            // NaN or infinity: NaN
    @%p0 bra $nan;
    ld.param.b32 %t7, [which];
    setp.eq.u32 %p0, %t0, 0;                     // sin(+-0) = +-0 (the reduction loses the sign)
    setp.eq.and.u32 %p0, %t7, 0, %p0;
    @%p0 bra $done;
    setp.ge.u32 %p0, %t0, 0x4B800000;            // |x| >= 2^24: Payne-Hanek
    @%p0 bra $large;
    // Cody-Waite: k = rint(x 2/pi), r = x - k pi/2 with pi/2 in three 29-bit parts.
    cvt.f64.f32 %d0, %x;
    mul.rn.f64 %d1, %d0, 0d3FE45F306DC9C883;
    cvt.rni.f64.f64 %d1, %d1;
    neg.f64 %d2, %d1;
    fma.rn.f64 %d0, %d2, 0d3FF921FB54000000, %d0;
    fma.rn.f64 %d0, %d2, 0d3E110B4611000000, %d0;
    fma.rn.f64 %d0, %d2, 0d3C44C4C6628B80DC, %d0;
    cvt.rni.s32.f64 %q, %d1;
    bra $reduced;
$large:
    // x = M 2^E (M: the 24-bit significand, E >= 1); the bits of 2/pi from bit E-1 on,
    // a 96-bit window W, give x 2/pi mod 4 = M W / 2^94.
    shr.u32 %e, %t0, 23;
    sub.s32 %e, %e, 150;
    and.b32 %m, %t0, 0x007FFFFF;
    or.b32 %m, %m, 0x00800000;
    add.s32 %s, %e, 62;                          // table bit of 2/pi's bit E-1
    shr.u32 %t1, %s, 5;
    and.b32 %t2, %s, 31;
    mov.u64 %addr, wave_two_over_pi;
    mul.wide.u32 %b0, %t1, 4;
    add.s64 %addr, %addr, %b0;
    ld.const.b32 %t3, [%addr];
    ld.const.b32 %t4, [%addr+4];
    ld.const.b32 %t5, [%addr+8];
    ld.const.b32 %t6, [%addr+12];
    shf.l.wrap.b32 %w0, %t4, %t3, %t2;
    shf.l.wrap.b32 %w1, %t5, %t4, %t2;
    shf.l.wrap.b32 %w2, %t6, %t5, %t2;
    mul.wide.u32 %b1, %m, %w2;
    mul.wide.u32 %b2, %m, %w1;
    mul.wide.u32 %b3, %m, %w0;
    shr.u64 %b4, %b1, 32;
    add.u64 %b2, %b2, %b4;
    shr.u64 %b4, %b2, 32;
    add.u64 %b3, %b3, %b4;
    cvt.u32.u64 %t1, %b2;                        // product bits 32..63
    cvt.u32.u64 %t2, %b3;                        // product bits 64..95
    shr.u32 %q, %t2, 30;                         // bits 94 and 95: the quadrant
    and.b32 %t2, %t2, 0x3FFFFFFF;
    mov.b64 %b5, {%t1, %t2};                     // the fraction's top 62 bits
    cvt.rn.f64.u64 %d0, %b5;
    mul.rn.f64 %d0, %d0, 0d3C10000000000000;     // * 2^-62
    setp.ge.f64 %p1, %d0, 0d3FE0000000000000;
    @%p1 sub.rn.f64 %d0, %d0, 0d3FF0000000000000;
    @%p1 add.u32 %q, %q, 1;
    mul.rn.f64 %d0, %d0, 0d3FF921FB54442D18;     // * pi/2
    setp.lt.s32 %p2, %x, 0;
    @%p2 neg.f64 %d0, %d0;
    @%p2 neg.s32 %q, %q;
$reduced:
    add.u32 %q, %q, %t7;
    and.b32 %q, %q, 3;
    // sin r and cos r: Taylor polynomials to r^17 and r^16 (errors below 1e-16).
    mul.rn.f64 %r2, %d0, %d0;
    mov.f64 %sn, 0d3CE952C77030AD4A;
    fma.rn.f64 %sn, %sn, %r2, 0dBD6AE7F3E733B81F;
    fma.rn.f64 %sn, %sn, %r2, 0d3DE6124613A86D09;
    fma.rn.f64 %sn, %sn, %r2, 0dBE5AE64567F544E4;
    fma.rn.f64 %sn, %sn, %r2, 0d3EC71DE3A556C734;
    fma.rn.f64 %sn, %sn, %r2, 0dBF2A01A01A01A01A;
    fma.rn.f64 %sn, %sn, %r2, 0d3F81111111111111;
    fma.rn.f64 %sn, %sn, %r2, 0dBFC5555555555555;
    fma.rn.f64 %sn, %sn, %r2, 0d3FF0000000000000;
    mul.rn.f64 %sn, %sn, %d0;
    mov.f64 %cs, 0d3D2AE7F3E733B81F;
    fma.rn.f64 %cs, %cs, %r2, 0dBDA93974A8C07C9D;
    fma.rn.f64 %cs, %cs, %r2, 0d3E21EED8EFF8D898;
    fma.rn.f64 %cs, %cs, %r2, 0dBE927E4FB7789F5C;
    fma.rn.f64 %cs, %cs, %r2, 0d3EFA01A01A01A01A;
    fma.rn.f64 %cs, %cs, %r2, 0dBF56C16C16C16C17;
    fma.rn.f64 %cs, %cs, %r2, 0d3FA5555555555555;
    fma.rn.f64 %cs, %cs, %r2, 0dBFE0000000000000;
    fma.rn.f64 %cs, %cs, %r2, 0d3FF0000000000000;
    // sin(r + q pi/2) = sin r, cos r, -sin r, -cos r.
    mov.f64 %v, %sn;
    setp.eq.u32 %p1, %q, 1;
    @%p1 mov.f64 %v, %cs;
    setp.eq.u32 %p1, %q, 2;
    @%p1 neg.f64 %v, %sn;
    setp.eq.u32 %p1, %q, 3;
    @%p1 neg.f64 %v, %cs;
    cvt.rn.f32.f64 %x, %v;
    bra $done;
$nan:
    mov.b32 %x, 0x7FC00000;
$done:
    st.param.b32 [out], %x;
    ret;
}
";
