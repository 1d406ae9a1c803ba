//! Debug info: where each source variable lives, by code range, in the `.wbin` the compiler
//! writes (the VARS section); checked against the emulator's registers as a kernel runs, at
//! every instruction, at -O0 (what the debugger compiles) and -O2 (where some values are
//! folded or share a register, so fewer are shown, but what is shown is right).

use wave_emulator::Session;
use wave_kernel::{Language, Options, opt::Level};
use wave_wbin::VarType;

const SAXPY: &str = "import wave

@wave.kernel(workgroup=32)
def saxpy(alpha: f32, x: f32[:], y: f32[:], n: u32):
    i = wave.global_id()
    if i >= n:
        return
    total: f32 = 0.0
    for k in range(u32(3)):
        total += alpha * x[i] + f32(k)
    y[i] = total
";

const ALPHA: f32 = 1.5;
const N: u32 = 40;
const X: u32 = 0;
const Y: u32 = 1024;

fn xs(i: u32) -> f32 {
    i as f32 * 0.25 - 3.0
}

#[test]
fn variables_are_in_their_registers_wherever_the_debug_info_says() {
    for level in [Level::O0, Level::O2] {
        let options = Options { level, ..Default::default() };
        let (out, d) = wave_kernel::compile(SAXPY, Language::Python, "k.py", options);
        let out = out.unwrap_or_else(|| panic!("{d:?}"));
        let m = &out.module;
        let names: Vec<&str> = m.vars.iter().map(|v| v.name.as_str()).collect();
        for want in ["alpha", "n", "i", "total"] {
            assert!(names.contains(&want), "{level:?}: {want} in {names:?}");
        }
        if level == Level::O0 {
            for want in ["x", "y", "k"] {
                assert!(names.contains(&want), "{level:?}: {want} in {names:?}");
            }
        }
        let k = &m.kernels[0];
        for v in &m.vars {
            assert!(v.start < v.end && v.end <= k.code.end, "{v:?}");
            assert!(u16::from(v.register) < k.registers, "{v:?} within R={}", k.registers);
        }
        // Through the `.wbin` bytes, the same.
        assert_eq!(wave_wbin::read(&wave_wbin::write(m)).expect("reads").vars, m.vars);

        let mut device = vec![0u8; 2048];
        for i in 0..64u32 {
            device[(X + 4 * i) as usize..][..4].copy_from_slice(&xs(i).to_bits().to_le_bytes());
        }
        let dispatch = wave_emulator::Dispatch {
            grid: [2, 1, 1],
            wave_width: 16,
            args: vec![
                ("alpha".into(), ALPHA.to_bits()),
                ("x".into(), X),
                ("y".into(), Y),
                ("n".into(), N),
            ],
            ..Default::default()
        };
        let mut s = Session::new(m, &dispatch, device).expect("starts");
        let mut checked = 0;
        let mut seen_total_at_store = false;
        let store_line = SAXPY.lines().position(|l| l.contains("y[i] = total")).unwrap() as u32 + 1;
        for _ in 0..10_000 {
            let Some(wave) = s.next_running() else { break };
            // (Past the last instruction, the wave falls off the end: no pc.)
            let pc = s.wave_pc(wave).unwrap_or(u32::MAX);
            let active = s.wave_active(wave);
            let wg = s.workgroup();
            for v in m.vars_at(pc) {
                for lane in (0..16).filter(|l| active & (1 << l) != 0) {
                    let got = s.register(wave, u16::from(v.register), lane).expect("a register");
                    let i = wg[0] * 32 + wave * 16 + lane;
                    let want = match v.name.as_str() {
                        "alpha" => Some(ALPHA.to_bits()),
                        "n" => Some(N),
                        "x" => Some(X),
                        "y" => Some(Y),
                        "i" => Some(i),
                        "k" => {
                            assert!(got <= 3, "{level:?} pc {pc}: k = {got} (3 at the last test)");
                            None
                        }
                        // At the store, the loop is done: the sum of its three terms.
                        "total" if m.line_at(pc).is_some_and(|l| l.line == store_line) => {
                            seen_total_at_store = true;
                            let t = (0..3).fold(0.0f32, |t, k| t + (ALPHA * xs(i) + k as f32));
                            Some(t.to_bits())
                        }
                        _ => None,
                    };
                    if let Some(want) = want {
                        assert_eq!(
                            got, want,
                            "{level:?} pc {pc}: `{}` in lane {lane} (r{})",
                            v.name, v.register
                        );
                        checked += 1;
                    }
                    if v.ty == VarType::F32 {
                        assert!(
                            f32::from_bits(got).is_finite(),
                            "{level:?}: `{}` is a float",
                            v.name
                        );
                    }
                }
            }
            s.step(wave).expect("steps");
        }
        assert!(s.is_finished(), "{level:?}: the kernel ends");
        assert!(seen_total_at_store, "{level:?}: `total` is shown at the store");
        assert!(checked > 500, "{level:?}: {checked} register values checked");
    }
}
