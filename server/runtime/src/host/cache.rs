//! The cache key of a compile, and the disk cache ([`cache_dir`]): files of what a compiled
//! program is made of. (The memory cache is [`super::program`]'s.)

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use wave_wbin::Module;

use super::types::{Elem, KernelInfo, Options, Param, ParamKind, Source};

/// The cache key: the compiler's identity, the source, the options and the file name.
pub(super) fn key(source: &Source<'_>, file: &str, options: &Options) -> u128 {
    let mut halves = [0u64; 2];
    for (i, half) in halves.iter_mut().enumerate() {
        let mut h = std::hash::DefaultHasher::new();
        (i as u8, env!("WAVE_COMPILER_HASH"), file, options).hash(&mut h);
        match source {
            Source::Kernel { text, language } => (0u8, language.name(), text).hash(&mut h),
            Source::Assembly(text) => (1u8, text).hash(&mut h),
            Source::Wbin(bytes) => (2u8, bytes).hash(&mut h),
        }
        *half = h.finish();
    }
    (u128::from(halves[0]) << 64) | u128::from(halves[1])
}

/// Where compiled programs are kept between processes: `$WAVE_CACHE_DIR` (none when it is
/// empty or `off`), else `$XDG_CACHE_HOME/wave/kernels`, else `~/.cache/wave/kernels`.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("WAVE_CACHE_DIR") {
        Some(d) if d.is_empty() || d == "off" => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("wave").join("kernels")),
    }
}

/// The disk cache: one file per program, `<key>.wcache`: a text header describing the
/// kernels, a blank line, then the `.wbin`. Anything unreadable is a miss; failures to write
/// are ignored (the cache only saves time).
pub(super) mod disk {
    use super::*;

    const MAGIC: &str = "wave-cache 2";

    fn path(dir: &Path, id: u128) -> PathBuf {
        dir.join(format!("{id:032x}.wcache"))
    }

    /// What a cache file holds: the kernels' descriptions, the rendered warnings, the module.
    pub(in super::super) struct Entry {
        pub(in super::super) kernels: Vec<KernelInfo>,
        pub(in super::super) rendered_warnings: String,
        pub(in super::super) module: Module,
    }

    pub(in super::super) fn store(dir: &Path, id: u128, e: &Entry) {
        let path = path(dir, id);
        let mut out = format!("{MAGIC}\n");
        for k in &e.kernels {
            let wg = k.workgroup_size.map_or("-".to_owned(), |[x, y, z]| format!("{x},{y},{z}"));
            out.push_str(&format!("kernel {} {wg}\n", k.name));
            for param in &k.params {
                let kind = match param.kind {
                    ParamKind::Buffer { elem, written } => {
                        format!("buffer {} {}", elem.map_or("-", Elem::name), u8::from(written))
                    }
                    ParamKind::Scalar(e) => format!("scalar {}", e.name()),
                };
                out.push_str(&format!("param {} {kind}\n", param.name));
            }
        }
        out.push_str(&format!("warnings {}\n", e.rendered_warnings.len()));
        out.push('\n');
        let mut bytes = out.into_bytes();
        bytes.extend(e.rendered_warnings.as_bytes());
        bytes.extend(wave_wbin::write(&e.module));
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        // Written aside and renamed, so that a reader never sees half a file.
        let tmp = dir.join(format!(".{id:032x}.{}.tmp", std::process::id()));
        if std::fs::write(&tmp, &bytes).is_ok() && std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    pub(in super::super) fn load(dir: &Path, id: u128) -> Option<Entry> {
        let bytes = std::fs::read(path(dir, id)).ok()?;
        let split = bytes.windows(2).position(|w| w == b"\n\n")?;
        let header = std::str::from_utf8(&bytes[..split]).ok()?;
        let mut lines = header.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let mut kernels: Vec<KernelInfo> = Vec::new();
        let mut warnings_len = None;
        for line in lines {
            let words: Vec<&str> = line.split(' ').collect();
            match words.as_slice() {
                ["warnings", n] => warnings_len = Some(n.parse::<usize>().ok()?),
                ["kernel", name, wg] => kernels.push(KernelInfo {
                    name: (*name).to_owned(),
                    params: Vec::new(),
                    workgroup_size: match *wg {
                        "-" => None,
                        wg => {
                            let v: Vec<u32> =
                                wg.split(',').filter_map(|n| n.parse().ok()).collect();
                            Some(<[u32; 3]>::try_from(v).ok()?)
                        }
                    },
                }),
                ["param", name, "buffer", elem, written] => {
                    kernels.last_mut()?.params.push(Param {
                        name: (*name).to_owned(),
                        kind: ParamKind::Buffer {
                            elem: Elem::from_name(elem),
                            written: *written == "1",
                        },
                    })
                }
                ["param", name, "scalar", elem] => kernels.last_mut()?.params.push(Param {
                    name: (*name).to_owned(),
                    kind: ParamKind::Scalar(Elem::from_name(elem)?),
                }),
                _ => return None,
            }
        }
        let body = &bytes[split + 2..];
        let warnings_len = warnings_len?;
        let rendered_warnings = String::from_utf8(body.get(..warnings_len)?.to_vec()).ok()?;
        let module = wave_wbin::read(&body[warnings_len..]).ok()?;
        // The header must describe the module's kernels.
        if kernels.len() != module.kernels.len()
            || kernels
                .iter()
                .zip(&module.kernels)
                .any(|(a, b)| a.name != b.name || a.params.len() != b.params.len())
        {
            return None;
        }
        Some(Entry { kernels, rendered_warnings, module })
    }
}
