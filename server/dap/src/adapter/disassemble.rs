//! `disassemble`: the kernel's instructions with their addresses and source lines.

use super::*;

impl Adapter {
    /// The kernel's instructions: pc, canonical text, module line.
    pub(super) fn disassembly(&self) -> &[(u32, String, Option<u32>)] {
        self.program.as_ref().map_or(&[], |p| p.listing.as_slice())
    }

    pub(super) fn listing(&self) -> Vec<(u32, String, Option<u32>)> {
        let (Some(dbg), Some(k)) = (self.dbg.as_ref(), self.kernel()) else { return Vec::new() };
        let mut out = Vec::new();
        let mut pc = k.code.start;
        while pc < k.code.end {
            let Some(bytes) = dbg.module.code.get(pc as usize..k.code.end as usize) else { break };
            let Ok((inst, size)) = wave_isa::Inst::decode(bytes) else { break };
            let mut text = String::new();
            wave_isa::write_inst(&inst, &mut text, &|o| {
                dbg.module.symbol_at(o).map(|s| s.name.clone())
            });
            if let Some(s) =
                dbg.module.symbols.iter().find(|s| s.offset == pc && k.code.contains(&s.offset))
            {
                text = format!("{}: {text}", s.name);
            }
            out.push((pc, text, dbg.module.line_at(pc).map(|l| l.line)));
            pc += size as u32;
        }
        out
    }

    pub(super) fn disassemble(&mut self, args: &Value) -> Reply {
        self.dbg()?;
        let reference = args
            .get("memoryReference")
            .and_then(Value::as_str)
            .ok_or("`memoryReference` is missing")?;
        let base = parse_address(reference)
            .ok_or_else(|| format!("`{reference}` is not an instruction address like 0x18"))?;
        let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
        let inst_offset = args.get("instructionOffset").and_then(Value::as_i64).unwrap_or(0);
        let count = args
            .get("instructionCount")
            .and_then(Value::as_u64)
            .ok_or("`instructionCount` is missing")?
            .min(100_000) as i64;
        let list = self.disassembly();
        let address = base as i64 + offset;
        let index =
            list.iter().position(|(pc, _, _)| i64::from(*pc) >= address).unwrap_or(list.len())
                as i64;
        let source = self.source_json();
        let has_source = self.program.as_ref().is_some_and(|p| p.source.is_some());
        let mut out = Vec::new();
        for i in index + inst_offset..index + inst_offset + count {
            match usize::try_from(i).ok().and_then(|i| list.get(i)) {
                Some((pc, text, line)) => {
                    let mut v = json!({"address": format!("0x{pc:x}"), "instruction": text});
                    if let Some(l) = line.filter(|_| has_source) {
                        v["location"] = source.clone();
                        v["line"] = json!(self.client_line(l));
                    }
                    out.push(v);
                }
                None => out.push(json!({"address": format!("0x{:x}", (address + (i - index) * 6).max(0)), "instruction": "(no instruction)", "presentationHint": "invalid"})),
            }
        }
        Ok(json!({"instructions": out}))
    }
}
