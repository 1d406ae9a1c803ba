//! The dispatch options of `wave run` (`--grid 4,1,1 --arg out=0 --dump 0:u32:16` ...), parsed
//! in one place for the command line and for the `; wave-run:` comment the language server
//! reads. Errors are one line naming the option and the text at fault.

use crate::Elem;

/// `X[,Y[,Z]]` of positive integers (missing dimensions are 1).
pub fn parse_dims(text: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("{what} takes X[,Y[,Z]], found `{text}`"));
    }
    let mut out = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|v| *v >= 1)
            .ok_or_else(|| format!("{what}: `{p}` is not a positive integer"))?;
    }
    Ok(out)
}

/// A decimal or `0x` hexadecimal integer, `_` allowed as a separator.
pub fn parse_number(text: &str) -> Option<u64> {
    let t = text.trim().replace('_', "");
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// `NAME=VALUE`: an integer (negative allowed) or a float, as the 32 bits of the value.
pub fn parse_arg(text: &str) -> Result<(String, u32), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("--arg takes NAME=VALUE, found `{text}`"));
    };
    let v = value.trim();
    let bits = if let Some(n) = parse_number(v) {
        u32::try_from(n).map_err(|_| format!("--arg {name}: `{v}` does not fit in 32 bits"))?
    } else if let Some(neg) = v.strip_prefix('-').and_then(parse_number) {
        let n = i64::try_from(neg).ok().map(|n| -n).filter(|n| *n >= i64::from(i32::MIN));
        n.ok_or_else(|| format!("--arg {name}: `{v}` does not fit in 32 bits"))? as i32 as u32
    } else if let Ok(f) = v.parse::<f32>() {
        f.to_bits()
    } else {
        return Err(format!("--arg {name}: `{v}` is not an integer or a float"));
    };
    Ok((name.trim().to_owned(), bits))
}

/// A JSON string literal (for `wave run --json` and the language server's run results).
pub fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What `--dump OFFSET:TYPE:COUNT` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dump {
    /// Byte offset in device memory.
    pub offset: usize,
    /// Element type.
    pub elem: Elem,
    /// Number of elements.
    pub count: usize,
}

/// `OFFSET:TYPE:COUNT`.
pub fn parse_dump(text: &str) -> Result<Dump, String> {
    let parts: Vec<&str> = text.split(':').collect();
    let [offset, ty, count] = parts.as_slice() else {
        return Err(format!("--dump takes OFFSET:TYPE:COUNT, found `{text}`"));
    };
    let offset = parse_number(offset)
        .and_then(|o| usize::try_from(o).ok())
        .ok_or_else(|| format!("--dump: bad offset `{offset}`"))?;
    let elem = Elem::from_name(ty)
        .ok_or_else(|| format!("--dump: unknown type `{ty}` (u8 u16 u32 i32 u64 f16 f32)"))?;
    let count = parse_number(count)
        .and_then(|c| usize::try_from(c).ok())
        .ok_or_else(|| format!("--dump: bad count `{count}`"))?;
    Ok(Dump { offset, elem, count })
}

/// The options of a `; wave-run:` comment: a subset of `wave run`'s that describes a dispatch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// `--kernel`.
    pub kernel: Option<String>,
    /// `--grid`.
    pub grid: Option<[u32; 3]>,
    /// `--workgroup`.
    pub workgroup: Option<[u32; 3]>,
    /// `--wave-width`.
    pub wave_width: Option<u32>,
    /// `--device-memory`.
    pub device_memory: Option<usize>,
    /// `--arg`, in order.
    pub args: Vec<(String, u32)>,
    /// `--dump`, in order.
    pub dumps: Vec<Dump>,
    /// `--max-steps`.
    pub max_steps: Option<u64>,
}

/// Parses `wave run` options written as words (`--grid 4 --arg n=16` or `--grid=4`).
pub fn parse_run_options(text: &str) -> Result<RunOptions, String> {
    let mut out = RunOptions::default();
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        let (flag, inline) = match word.split_once('=') {
            Some((f, v)) if f.starts_with("--") && !matches!(f, "--arg") => (f, Some(v)),
            _ => (word, None),
        };
        let mut value = || -> Result<&str, String> {
            inline.or_else(|| words.next()).ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag {
            "--kernel" => out.kernel = Some(value()?.to_owned()),
            "--grid" => out.grid = Some(parse_dims(value()?, "--grid")?),
            "--workgroup" => out.workgroup = Some(parse_dims(value()?, "--workgroup")?),
            "--wave-width" => {
                let v = value()?;
                out.wave_width =
                    Some(v.parse().map_err(|_| format!("--wave-width: `{v}` is not a number"))?);
            }
            "--device-memory" => {
                let v = value()?;
                let n = parse_number(v)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| format!("--device-memory: `{v}` is not a number"))?;
                if n > crate::MAX_DEVICE_MEMORY {
                    return Err(format!(
                        "--device-memory {n} is above the emulator's {} bytes",
                        crate::MAX_DEVICE_MEMORY
                    ));
                }
                out.device_memory = Some(n);
            }
            "--arg" => {
                let (name, bits) = parse_arg(value()?)?;
                out.args.retain(|(n, _)| *n != name);
                out.args.push((name, bits));
            }
            "--dump" => out.dumps.push(parse_dump(value()?)?),
            "--max-steps" => {
                let v = value()?;
                out.max_steps = Some(
                    parse_number(v).ok_or_else(|| format!("--max-steps: `{v}` is not a number"))?,
                );
            }
            other => {
                return Err(format!(
                    "unknown option `{other}` (use --kernel, --grid, --workgroup, --wave-width, --device-memory, --arg, --dump, --max-steps)"
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_options_parse_like_the_command_line() {
        let o = parse_run_options("--grid 4,2 --workgroup=64 --arg out=0x100 --arg x=-1.5 --dump 256:f32:4 --wave-width 16")
            .expect("parses");
        assert_eq!(o.grid, Some([4, 2, 1]));
        assert_eq!(o.workgroup, Some([64, 1, 1]));
        assert_eq!(o.args, vec![("out".into(), 0x100), ("x".into(), (-1.5f32).to_bits())]);
        assert_eq!(o.dumps, vec![Dump { offset: 256, elem: Elem::F32, count: 4 }]);
        assert_eq!(o.wave_width, Some(16));
        for (bad, why) in [
            ("--grid 0", "--grid: `0` is not a positive integer"),
            ("--grid", "--grid needs a value"),
            ("--dump 0:u31:4", "unknown type `u31`"),
            ("--frobnicate 1", "unknown option `--frobnicate`"),
            ("--arg n", "--arg takes NAME=VALUE"),
        ] {
            let e = parse_run_options(bad).expect_err(bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
