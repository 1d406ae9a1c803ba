//! Calling a WAVE kernel from Rust: `cargo run --release -p wave-runtime --example vector_add
//! [-- cuda]`. The kernel is written in Rust's kernel dialect (any of the four languages, or
//! assembly, or a `.wbin`, would do).

use wave_runtime::host::{Arg, Device, Error, Language, Launch, Options, Program, Source};

const KERNEL: &str = r#"
#[wave::kernel(workgroup = (64, 1, 1))]
fn vector_add(a: &[f32], b: &[f32], c: &mut [f32], n: u32) {
    let i = wave::global_id(0);
    if i < n {
        c[i as usize] = a[i as usize] + b[i as usize];
    }
}
"#;

#[allow(clippy::print_stdout, reason = "an example prints its result")]
fn main() -> Result<(), Error> {
    let device = match std::env::args().nth(1).as_deref() {
        Some(spec) => Device::open(spec.parse().map_err(Error::Argument)?)?,
        None => Device::emulator(),
    };
    let program = Program::compile(
        Source::Kernel { text: KERNEL, language: Language::Rust },
        "vector_add.rs",
        &Options::default(),
    )?;
    let n = 1000u32;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
    let (a, b) = (device.buffer_from(&a)?, device.buffer_from(&b)?);
    let c = device.buffer::<f32>(n as usize)?;
    let launch = Launch::grid([n.div_ceil(64), 1, 1]);
    // By name; `Device::launch` takes them by position.
    device.launch_named(
        &program,
        "vector_add",
        &launch,
        vec![
            ("a", Arg::Buffer(&a)),
            ("b", Arg::Buffer(&b)),
            ("c", Arg::Buffer(&c)),
            ("n", Arg::U32(n)),
        ],
    )?;
    let c = c.read::<f32>()?;
    assert!(c.iter().enumerate().all(|(i, v)| *v == (3 * i) as f32));
    println!("c[..4] = {:?} on {}", &c[..4], device.describe());
    Ok(())
}
