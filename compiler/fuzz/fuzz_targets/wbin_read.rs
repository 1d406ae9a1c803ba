//! Any bytes: the `.wbin` reader must not panic; whatever it accepts must write back to bytes
//! that read the same, and disassemble to text that reassembles to the same code.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = wave_wbin::read(data) else { return };
    let bytes = wave_wbin::write(&module);
    assert_eq!(wave_wbin::read(&bytes).as_ref(), Ok(&module));
    let listing = wave_asm::disassemble(&module);
    let _ = wave_asm::assemble(&listing, "listing.wave");
});
