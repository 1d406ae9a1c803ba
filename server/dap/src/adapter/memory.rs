//! `readMemory` and `writeMemory`: device and Local Memory by memory reference, in base64.

use super::*;

pub(super) fn parse_address(text: &str) -> Option<u32> {
    let t = text.trim();
    match t.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// `device`, `local`, or `device+0x40`.
pub(super) fn reference_base(reference: &str) -> Result<(&'static str, usize), String> {
    let (name, plus) = match reference.split_once('+') {
        Some((n, o)) => (
            n.trim(),
            parse_address(o).ok_or_else(|| format!("bad offset in `{reference}`"))? as usize,
        ),
        None => (reference.trim(), 0),
    };
    match name {
        "device" => Ok(("device", plus)),
        "local" => Ok(("local", plus)),
        other => Err(format!("unknown memory `{other}`: use `device` or `local`")),
    }
}

pub(super) fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The bytes of base64 `text` (whitespace allowed), or `None` when it is not base64.
pub(super) fn unbase64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let clean: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(clean).ok()
}

impl Adapter {
    pub(super) fn memory_mut(&mut self, reference: &str) -> Result<&mut [u8], String> {
        let dbg = self.dbg_mut()?;
        match reference {
            "device" => Ok(dbg.session.device_mut()),
            "local" => Ok(dbg.session.local_mut()),
            other => Err(format!("unknown memory `{other}`: use `device` or `local`")),
        }
    }

    pub(super) fn read_memory(&mut self, args: &Value) -> Reply {
        self.stopped()?;
        let reference = args
            .get("memoryReference")
            .and_then(Value::as_str)
            .ok_or("`memoryReference` is missing")?
            .to_owned();
        let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
        let count = args.get("count").and_then(Value::as_u64).ok_or("`count` is missing")? as usize;
        let base = reference_base(&reference)?;
        let mem = self.memory_mut(base.0)?;
        let start = (base.1 as i64 + offset).max(0) as usize;
        let end = start.saturating_add(count).min(mem.len());
        let data = if start < end { &mem[start..end] } else { &[][..] };
        Ok(
            json!({"address": format!("0x{start:x}"), "data": base64(data), "unreadableBytes": count - data.len()}),
        )
    }

    pub(super) fn write_memory(&mut self, args: &Value) -> Reply {
        self.stopped()?;
        let reference = args
            .get("memoryReference")
            .and_then(Value::as_str)
            .ok_or("`memoryReference` is missing")?
            .to_owned();
        let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
        let data = args.get("data").and_then(Value::as_str).ok_or("`data` is missing")?;
        let bytes = unbase64(data).ok_or("`data` is not base64")?;
        let base = reference_base(&reference)?;
        let mem = self.memory_mut(base.0)?;
        let start = (base.1 as i64 + offset).max(0) as usize;
        if start + bytes.len() > mem.len() {
            return Err(format!(
                "{} bytes at {start} do not fit in {} bytes of {} memory",
                bytes.len(),
                mem.len(),
                base.0
            ));
        }
        mem[start..start + bytes.len()].copy_from_slice(&bytes);
        self.dbg_mut()?.modified();
        self.event("invalidated", json!({"areas": ["variables"]}));
        Ok(json!({"bytesWritten": bytes.len()}))
    }
}
