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
