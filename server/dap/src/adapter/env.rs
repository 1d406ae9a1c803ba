//! What lane expressions, log messages and variables see of a wave: its registers, predicates,
//! special registers and memory, lane by lane, and how values are shown and parsed.

use super::*;

/// One wave, seen by expressions.
pub(super) struct WaveEnv<'a> {
    pub(super) session: &'a wave_emulator::Session,
    pub(super) grid: [u32; 3],
    pub(super) size: [u32; 3],
    pub(super) wave: u32,
    pub(super) active: u64,
}

impl<'a> WaveEnv<'a> {
    pub(super) fn new(dbg: &'a Debugger, wave: u32) -> WaveEnv<'a> {
        let active = dbg.session.wave_active(wave);
        WaveEnv {
            session: &dbg.session,
            grid: dbg.dispatch.grid,
            size: workgroup_size(dbg),
            wave,
            active,
        }
    }

    /// Special register `i` (spec 3.3 order) of `lane`.
    pub(super) fn special_at(&self, lane: u32, i: usize) -> u32 {
        let w = self.session.wave_width();
        let [x, y, z] = self.size;
        let t = self.wave * w + lane;
        let wg = self.session.workgroup();
        match i {
            0 => t % x.max(1),
            1 => (t / x.max(1)) % y.max(1),
            2 => t / (x * y).max(1),
            3 => self.wave,
            4 => lane,
            5..=7 => wg[i - 5],
            8 => x,
            9 => y,
            10 => z,
            11..=13 => self.grid[i - 11],
            14 => w,
            15 => (x * y * z).div_ceil(w.max(1)),
            // sr_mma_*: CAP_MMA is absent, so they read 0.
            _ => 0,
        }
    }
}

impl Env for WaveEnv<'_> {
    fn width(&self) -> u32 {
        self.session.wave_width()
    }
    fn wave(&self) -> u32 {
        self.wave
    }
    fn active(&self) -> u64 {
        self.active
    }
    fn register(&self, r: u16, lane: u32) -> Option<u32> {
        self.session.register(self.wave, r, lane)
    }
    fn predicate(&self, p: u8, lane: u32) -> Option<bool> {
        let preds = self.session.predicates(self.wave)?;
        preds.get(usize::from(p)).map(|m| m >> lane & 1 == 1)
    }
    fn special(&self, name: &str, lane: u32) -> Option<u32> {
        let i = SPECIALS.iter().position(|s| *s == name)?;
        Some(self.special_at(lane, i))
    }
    fn memory(&self, local: bool, addr: u64) -> Option<u32> {
        let mem = if local { self.session.local() } else { self.session.device() };
        let a = usize::try_from(addr).ok()?;
        let b = mem.get(a..a.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The workgroup size of the dispatch.
pub(super) fn workgroup_size(dbg: &Debugger) -> [u32; 3] {
    let kernel = dbg
        .dispatch
        .kernel
        .as_ref()
        .and_then(|k| dbg.module.kernels.iter().find(|x| &x.name == k))
        .or(dbg.module.kernels.first());
    dbg.dispatch.workgroup.or(kernel.and_then(|k| k.workgroup_size)).unwrap_or([1, 1, 1])
}

/// Special register `i` of `lane` in `wave`.
pub(super) fn special(dbg: &Debugger, wave: u32, lane: u32, i: usize) -> u32 {
    WaveEnv::new(dbg, wave).special_at(lane, i)
}

/// The lanes for which breakpoint `b` holds: its condition in the active lanes (or, in focus
/// mode, the focus lane only).
pub(super) fn lanes_hit(
    b: &Breakpoint,
    env: &WaveEnv<'_>,
    focus: u32,
    pc: u32,
) -> Result<u64, String> {
    let lanes = match b.mode {
        Mode::Any => env.active,
        Mode::Focus => env.active & (1u64 << focus.min(63)),
    };
    let at_pc = b.by_pc.iter().find(|(p, _)| *p == pc).map(|(_, e)| e);
    let Some(cond) = at_pc.or(b.condition.as_ref()) else { return Ok(lanes) };
    let mut mask = 0;
    for l in 0..env.width() {
        if lanes >> l & 1 == 1 && expr::eval(cond, env, l)?.truthy() {
            mask |= 1 << l;
        }
    }
    Ok(mask)
}

pub(super) fn lanes_text(mask: u64, w: u32) -> String {
    let lanes: Vec<String> = (0..w).filter(|l| mask >> l & 1 == 1).map(|l| l.to_string()).collect();
    if lanes.len() > 12 {
        format!("{} lanes", lanes.len())
    } else if lanes.is_empty() {
        "no lane".into()
    } else {
        format!("lane{} {}", if lanes.len() == 1 { "" } else { "s" }, lanes.join(", "))
    }
}

/// The value of a source variable in `lane`, as its type writes it.
pub(super) fn var_value(
    session: &wave_emulator::Session,
    wave: u32,
    v: &wave_wbin::VarLocation,
    lane: u32,
    hex: bool,
) -> String {
    use wave_wbin::VarType;
    let bits = session.register(wave, u16::from(v.register), lane).unwrap_or(0);
    if hex {
        return format!("0x{bits:x}");
    }
    match v.ty {
        VarType::U32 => bits.to_string(),
        VarType::I32 => (bits as i32).to_string(),
        VarType::F32 => format!("{:?}", f32::from_bits(bits)),
        VarType::Bool => (bits & 1 == 1).to_string(),
        VarType::F16 => format!("{:?}", half::f16::from_bits(bits as u16).to_f32()),
        VarType::F64 => {
            let high = session.register(wave, u16::from(v.register) + 1, lane).unwrap_or(0);
            format!("{:?}", f64::from_bits(u64::from(high) << 32 | u64::from(bits)))
        }
    }
}

pub(super) fn format_bits(bits: u32, hex: bool) -> String {
    if hex {
        format!("0x{bits:08x}")
    } else {
        format!("{bits} (0x{bits:x}, {:?}f)", f32::from_bits(bits))
    }
}

/// Parses a value typed by the user: an integer (decimal, `0x`, negative) or a float.
pub(super) fn parse_bits(text: &str) -> Option<u32> {
    let t = text.trim();
    if let Some(n) = wave_conformance::options::parse_number(t) {
        return u32::try_from(n).ok();
    }
    if let Some(n) = t.strip_prefix('-').and_then(wave_conformance::options::parse_number) {
        return i32::try_from(-(n as i64)).ok().map(|v| v as u32);
    }
    t.trim_end_matches('f').parse::<f32>().ok().map(f32::to_bits)
}

/// A log message with each `{expression}` replaced by its value in `lane`.
pub(super) fn interpolate(message: &str, env: &WaveEnv<'_>, lane: u32) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let text = &rest[open + 1..open + close];
        match expr::parse(text).and_then(|e| expr::eval(&e, env, lane)) {
            Ok(v) => out.push_str(&v.to_string()),
            Err(e) => out.push_str(&format!("<{text}: {e}>")),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}
