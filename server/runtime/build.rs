//! `WAVE_COMPILER_HASH`: a hash of the compiler's source (the crates that turn a source text
//! into a `.wbin`, and the host API that describes its kernels), part of the key of every
//! cached program, so that a rebuilt compiler never reuses a program an older one compiled.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dirs = [
        "compiler/diag/src",
        "compiler/isa/src",
        "compiler/wbin/src",
        "compiler/asm/src",
        "compiler/kernel/src",
        "tree-sitter-wave/src",
        // The host API: what it records of each kernel, and the cache's format.
        "server/runtime/src/host",
    ];
    let mut files = Vec::new();
    for d in dirs {
        let dir = root.join(d);
        println!("cargo::rerun-if-changed={}", dir.display());
        walk(&dir, &mut files);
    }
    files.sort();
    let mut h = std::hash::DefaultHasher::new();
    for f in &files {
        f.strip_prefix(&root).unwrap_or(f).hash(&mut h);
        std::fs::read(f).unwrap_or_default().hash(&mut h);
    }
    println!("cargo::rustc-env=WAVE_COMPILER_HASH={:016x}", h.finish());
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}
