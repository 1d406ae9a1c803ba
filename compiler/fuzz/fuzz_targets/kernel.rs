//! Any text as a kernel file in each of the four languages (Python, Rust, C++, TypeScript):
//! the compiler must not panic at any level; diagnostics lie inside the text; what compiles has a verified allocation (the checker runs inside)
//! and assembly that reassembles to the same code, and runs in the emulator (a small
//! budget) without the emulator rejecting the module.

#![no_main]

use libfuzzer_sys::fuzz_target;
use wave_kernel::{Language, Options, opt::Level};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let level = match data.first().map(|b| b % 4) {
        Some(0) => Level::O0,
        Some(1) => Level::O1,
        Some(2) => Level::O2,
        _ => Level::O3,
    };
    let max_registers = 8 + u32::from(data.get(1).copied().unwrap_or(0) % 64);
    let options = Options { level, max_registers, verify: true };
    for language in Language::ALL {
        check(&text, language, options);
    }
});

fn check(text: &str, language: Language, options: Options) {
    let (out, diagnostics) = wave_kernel::compile(text, language, "fuzz", options);
    for d in &diagnostics {
        assert!(d.span.start <= d.span.end && d.span.end <= text.len(), "{d:?}");
        assert_ne!(d.code, "E0410", "internal compiler error: {}", d.message);
    }
    let Some(out) = out else { return };
    let again = wave_asm::assemble(&out.asm, "again.wave");
    assert!(!again.has_errors(), "{}", out.asm);
    assert_eq!(again.module.code, out.module.code);
    for k in &out.module.kernels {
        let dispatch = wave_emulator::Dispatch {
            kernel: Some(k.name.clone()),
            grid: [1, 1, 1],
            workgroup: Some([8, 1, 1]),
            wave_width: 8,
            args: Vec::new(),
            max_steps: 20_000,
            trace: false,
            interrupt: None,
            threads: 1,
            ..wave_emulator::Dispatch::default()
        };
        let mut device = vec![0u8; 4096];
        let _ = wave_emulator::run(&out.module, &dispatch, &mut device);
    }
}
