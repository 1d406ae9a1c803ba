//! Any bytes: the `.wbin` reader, of this toolchain's files and of the reference toolchain's,
//! must not panic; whatever it accepts must write back to bytes that read the same, and
//! disassemble to text that reassembles to the same code; writing it in the reference's
//! format either succeeds or names what cannot be written, never panics.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok((module, _)) = wave_wbin::read_any(data) else { return };
    let bytes = wave_wbin::write(&module);
    assert_eq!(wave_wbin::read(&bytes).as_ref(), Ok(&module));
    let listing = wave_asm::disassemble(&module);
    let _ = wave_asm::assemble(&listing, "listing.wave");
    if let Ok(reference) = wave_wbin::reference::write(&module) {
        let (again, _) = wave_wbin::reference::read(&reference).expect("what we write reads");
        // The v0.4 format has no place for cache hints or a Local Memory atomic's scope,
        // which change no result (docs/compatibility.md): compared without them.
        let code = |m: &wave_wbin::Module| -> Vec<Vec<wave_isa::Inst>> {
            let plain = |mut i: wave_isa::Inst| {
                let hint = matches!(
                    wave_isa::Operation::of(&i),
                    Some(wave_isa::Operation::DeviceLoad(_) | wave_isa::Operation::DeviceStore(_))
                );
                let local = matches!(
                    wave_isa::Operation::of(&i),
                    Some(wave_isa::Operation::Atomic(_, _, true))
                );
                if hint || local {
                    i.scope = 0;
                }
                i
            };
            m.kernels.iter().map(|k| m.instructions(k).map(|(_, i)| plain(i)).collect()).collect()
        };
        assert_eq!(code(&again), code(&module));
    }
});
