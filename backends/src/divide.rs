//! Signed division by a constant without a division instruction, for the PTX backend.
//!
//! ptxas does not strength-reduce division: `div`/`rem` by an immediate, signed or unsigned,
//! become its generic reciprocal-based sequence (`I2F`, `MUFU.RCP`, `F2I`, two `IMAD.HI` and
//! two corrections, about 16 SASS instructions). NVVM does the reduction before ptxas, so CUDA
//! C++'s `k % 3` is a multiply-high and a shift. WAVE's `idiv`/`imod` by a constant are done
//! the same way here: a power of two by shifts, anything else by the multiply-high with a
//! "magic" number (Granlund and Montgomery; Warren, *Hacker's Delight*, 2nd ed., 10-1 to 10-4).
//!
//! [`Plan::quotient`] is the arithmetic the emitted PTX does, in Rust, so the tests check the
//! plan of every divisor against `i32::wrapping_div` without a GPU.

/// How `n / d` (truncating, wrapping at `i32::MIN / -1`) is computed for one constant `d != 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// `d == 1`.
    Same,
    /// `d == -1`: negation, which wraps for `i32::MIN`.
    Negate,
    /// `|d| == 2^k` (`1 <= k <= 31`): the dividend biased by `2^k - 1` when negative, shifted
    /// right arithmetically, negated when `d < 0`.
    Shift { k: u32, negative: bool },
    /// Anything else: `q = mulhi(n, magic)`, plus `n` (`adjust = 1`) or minus `n` (`-1`), shifted
    /// right arithmetically by `shift`, plus one when negative.
    Magic { magic: i32, adjust: i8, shift: u32 },
}

impl Plan {
    /// The plan for a divisor; `None` for 0 (that division is the general path's business).
    pub(crate) fn new(d: i32) -> Option<Plan> {
        Some(match d {
            0 => return None,
            1 => Plan::Same,
            -1 => Plan::Negate,
            _ if d.unsigned_abs().is_power_of_two() => {
                Plan::Shift { k: d.unsigned_abs().trailing_zeros(), negative: d < 0 }
            }
            _ => {
                let (magic, shift) = magic(d);
                let adjust = if d > 0 && magic < 0 {
                    1
                } else if d < 0 && magic > 0 {
                    -1
                } else {
                    0
                };
                Plan::Magic { magic, adjust, shift }
            }
        })
    }

    /// The quotient as the emitted code computes it (a model for the tests).
    #[cfg(test)]
    pub(crate) fn quotient(self, n: i32) -> i32 {
        match self {
            Plan::Same => n,
            Plan::Negate => n.wrapping_neg(),
            Plan::Shift { k, negative } => {
                let bias = ((n >> 31) as u32 >> (32 - k)) as i32;
                let q = n.wrapping_add(bias) >> k;
                if negative { q.wrapping_neg() } else { q }
            }
            Plan::Magic { magic, adjust, shift } => {
                let mut q = ((i64::from(n) * i64::from(magic)) >> 32) as i32;
                match adjust {
                    1 => q = q.wrapping_add(n),
                    -1 => q = q.wrapping_sub(n),
                    _ => {}
                }
                q >>= shift;
                q.wrapping_add((q as u32 >> 31) as i32)
            }
        }
    }

    /// PTX lines that put `n / d` into `q` (a register other than `n`), using `%t3` as scratch.
    pub(crate) fn emit(self, n: &str, q: &str) -> Vec<String> {
        let mut l = Vec::new();
        match self {
            Plan::Same => l.push(format!("mov.b32 {q}, {n};")),
            Plan::Negate => l.push(format!("neg.s32 {q}, {n};")),
            Plan::Shift { k, negative } => {
                l.push(format!("shr.s32 %t3, {n}, 31;"));
                l.push(format!("shr.u32 %t3, %t3, {};", 32 - k));
                l.push(format!("add.u32 %t3, {n}, %t3;"));
                l.push(format!("shr.s32 {q}, %t3, {k};"));
                if negative {
                    l.push(format!("neg.s32 {q}, {q};"));
                }
            }
            Plan::Magic { magic, adjust, shift } => {
                l.push(format!("mul.hi.s32 {q}, {n}, {magic};"));
                match adjust {
                    1 => l.push(format!("add.u32 {q}, {q}, {n};")),
                    -1 => l.push(format!("sub.u32 {q}, {q}, {n};")),
                    _ => {}
                }
                if shift > 0 {
                    l.push(format!("shr.s32 {q}, {q}, {shift};"));
                }
                l.push(format!("shr.u32 %t3, {q}, 31;"));
                l.push(format!("add.u32 {q}, {q}, %t3;"));
            }
        }
        l
    }
}

/// The magic number and shift of a signed divisor with `|d| >= 3` that is not a power of two
/// (Hacker's Delight, figure 10-1): the smallest `p >= 32` with `2^p > nc * (d - 2^p mod d)`,
/// where `nc` is the largest dividend with `nc mod d == d - 1`.
fn magic(d: i32) -> (i32, u32) {
    const TWO31: u32 = 1 << 31;
    let ad = d.unsigned_abs();
    let t = TWO31 + ((d as u32) >> 31);
    let anc = t - 1 - t % ad;
    let mut p = 31;
    let (mut q1, mut r1) = (TWO31 / anc, TWO31 % anc);
    let (mut q2, mut r2) = (TWO31 / ad, TWO31 % ad);
    loop {
        p += 1;
        q1 = q1.wrapping_mul(2);
        r1 = r1.wrapping_mul(2);
        if r1 >= anc {
            q1 = q1.wrapping_add(1);
            r1 = r1.wrapping_sub(anc);
        }
        q2 = q2.wrapping_mul(2);
        r2 = r2.wrapping_mul(2);
        if r2 >= ad {
            q2 = q2.wrapping_add(1);
            r2 = r2.wrapping_sub(ad);
        }
        let delta = ad - r2;
        if !(q1 < delta || (q1 == delta && r1 == 0)) {
            break;
        }
    }
    let m = q2.wrapping_add(1) as i32;
    (if d < 0 { m.wrapping_neg() } else { m }, p - 32)
}

#[cfg(test)]
mod tests {
    use super::Plan;

    /// Dividends at the edges, and a spread between them (a fixed xorshift sequence).
    fn dividends() -> Vec<i32> {
        let mut n: Vec<i32> = vec![0, 1, -1, 2, -2, 3, -3, i32::MAX, i32::MIN, i32::MIN + 1];
        n.extend((-1000..1000).collect::<Vec<_>>());
        let mut x: u32 = 0x9E37_79B9;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            n.push(x as i32);
        }
        n
    }

    fn divisors() -> Vec<i32> {
        let mut d: Vec<i32> = (-1100..=1100).filter(|&d| d != 0).collect();
        for k in 0..31 {
            for e in [-1, 0, 1] {
                let p = (1i64 << k) + e;
                d.extend([p as i32, (-p) as i32]);
            }
        }
        d.extend([i32::MAX, i32::MIN, i32::MIN + 1, 7 * 7 * 7 * 7 * 7 * 7 * 7, 641, 6_700_417]);
        d.retain(|&d| d != 0);
        d
    }

    #[test]
    fn every_plan_gives_the_truncating_quotient() {
        let ns = dividends();
        for d in divisors() {
            let plan = Plan::new(d).expect("a plan for every divisor but 0");
            for &n in &ns {
                assert_eq!(plan.quotient(n), n.wrapping_div(d), "{n} / {d} by {plan:?}");
            }
        }
    }

    #[test]
    fn zero_has_no_plan_and_small_divisors_have_the_textbook_magic() {
        assert_eq!(Plan::new(0), None);
        // Hacker's Delight, table 10-1.
        assert_eq!(Plan::new(3), Some(Plan::Magic { magic: 0x5555_5556, adjust: 0, shift: 0 }));
        assert_eq!(Plan::new(5), Some(Plan::Magic { magic: 0x6666_6667, adjust: 0, shift: 1 }));
        assert_eq!(
            Plan::new(7),
            Some(Plan::Magic { magic: 0x9249_2493_u32 as i32, adjust: 1, shift: 2 })
        );
        assert_eq!(
            Plan::new(-5),
            Some(Plan::Magic { magic: 0x9999_9999_u32 as i32, adjust: 0, shift: 1 })
        );
        assert_eq!(Plan::new(-8), Some(Plan::Shift { k: 3, negative: true }));
    }

    #[test]
    fn the_emitted_lines_follow_the_plan() {
        assert_eq!(
            Plan::new(7).unwrap().emit("%r1", "%t1"),
            [
                "mul.hi.s32 %t1, %r1, -1840700269;",
                "add.u32 %t1, %t1, %r1;",
                "shr.s32 %t1, %t1, 2;",
                "shr.u32 %t3, %t1, 31;",
                "add.u32 %t1, %t1, %t3;"
            ]
        );
        assert_eq!(
            Plan::new(-4).unwrap().emit("%r1", "%t1"),
            [
                "shr.s32 %t3, %r1, 31;",
                "shr.u32 %t3, %t3, 30;",
                "add.u32 %t3, %r1, %t3;",
                "shr.s32 %t1, %t3, 2;",
                "neg.s32 %t1, %t1;"
            ]
        );
    }
}
