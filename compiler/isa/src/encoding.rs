//! The binary encoding of spec 8.2: a 48-bit base word, optionally followed by a 32-bit
//! extension word.
//!
//! Base word, stored little-endian in 6 bytes (byte 0 holds bits [7:0]):
//!
//! | bits    | field    |                                                        |
//! |---------|----------|--------------------------------------------------------|
//! | [47:40] | opcode   |                                                        |
//! | [39:32] | rd       | destination register, or predicate destination         |
//! | [31:24] | rs1      | source 1, address register, or special register index  |
//! | [23:16] | rs2      | source 2                                               |
//! | [15:11] | reserved | must be zero                                           |
//! | [10:7]  | modifier | sub-opcode, predicate source, half selects, atomic type |
//! | [6:5]   | scope    | memory scope, or cache hint on device loads and stores  |
//! | [4:3]   | pred     | guard predicate p0-p3                                  |
//! | [2]     | pred_neg | guard negation                                         |
//! | [1:0]   | flags    | bit 0: extension word follows; bit 1: guarded           |
//!
//! Extension word, little-endian: the full imm32 (immediates, memory offsets, call targets),
//! or rs3 in bits [7:0] (and rs4 in bits [15:8] for `bfi`) with the rest zero.
//!
//! The decoder is strict: a field the instruction does not use must be zero, so each valid
//! instruction has exactly one encoding. See `docs/isa/encoding.md`.

use std::fmt;

use crate::{Format, Modifier, OpInfo, Operand, ScopeUse, Slot, Width, info, operand_registers};

/// Flag bit 0: an extension word follows the base word.
pub const FLAG_EXTENDED: u8 = 0b01;
/// Flag bit 1: the instruction is guarded by `@pN` / `@!pN` (pred and pred_neg apply).
pub const FLAG_PREDICATED: u8 = 0b10;

/// A field of the base word: name, highest and lowest bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Its name, as the table at the top of this module writes it.
    pub name: &'static str,
    /// Its highest bit.
    pub hi: u32,
    /// Its lowest bit.
    pub lo: u32,
}

impl Field {
    /// The field's value in base word `word`.
    pub fn of(self, word: u64) -> u64 {
        (word >> self.lo) & ((1u64 << (self.hi - self.lo + 1)) - 1)
    }
}

/// The base word's fields, from the highest bit down (the table at the top of this module);
/// [`Inst::base_word`] puts the instruction's fields there.
pub const BASE_FIELDS: [Field; 10] = [
    Field { name: "opcode", hi: 47, lo: 40 },
    Field { name: "rd", hi: 39, lo: 32 },
    Field { name: "rs1", hi: 31, lo: 24 },
    Field { name: "rs2", hi: 23, lo: 16 },
    Field { name: "reserved", hi: 15, lo: 11 },
    Field { name: "modifier", hi: 10, lo: 7 },
    Field { name: "scope", hi: 6, lo: 5 },
    Field { name: "pred", hi: 4, lo: 3 },
    Field { name: "pred_neg", hi: 2, lo: 2 },
    Field { name: "flags", hi: 1, lo: 0 },
];

/// An instruction guard, `@pN` or `@!pN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    /// The predicate register, 0-3.
    pub predicate: u8,
    /// Run where the predicate is false.
    pub negate: bool,
}

/// One instruction as its encoded fields. Which fields mean what is given by the opcode's
/// table row; [`Inst::validate`] checks that the combination is one the ISA defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Inst {
    /// Primary opcode.
    pub opcode: u8,
    /// Bits [39:32].
    pub rd: u8,
    /// Bits [31:24].
    pub rs1: u8,
    /// Bits [23:16].
    pub rs2: u8,
    /// Bits [10:7], 0-15.
    pub modifier: u8,
    /// Bits [6:5], 0-3.
    pub scope: u8,
    /// Bits [4:2] and flag bit 1.
    pub guard: Option<Guard>,
    /// The extension word, when present.
    pub ext: Option<u32>,
}

/// Why a byte sequence is not a valid instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the instruction needs.
    Truncated {
        /// Bytes the instruction needs.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// No instruction has this opcode.
    UnknownOpcode(u8),
    /// Reserved bits [15:11] are not zero.
    ReservedBits(u8),
    /// The fields are not a valid instruction.
    Invalid(EncodeError),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { needed, available } => {
                write!(f, "truncated instruction: needs {needed} bytes, only {available} left")
            }
            DecodeError::UnknownOpcode(op) => write!(f, "unknown opcode 0x{op:02X}"),
            DecodeError::ReservedBits(bits) => {
                write!(f, "reserved bits [15:11] must be zero, found 0b{bits:05b}")
            }
            DecodeError::Invalid(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Why a set of fields is not a valid instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// No instruction has this opcode.
    UnknownOpcode(u8),
    /// The modifier value is not defined for the instruction.
    Modifier {
        /// The instruction.
        mnemonic: &'static str,
        /// The value found.
        value: u8,
    },
    /// The scope field is used by an instruction that has none.
    Scope {
        /// The instruction.
        mnemonic: &'static str,
        /// The value found.
        value: u8,
    },
    /// A guard on an instruction that cannot take one.
    NotPredicable(&'static str),
    /// Guard predicate above p3.
    Predicate(u8),
    /// An Extended instruction without its extension word.
    MissingExtension(&'static str),
    /// An extension word on an instruction that takes none.
    UnexpectedExtension(&'static str),
    /// A field the instruction does not use is not zero.
    UnusedField {
        /// The instruction.
        mnemonic: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field value out of its range (predicate above p3, special register above 15, a
    /// register pair or quad running past r255).
    Range {
        /// The instruction.
        mnemonic: &'static str,
        /// The field.
        field: &'static str,
        /// The value found.
        value: u32,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::UnknownOpcode(op) => write!(f, "unknown opcode 0x{op:02X}"),
            EncodeError::Modifier { mnemonic, value } => {
                write!(f, "modifier {value} is not defined for `{mnemonic}`")
            }
            EncodeError::Scope { mnemonic, value } => {
                write!(f, "`{mnemonic}` has no scope field, found {value}")
            }
            EncodeError::NotPredicable(m) => write!(f, "`{m}` cannot be guarded by a predicate"),
            EncodeError::Predicate(p) => write!(f, "predicate p{p} does not exist (p0-p3)"),
            EncodeError::MissingExtension(m) => {
                write!(f, "`{m}` is an Extended instruction but has no extension word")
            }
            EncodeError::UnexpectedExtension(m) => write!(f, "`{m}` takes no extension word"),
            EncodeError::UnusedField { mnemonic, field } => {
                write!(f, "field {field} is unused by `{mnemonic}` and must be zero")
            }
            EncodeError::Range { mnemonic, field, value } => {
                write!(f, "field {field} of `{mnemonic}` is out of range: {value}")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

impl Inst {
    /// The table row of this instruction's opcode.
    pub fn info(&self) -> Option<&'static OpInfo> {
        info(self.opcode)
    }

    /// Size in bytes: 6, or 10 with the extension word.
    pub fn size(&self) -> usize {
        if self.ext.is_some() { 10 } else { 6 }
    }

    /// Whether the second source is the immediate of the extension word.
    pub fn has_immediate_source(&self) -> bool {
        self.ext.is_some()
            && self.info().is_some_and(|op| {
                op.format == Format::Base
                    && op.operands.iter().any(|o| matches!(o, Operand::RegOrImm(_)))
            })
    }

    /// The register in `slot`.
    pub fn register(&self, slot: Slot) -> u8 {
        match slot {
            Slot::Rd => self.rd,
            Slot::Rs1 => self.rs1,
            Slot::Rs2 => self.rs2,
            Slot::Rs3 => self.ext.unwrap_or(0) as u8,
            Slot::Rs4 => (self.ext.unwrap_or(0) >> 8) as u8,
        }
    }

    /// Checks that the fields form an instruction the ISA defines.
    pub fn validate(&self) -> Result<&'static OpInfo, EncodeError> {
        let op = info(self.opcode).ok_or(EncodeError::UnknownOpcode(self.opcode))?;
        let m = op.mnemonic;
        if self.modifier > 15 {
            return Err(EncodeError::Modifier { mnemonic: m, value: self.modifier });
        }
        let modifier_ok = match op.modifier {
            Modifier::None => self.modifier == 0,
            Modifier::Named { names, .. } => names.iter().any(|(_, v)| *v == self.modifier),
            Modifier::PredSrc => self.modifier <= 7,
            Modifier::Halves => {
                let mask = op.operands.iter().fold(0u8, |mask, o| match o {
                    Operand::Reg { width: Width::Half(bit), .. } => mask | (1 << bit),
                    _ => mask,
                });
                self.modifier & !mask == 0
            }
            Modifier::Atomic { types } => types.iter().any(|t| *t as u8 == self.modifier & 7),
        };
        if !modifier_ok {
            return Err(EncodeError::Modifier { mnemonic: m, value: self.modifier });
        }
        if self.scope > 3 || (op.scope == ScopeUse::None && self.scope != 0) {
            return Err(EncodeError::Scope { mnemonic: m, value: self.scope });
        }
        if let Some(guard) = self.guard {
            if !op.predicable {
                return Err(EncodeError::NotPredicable(m));
            }
            if guard.predicate > 3 {
                return Err(EncodeError::Predicate(guard.predicate));
            }
        }
        match (op.format, self.ext) {
            (Format::Extended, None) => return Err(EncodeError::MissingExtension(m)),
            (Format::Base, Some(_)) if !op.may_extend() => {
                return Err(EncodeError::UnexpectedExtension(m));
            }
            _ => {}
        }
        // Which fields the form uses, so that unused ones can be required to be zero.
        let (mut rd, mut rs1, mut rs2) = (false, false, false);
        let mut ext_mask: u32 = 0;
        for operand in op.operands {
            match *operand {
                Operand::Reg { slot, .. } => {
                    let count = operand_registers(op, operand, self.modifier);
                    let reg = self.register(slot);
                    if u32::from(reg) + u32::from(count) > 256 {
                        return Err(EncodeError::Range {
                            mnemonic: m,
                            field: slot.name(),
                            value: reg.into(),
                        });
                    }
                    match slot {
                        Slot::Rd => rd = true,
                        Slot::Rs1 => rs1 = true,
                        Slot::Rs2 => rs2 = true,
                        Slot::Rs3 => ext_mask |= 0xFF,
                        Slot::Rs4 => ext_mask |= 0xFF00,
                    }
                }
                Operand::RegOrImm(_) => {
                    if self.ext.is_some() {
                        ext_mask = u32::MAX;
                    } else {
                        rs2 = true;
                    }
                }
                Operand::PredDst => {
                    rd = true;
                    if self.rd > 3 {
                        return Err(EncodeError::Range {
                            mnemonic: m,
                            field: "rd",
                            value: self.rd.into(),
                        });
                    }
                }
                Operand::PredSrc => {}
                Operand::Address { offset } => {
                    rs1 = true;
                    if offset {
                        ext_mask = u32::MAX;
                    }
                }
                Operand::Special => {
                    rs1 = true;
                    if usize::from(self.rs1) >= crate::SPECIALS.len() {
                        return Err(EncodeError::Range {
                            mnemonic: m,
                            field: "rs1",
                            value: self.rs1.into(),
                        });
                    }
                }
                Operand::Imm(_) | Operand::Target => ext_mask = u32::MAX,
            }
        }
        for (used, value, field) in
            [(rd, self.rd, "rd"), (rs1, self.rs1, "rs1"), (rs2, self.rs2, "rs2")]
        {
            if !used && value != 0 {
                return Err(EncodeError::UnusedField { mnemonic: m, field });
            }
        }
        if let Some(ext) = self.ext
            && ext & !ext_mask != 0
        {
            return Err(EncodeError::UnusedField { mnemonic: m, field: "extension word" });
        }
        Ok(op)
    }

    /// The 48-bit base word.
    pub fn base_word(&self) -> u64 {
        let (pred, neg, guarded) = match self.guard {
            Some(g) => (g.predicate, g.negate, true),
            None => (0, false, false),
        };
        let flags = (u64::from(self.ext.is_some()) * u64::from(FLAG_EXTENDED))
            | (u64::from(guarded) * u64::from(FLAG_PREDICATED));
        (u64::from(self.opcode) << 40)
            | (u64::from(self.rd) << 32)
            | (u64::from(self.rs1) << 24)
            | (u64::from(self.rs2) << 16)
            | (u64::from(self.modifier & 0xF) << 7)
            | (u64::from(self.scope & 3) << 5)
            | (u64::from(pred & 3) << 3)
            | (u64::from(neg) << 2)
            | flags
    }

    /// Appends the encoding to `out`, after checking the fields.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        self.validate()?;
        out.extend_from_slice(&self.base_word().to_le_bytes()[..6]);
        if let Some(ext) = self.ext {
            out.extend_from_slice(&ext.to_le_bytes());
        }
        Ok(())
    }

    /// Decodes one instruction from the start of `bytes`; returns it and its size.
    pub fn decode(bytes: &[u8]) -> Result<(Inst, usize), DecodeError> {
        if bytes.len() < 6 {
            return Err(DecodeError::Truncated { needed: 6, available: bytes.len() });
        }
        let mut word = [0u8; 8];
        word[..6].copy_from_slice(&bytes[..6]);
        let word = u64::from_le_bytes(word);
        let opcode = (word >> 40) as u8;
        if info(opcode).is_none() {
            return Err(DecodeError::UnknownOpcode(opcode));
        }
        let reserved = ((word >> 11) & 0x1F) as u8;
        if reserved != 0 {
            return Err(DecodeError::ReservedBits(reserved));
        }
        let flags = (word & 3) as u8;
        let guard = (flags & FLAG_PREDICATED != 0)
            .then_some(Guard { predicate: ((word >> 3) & 3) as u8, negate: (word >> 2) & 1 == 1 });
        if guard.is_none() && (word >> 2) & 7 != 0 {
            return Err(DecodeError::Invalid(EncodeError::UnusedField {
                mnemonic: info(opcode).map_or("?", |op| op.mnemonic),
                field: "pred",
            }));
        }
        let ext = if flags & FLAG_EXTENDED != 0 {
            if bytes.len() < 10 {
                return Err(DecodeError::Truncated { needed: 10, available: bytes.len() });
            }
            Some(u32::from_le_bytes([bytes[6], bytes[7], bytes[8], bytes[9]]))
        } else {
            None
        };
        let inst = Inst {
            opcode,
            rd: (word >> 32) as u8,
            rs1: (word >> 24) as u8,
            rs2: (word >> 16) as u8,
            modifier: ((word >> 7) & 0xF) as u8,
            scope: ((word >> 5) & 3) as u8,
            guard,
            ext,
        };
        inst.validate().map_err(DecodeError::Invalid)?;
        Ok((inst, inst.size()))
    }
}
