//! Any `.wbin` bytes or assembly text: every backend must translate or refuse with problems,
//! never panic; a translation has one source-map entry per line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use wave_backends::{Options, Target};

fuzz_target!(|data: &[u8]| {
    let module = match wave_wbin::read(data) {
        Ok(m) => m,
        Err(_) => {
            let Ok(text) = std::str::from_utf8(data) else { return };
            let a = wave_asm::assemble(text, "fuzz.wave");
            if a.has_errors() {
                return;
            }
            a.module
        }
    };
    let mut options = Options::default();
    options.ptx.sm = if data.first().is_some_and(|b| b & 1 == 1) { 90 } else { 75 };
    for target in Target::ALL {
        match wave_backends::write_string(target, &module, &options) {
            Ok(t) => assert_eq!(t.source_map.lines.len(), t.text.lines().count()),
            Err(e) => assert!(!e.problems.is_empty()),
        }
    }
});
