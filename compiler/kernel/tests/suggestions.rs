//! "Did you mean" on unknown names and calls, in each language: the closest variable in scope,
//! helper or intrinsic (spelled as the call spells its module).

use wave_kernel::{Language, Options};

/// Each error's message, its help and its notes.
fn help(text: &str, language: Language) -> Vec<(String, Option<String>, Vec<String>)> {
    let (_, d) = wave_kernel::compile(text, language, "k", Options::default());
    d.iter()
        .filter(|d| d.is_error())
        .map(|d| {
            (
                d.message.clone(),
                d.suggestion.as_ref().map(|s| s.replacement.clone()),
                d.notes.clone(),
            )
        })
        .collect()
}

fn suggested(found: &[(String, Option<String>, Vec<String>)], unknown: &str) -> Option<String> {
    found.iter().find(|(m, _, _)| m.contains(&format!("`{unknown}`"))).and_then(|f| f.1.clone())
}

#[test]
fn python_names_helpers_and_intrinsics() {
    let text = "import wave\nimport math\n\ndef twice(x: f32) -> f32:\n    return x * 2.0\n\n@wave.kernel\ndef k(a: f32[:], n: u32):\n    i = wave.global_id()\n    total: f32 = 1.0\n    if i < n:\n        a[i] = totl\n        a[i] = wave.tanhh(a[i])\n        a[i] = wave.sqrtt(a[i])\n        a[i] = twise(a[i])\n        a[i] = math.sqr(a[i])\n        a[i] = wave.frobnicate(a[i])\n";
    let found = help(text, Language::Python);
    assert_eq!(suggested(&found, "totl").as_deref(), Some("total"), "{found:?}");
    assert_eq!(suggested(&found, "wave.tanhh").as_deref(), Some("wave.tanh"));
    assert_eq!(suggested(&found, "wave.sqrtt").as_deref(), Some("wave.sqrt"));
    assert_eq!(suggested(&found, "twise").as_deref(), Some("twice"));
    assert_eq!(suggested(&found, "math.sqr").as_deref(), Some("math.sqrt"));
    assert_eq!(suggested(&found, "wave.frobnicate"), None, "nothing close");
}

#[test]
fn rust_and_cpp_spell_the_suggestion_as_the_call_does() {
    let rust = "fn twice(x: f32) -> f32 { x * 2.0 }\n\n#[wave::kernel]\nfn k(a: &mut [f32], n: u32) {\n    let i = wave::global_id();\n    let total: f32 = 1.0;\n    if i < n {\n        a[i] = wave::popcnt(a[i]);\n        a[i] = twise(a[i]);\n        a[i] = totl;\n    }\n}\n";
    let found = help(rust, Language::Rust);
    assert_eq!(suggested(&found, "wave::popcnt").as_deref(), Some("wave::popcount"), "{found:?}");
    assert_eq!(suggested(&found, "twise").as_deref(), Some("twice"));
    assert_eq!(suggested(&found, "totl").as_deref(), Some("total"));
    let cpp = "#include <wave.h>\nfloat twice(float x) { return x * 2.0f; }\n__kernel void k(float* a, uint32_t n) {\n    uint32_t i = wave::global_id(0);\n    float total = 1.0f;\n    if (i < n) {\n        a[i] = tanhh(a[i]);\n        a[i] = std::sqr(a[i]);\n        a[i] = twise(a[i]);\n        a[i] = totl;\n    }\n}\n";
    let found = help(cpp, Language::Cpp);
    assert_eq!(suggested(&found, "tanhh").as_deref(), Some("tanh"), "{found:?}");
    assert_eq!(suggested(&found, "std::sqr").as_deref(), Some("std::sqrt"));
    assert_eq!(suggested(&found, "twise").as_deref(), Some("twice"));
    assert_eq!(suggested(&found, "totl").as_deref(), Some("total"));
}

/// Each error's code and message.
fn errors(text: &str, language: Language) -> Vec<(&'static str, String)> {
    let (_, d) = wave_kernel::compile(text, language, "k", Options::default());
    d.iter().filter(|d| d.is_error()).map(|d| (d.code, d.message.clone())).collect()
}

#[test]
fn parameters_rust_and_cpp_fix_are_refused_when_assigned() {
    let rust = "#[wave::kernel]\nfn k(a: &mut [u32], n: u32, mut m: u32) {\n    m += 1;\n    n = n + 1;\n    a[0] = n + m;\n}\n";
    let found = errors(rust, Language::Rust);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "E0405");
    assert!(
        found[0].1.contains("`n` cannot be assigned again: make the parameter mutable, `mut n`"),
        "{found:?}"
    );
    let cpp = "[[wave::kernel]]\nvoid k(uint32_t* a, const uint32_t n, uint32_t m) {\n    m += 1;\n    n += 1;\n    a[0] = n + m;\n}\n";
    let found = errors(cpp, Language::Cpp);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.contains("`n` cannot be assigned again: drop the `const`"), "{found:?}");
    // A Rust helper's parameter too.
    let helper = "fn bump(x: u32) -> u32 {\n    x += 1;\n    x\n}\n#[wave::kernel]\nfn k(a: &mut [u32]) {\n    a[0] = bump(a[1]);\n}\n";
    let found = errors(helper, Language::Rust);
    assert!(
        found.iter().any(|(c, m)| *c == "E0405" && m.contains("`x` cannot be assigned")),
        "{found:?}"
    );
}

#[test]
fn one_mistake_is_one_error() {
    // A declaration that fails leaves its name undeclared: its uses say nothing more.
    let python = "import wave\n@wave.kernel\ndef k(a: f32[:], b: i8[:]):\n    i = wave.global_id()\n    x = a[i] + i\n    y = x * 2.0\n    a[i] = y + x + f32(b[i])\n";
    let found = errors(python, Language::Python);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].1.contains("`i8[:]`"), "{found:?}");
    assert!(found[1].1.contains("`+` between `f32` and `u32`"), "{found:?}");
    let rust = "#[wave::kernel]\nfn k(a: &mut [f32]) {\n    let i = wave::global_id(0);\n    let t = wave::local_array::<f32, 0>();\n    t[0] = 1.0;\n    a[i as usize] = t[1];\n}\n";
    let found = errors(rust, Language::Rust);
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn a_float_index_says_how_to_convert_it() {
    let python = "import wave\n@wave.kernel\ndef k(a: f32[:]):\n    x = a[0]\n    a[1] = a[x]\n";
    let found = errors(python, Language::Python);
    assert!(found.iter().any(|(_, m)| m.contains("not `f32`: convert it, `u32(x)`")), "{found:?}");
    let rust = "#[wave::kernel]\nfn k(a: &mut [f32]) {\n    let x = a[0];\n    a[1] = a[x];\n}\n";
    let found = errors(rust, Language::Rust);
    assert!(found.iter().any(|(_, m)| m.contains("convert it, `x as u32`")), "{found:?}");
}
