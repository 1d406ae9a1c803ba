//! The outline of kernel sources: their kernels as symbols, and each kernel's occupancy as an
//! inlay hint. Folding and formatting are assembly's only (the language's own server has
//! them).

use wave_db::{Database, Settings, SourceFile};

use super::{Symbol, SymbolKind};

/// The kernels of a kernel source as document symbols.
pub(super) fn symbols(build: &wave_db::SourceBuild) -> Vec<Symbol> {
    build
        .functions
        .iter()
        .filter(|f| f.kernel)
        .map(|f| Symbol {
            name: f.name.clone(),
            kind: SymbolKind::Kernel,
            range: f.span.clone(),
            selection: f.name_span.clone(),
            children: Vec::new(),
        })
        .collect()
}

/// Each kernel's occupancy (with its register count R) at the end of its name's line.
pub(super) fn inlay_hints(
    db: &Database,
    file: SourceFile,
    build: &wave_db::SourceBuild,
    settings: Settings,
) -> Vec<(usize, String)> {
    let text = file.text(db);
    let mut out = Vec::new();
    for f in build.functions.iter().filter(|f| f.kernel) {
        let Some((_, k)) = build.kernel(&f.name) else { continue };
        if let Some(hint) = wave_db::occupancy_line(k, settings.target(db), settings.wave_width(db))
        {
            out.push((crate::source::name_line(text, f).end, hint));
        }
    }
    out
}
