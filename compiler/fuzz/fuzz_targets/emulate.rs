//! Any program and dispatch: the emulator must not panic or hang. The first bytes choose the
//! dispatch (grid, workgroup, wave width, device memory size) and whether the rest is read as
//! assembly text or as a `.wbin`; every run has a small instruction budget.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 6 {
        return;
    }
    let (head, body) = data.split_at(6);
    let module = if head[0] & 1 == 0 {
        let text = String::from_utf8_lossy(body);
        let a = wave_asm::assemble(&text, "fuzz.wave");
        if a.has_errors() {
            return;
        }
        a.module
    } else {
        // This toolchain's .wbin or the reference toolchain's.
        match wave_wbin::read_any(body) {
            Ok((m, _)) => m,
            Err(_) => return,
        }
    };
    let widths = [4, 8, 16, 32, 64, 7];
    let dispatch = wave_emulator::Dispatch {
        kernel: None,
        grid: [u32::from(head[1] % 4), u32::from(head[2] % 3) + 1, 1],
        workgroup: (head[0] & 2 == 0).then(|| [u32::from(head[3]) * 4 % 300, u32::from(head[4] % 3) + 1, 1]),
        wave_width: widths[usize::from(head[5]) % widths.len()],
        args: module
            .kernels
            .first()
            .map(|k| k.params.iter().enumerate().map(|(i, p)| (p.name.clone(), 64 * i as u32)).collect())
            .unwrap_or_default(),
        max_steps: 20_000,
        trace: head[0] & 4 != 0,
        // One thread, or several: the parallel path must not panic either.
        threads: u32::from(head[5] / 8 % 3) + 1,
        ..wave_emulator::Dispatch::default()
    };
    let mut memory = vec![0u8; 256 << (head[4] % 4)];
    let _ = wave_emulator::run(&module, &dispatch, &mut memory);
});
