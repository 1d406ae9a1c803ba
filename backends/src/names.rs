//! Names in generated code: WAVE names (kernels, parameters) made into identifiers that are
//! valid in the target, are not reserved words, and cannot collide with the names the
//! backends generate themselves (`r0`, `p0`, `f0`, `act`, `halted`, `wave_...`).

/// `name` as a safe identifier of a language whose reserved words are `keywords`.
pub(crate) fn safe(name: &str, keywords: &[&str]) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if keywords.contains(&out.as_str()) || is_generated(&out) || out.starts_with("__") {
        out.push('_');
    }
    out
}

/// Whether `name` has the shape of a name the backends generate.
fn is_generated(name: &str) -> bool {
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
    };
    numbered("r")
        || numbered("p")
        || numbered("f")
        || numbered("t")
        || numbered("rd")
        || numbered("fd")
        || numbered("h")
        || matches!(name, "act" | "halted" | "lane" | "mem")
        || name.starts_with("wave_")
}

#[cfg(test)]
mod tests {
    use super::safe;

    #[test]
    fn names_are_made_safe() {
        let kw = ["kernel", "int"];
        assert_eq!(safe("out", &kw), "out");
        assert_eq!(safe("kernel", &kw), "kernel_");
        assert_eq!(safe("r3", &kw), "r3_");
        assert_eq!(safe("p0", &kw), "p0_");
        assert_eq!(safe("wave_mem", &kw), "wave_mem_");
        assert_eq!(safe("3d", &kw), "_3d");
        assert_eq!(safe("a.b", &kw), "a_b");
        assert_eq!(safe("__x", &kw), "__x_");
        assert_eq!(safe("rx", &kw), "rx");
    }
}
