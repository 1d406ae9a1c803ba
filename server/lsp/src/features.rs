//! From `wave_ide`'s plain data to protocol types, one function per feature.

use std::collections::HashMap;

use serde_json::json;
use tower_lsp_server::ls_types::*;

use crate::convert::{self, Encoding, LineIndex};
use crate::{COMMANDS, Document, State};

/// Semantic token types, in legend order.
const TOKEN_TYPES: [SemanticTokenType; 8] = [
    SemanticTokenType::KEYWORD,
    SemanticTokenType::MACRO,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::TYPE,
    SemanticTokenType::NUMBER,
    SemanticTokenType::COMMENT,
];

/// Semantic token modifiers, in legend order (bit i is modifier i).
const TOKEN_MODIFIERS: [SemanticTokenModifier; 5] = [
    SemanticTokenModifier::DECLARATION,
    SemanticTokenModifier::READONLY,
    SemanticTokenModifier::DEFAULT_LIBRARY,
    SemanticTokenModifier::DEPRECATED,
    SemanticTokenModifier::MODIFICATION,
];

/// What the server can do; only what it handles. Diagnostics are pulled when the client
/// can pull them, else pushed.
pub(crate) fn capabilities(encoding: Encoding, pull: bool) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        selection_range_provider: Some(SelectionRangeProviderCapability::Simple(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_on_type_formatting_provider: Some(DocumentOnTypeFormattingOptions {
            first_trigger_character: "\n".into(),
            more_trigger_character: Some(vec!["e".into(), "f".into(), "p".into()]),
        }),
        inlay_hint_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_highlight_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        })),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), " ".into(), ",".into()]),
            ..CompletionOptions::default()
        }),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec![" ".into(), ",".into()]),
            retrigger_characters: None,
            work_done_progress_options: WorkDoneProgressOptions::default(),
        }),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: TOKEN_TYPES.to_vec(),
                    token_modifiers: TOKEN_MODIFIERS.to_vec(),
                },
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                work_done_progress_options: WorkDoneProgressOptions::default(),
            },
        )),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::SOURCE_FIX_ALL]),
            work_done_progress_options: WorkDoneProgressOptions::default(),
            resolve_provider: None,
        })),
        code_lens_provider: Some(CodeLensOptions { resolve_provider: None }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: COMMANDS.iter().map(|c| (*c).to_string()).collect(),
            work_done_progress_options: WorkDoneProgressOptions { work_done_progress: Some(true) },
        }),
        diagnostic_provider: pull.then(|| {
            DiagnosticServerCapabilities::Options(DiagnosticOptions {
                identifier: Some("wave".into()),
                inter_file_dependencies: false,
                workspace_diagnostics: false,
                work_done_progress_options: WorkDoneProgressOptions::default(),
            })
        }),
        ..ServerCapabilities::default()
    }
}

/// A progress token as a map key.
pub(crate) fn token_key(token: &ProgressToken) -> String {
    match token {
        NumberOrString::Number(n) => format!("n{n}"),
        NumberOrString::String(s) => format!("s{s}"),
    }
}

fn path_of(uri: &Uri) -> Option<std::path::PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
}

/// The plan of a `wave.run` (the kernel named, or the file's only/first one), with the
/// document version it was made from.
pub(crate) fn plan(
    s: &State,
    uri: &Uri,
    kernel: Option<&str>,
) -> Result<(wave_ide::RunPlan, i32), String> {
    let doc = s.documents.get(uri).ok_or("the document is not open")?;
    let name = match kernel {
        Some(k) => k.to_owned(),
        None => wave_db::kernel_names(&s.db, doc.file)
            .into_iter()
            .next()
            .ok_or("the file has no kernel")?,
    };
    let path = path_of(uri);
    let plan = wave_ide::plan_run(&s.db, doc.file, &name, path.as_deref(), s.settings)?;
    Ok((plan, doc.version))
}

/// Keeps a run's trap as a diagnostic of the document, if it is still at `version`. Returns
/// whether the document's diagnostics changed.
pub(crate) fn record_run(
    s: &mut State,
    uri: &Uri,
    version: i32,
    result: &wave_ide::RunResult,
) -> bool {
    let encoding = s.encoding;
    let Some(doc) = s.documents.get_mut(uri) else { return false };
    if doc.version != version {
        return false;
    }
    let before = doc.run_diagnostics.len();
    doc.run_diagnostics.clear();
    if let Some(trap) = &result.trap {
        let index = LineIndex::new(&doc.text, encoding);
        let line = trap.line.unwrap_or(1).saturating_sub(1);
        let start = index.offset(Position { line, character: 0 });
        let text = &index.line_text(start);
        let indent = text.len() - text.trim_start().len();
        let code_end = text.find(';').map_or(text.len(), |i| i).max(indent);
        let range =
            index.range(start + indent..start + text[..code_end].trim_end().len().max(indent));
        doc.run_diagnostics.push(Diagnostic {
            range,
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String("trap".into())),
            source: Some("wave run".into()),
            message: format!("the run trapped: {}", trap.message),
            ..Diagnostic::default()
        });
    }
    before != 0 || !doc.run_diagnostics.is_empty()
}

/// A run in one line for `window/showMessage`, with its severity.
pub(crate) fn run_summary(r: &wave_ide::RunResult) -> (MessageType, String) {
    let head = format!("wave run {} ({})", r.kernel, r.from);
    if r.cancelled {
        (MessageType::WARNING, format!("{head}: cancelled after {} wave-instructions", r.steps))
    } else if let Some(t) = r.trap.as_ref().filter(|_| !r.ok) {
        (MessageType::ERROR, format!("{head}: trap: {}", t.message))
    } else if let Some(m) = r.mismatches.first() {
        (MessageType::ERROR, format!("{head}: differs from the case: {m}"))
    } else {
        let dump = r.dumps.first().map_or(String::new(), |(o, t, v)| {
            let shown: Vec<&str> = v.iter().take(8).map(String::as_str).collect();
            format!(
                "; {o} {t}[{}]: {}{}",
                v.len(),
                shown.join(" "),
                if v.len() > 8 { " …" } else { "" }
            )
        });
        (MessageType::INFO, format!("{head}: ok, {} wave-instructions{dump}", r.steps))
    }
}

/// `wave/preview` (and the `wave.preview` command).
pub(crate) fn preview(s: &State, uri: &Uri, params: &LSPAny) -> Result<LSPAny, String> {
    let doc = s.documents.get(uri).ok_or("the document is not open")?;
    let target_name =
        params.get("target").and_then(LSPAny::as_str).unwrap_or(s.settings.preview(&s.db));
    let kernel = params.get("kernel").and_then(LSPAny::as_str);
    let index = LineIndex::new(&doc.text, s.encoding);
    let offset = params
        .get("position")
        .and_then(|p| serde_json::from_value::<Position>(p.clone()).ok())
        .map(|p| index.offset(p));
    let (form, p) = wave_ide::preview_form(&s.db, doc.file, kernel, offset, target_name)?;
    let language = match form.as_str() {
        "wave" => "wave",
        "mir" => "mir",
        "hip" => "hip",
        "sycl" => "cpp",
        "metal" => "metal",
        _ => "ptx",
    };
    Ok(json!({
        "target": form,
        "language": language,
        "text": p.text,
        "lines": p.lines.iter().map(|l| l.map(|l| l - 1)).collect::<Vec<_>>(),
        "warnings": p.warnings,
        "version": doc.version,
    }))
}

#[allow(deprecated, reason = "the deprecated field must still be set")]
pub(crate) fn document_symbol(sym: &wave_ide::Symbol, index: &LineIndex<'_>) -> DocumentSymbol {
    DocumentSymbol {
        name: sym.name.clone(),
        detail: None,
        kind: match sym.kind {
            wave_ide::SymbolKind::Kernel => SymbolKind::FUNCTION,
            wave_ide::SymbolKind::Label => SymbolKind::KEY,
        },
        tags: None,
        deprecated: None,
        range: index.range(sym.range.clone()),
        selection_range: index.range(sym.selection.clone()),
        children: Some(sym.children.iter().map(|c| document_symbol(c, index)).collect()),
    }
}

/// Kernels and labels of every open document whose name contains the query's characters in
/// order (case-insensitive).
pub(crate) fn workspace_symbols(s: &State, query: &str) -> WorkspaceSymbolResponse {
    let query = query.to_ascii_lowercase();
    let matches = |name: &str| {
        let mut chars = name.chars().map(|c| c.to_ascii_lowercase());
        query.chars().all(|q| chars.any(|c| c == q))
    };
    let mut out = Vec::new();
    let mut uris: Vec<&Uri> = s.documents.keys().collect();
    uris.sort_by_key(|u| u.as_str().to_string());
    for uri in uris {
        let doc = &s.documents[uri];
        let index = LineIndex::new(&doc.text, s.encoding);
        for k in wave_ide::symbols(&s.db, doc.file) {
            let container = k.name.clone();
            let mut push = |sym: &wave_ide::Symbol, container: Option<String>| {
                if matches(&sym.name) {
                    out.push(WorkspaceSymbol {
                        name: sym.name.clone(),
                        kind: match sym.kind {
                            wave_ide::SymbolKind::Kernel => SymbolKind::FUNCTION,
                            wave_ide::SymbolKind::Label => SymbolKind::KEY,
                        },
                        tags: None,
                        container_name: container,
                        location: OneOf::Left(Location {
                            uri: uri.clone(),
                            range: index.range(sym.selection.clone()),
                        }),
                        data: None,
                    });
                }
            };
            push(&k, None);
            for c in &k.children {
                push(c, Some(container.clone()));
            }
        }
    }
    WorkspaceSymbolResponse::Nested(out)
}

pub(crate) fn folding_ranges(
    s: &State,
    doc: &Document,
    index: &LineIndex<'_>,
) -> Vec<FoldingRange> {
    wave_ide::folding_ranges(&s.db, doc.file)
        .into_iter()
        .map(|r| {
            let (start, end) = (index.position(r.start), index.position(r.end.saturating_sub(1)));
            FoldingRange {
                start_line: start.line,
                end_line: end.line,
                kind: Some(FoldingRangeKind::Region),
                ..FoldingRange::default()
            }
        })
        .collect()
}

pub(crate) fn selection_ranges(
    s: &State,
    doc: &Document,
    index: &LineIndex<'_>,
    positions: &[Position],
) -> Vec<SelectionRange> {
    positions
        .iter()
        .map(|p| {
            let ranges = wave_ide::selection_ranges(&s.db, doc.file, index.offset(*p));
            let mut chain: Option<SelectionRange> = None;
            for r in ranges.into_iter().rev() {
                chain = Some(SelectionRange { range: index.range(r), parent: chain.map(Box::new) });
            }
            chain.unwrap_or(SelectionRange { range: Range { start: *p, end: *p }, parent: None })
        })
        .collect()
}

pub(crate) fn inlay_hints(s: &State, doc: &Document, index: &LineIndex<'_>) -> Vec<InlayHint> {
    wave_ide::inlay_hints(&s.db, doc.file, s.settings)
        .into_iter()
        .map(|(at, label)| InlayHint {
            position: index.position(at),
            label: InlayHintLabel::String(label),
            kind: None,
            text_edits: None,
            tooltip: None,
            padding_left: Some(true),
            padding_right: None,
            data: None,
        })
        .collect()
}

pub(crate) fn code_lenses(
    s: &State,
    uri: &Uri,
    doc: &Document,
    index: &LineIndex<'_>,
) -> Vec<CodeLens> {
    let path = path_of(uri);
    wave_ide::code_lenses(&s.db, doc.file, path.as_deref(), s.settings, s.no_gpu.is_none())
        .into_iter()
        .map(|lens| {
            let (command, arguments) = match &lens.command {
                wave_ide::LensCommand::Run { kernel, device } => (
                    "wave.run",
                    json!([{ "uri": uri.as_str(), "kernel": kernel, "device": device.name() }]),
                ),
                wave_ide::LensCommand::Preview { kernel, target } => (
                    "wave.showPreview",
                    json!([{ "uri": uri.as_str(), "kernel": kernel, "target": target.name() }]),
                ),
                wave_ide::LensCommand::Show { kernel, form } => (
                    "wave.showPreview",
                    json!([{ "uri": uri.as_str(), "kernel": kernel, "target": form }]),
                ),
                wave_ide::LensCommand::Debug { kernel, launch } => {
                    let launch =
                        launch.as_ref().map_or(LSPAny::Null, crate::run_result::launch_json);
                    (
                        "wave.debug",
                        json!([{ "uri": uri.as_str(), "kernel": kernel, "launch": launch }]),
                    )
                }
            };
            let arguments = match arguments {
                LSPAny::Array(a) => Some(a),
                _ => None,
            };
            CodeLens {
                range: index.range(lens.range),
                command: Some(Command { title: lens.title, command: command.into(), arguments }),
                data: None,
            }
        })
        .collect()
}

pub(crate) fn code_actions(
    s: &State,
    uri: &Uri,
    doc: &Document,
    index: &LineIndex<'_>,
    params: &CodeActionParams,
) -> CodeActionResponse {
    let range = index.offset(params.range.start)..index.offset(params.range.end);
    let only = params.context.only.as_ref();
    wave_ide::code_actions(&s.db, doc.file, range)
        .into_iter()
        .filter_map(|a| {
            let kind = match a.kind {
                wave_ide::ActionKind::QuickFix => CodeActionKind::QUICKFIX,
                wave_ide::ActionKind::SourceFixAll => CodeActionKind::SOURCE_FIX_ALL,
            };
            if let Some(only) = only
                && !only.iter().any(|o| kind.as_str().starts_with(o.as_str()))
            {
                return None;
            }
            let edits: Vec<TextEdit> = a
                .edits
                .iter()
                .map(|(r, t)| TextEdit { range: index.range(r.clone()), new_text: t.clone() })
                .collect();
            let mut changes = HashMap::new();
            changes.insert(uri.clone(), edits);
            Some(CodeActionOrCommand::CodeAction(CodeAction {
                title: a.title,
                kind: Some(kind),
                diagnostics: a.fixes.map(|d| vec![convert::diagnostic(&d, index, uri)]),
                edit: Some(WorkspaceEdit { changes: Some(changes), ..WorkspaceEdit::default() }),
                command: None,
                is_preferred: a.preferred.then_some(true),
                disabled: None,
                data: None,
            }))
        })
        .collect()
}

pub(crate) fn completion(
    s: &State,
    doc: &Document,
    index: &LineIndex<'_>,
    position: Position,
) -> CompletionResponse {
    let items = wave_ide::completions(&s.db, doc.file, index.offset(position))
        .into_iter()
        .filter(|c| s.snippets || c.kind != wave_ide::CompletionKind::Snippet)
        .map(|c| {
            let snippet = c.kind == wave_ide::CompletionKind::Snippet;
            CompletionItem {
                label: c.label,
                kind: Some(match c.kind {
                    wave_ide::CompletionKind::Mnemonic => CompletionItemKind::KEYWORD,
                    wave_ide::CompletionKind::Directive => CompletionItemKind::PROPERTY,
                    wave_ide::CompletionKind::Snippet => CompletionItemKind::SNIPPET,
                    wave_ide::CompletionKind::Register => CompletionItemKind::VARIABLE,
                    wave_ide::CompletionKind::Parameter => CompletionItemKind::FIELD,
                    wave_ide::CompletionKind::Special => CompletionItemKind::CONSTANT,
                    wave_ide::CompletionKind::Label => CompletionItemKind::REFERENCE,
                    wave_ide::CompletionKind::Suffix => CompletionItemKind::ENUM_MEMBER,
                }),
                detail: Some(c.detail),
                insert_text: Some(c.insert),
                insert_text_format: Some(if snippet {
                    InsertTextFormat::SNIPPET
                } else {
                    InsertTextFormat::PLAIN_TEXT
                }),
                ..CompletionItem::default()
            }
        })
        .collect();
    CompletionResponse::Array(items)
}

/// Signature help; parameter ranges are in the label's encoding units.
pub(crate) fn signature(sig: wave_ide::Signature, encoding: Encoding) -> SignatureHelp {
    let units = |s: &str| match encoding {
        Encoding::Utf8 => s.len() as u32,
        Encoding::Utf16 => s.encode_utf16().count() as u32,
    };
    let parameters = sig
        .parameters
        .iter()
        .map(|r| ParameterInformation {
            label: ParameterLabel::LabelOffsets([
                units(&sig.label[..r.start]),
                units(&sig.label[..r.end]),
            ]),
            documentation: None,
        })
        .collect();
    SignatureHelp {
        signatures: vec![SignatureInformation {
            label: sig.label.clone(),
            documentation: Some(Documentation::String(sig.documentation)),
            parameters: Some(parameters),
            active_parameter: Some(sig.active as u32),
        }],
        active_signature: Some(0),
        active_parameter: Some(sig.active as u32),
    }
}

/// Semantic tokens, delta-encoded as the protocol wants.
pub(crate) fn semantic_tokens(s: &State, doc: &Document, index: &LineIndex<'_>) -> SemanticTokens {
    use wave_ide::TokenKind as K;
    const DECL: u32 = 1;
    const READONLY: u32 = 2;
    const LIBRARY: u32 = 4;
    const MODIFIED: u32 = 16;
    let mut data = Vec::new();
    let (mut line, mut col) = (0u32, 0u32);
    let mut cursor = index.cursor();
    for t in wave_ide::file_tokens(&s.db, doc.file) {
        let (ty, modifiers) = match &t.kind {
            K::Mnemonic { .. } => (0, 0),
            K::Directive(_) => (1, 0),
            K::KernelName => (2, DECL),
            K::Label { definition } => (2, if *definition { DECL } else { 0 }),
            K::Parameter { definition, .. } => (3, if *definition { DECL } else { 0 }),
            K::Register { write, .. } | K::Predicate { write, .. } => {
                (4, if *write { MODIFIED } else { 0 })
            }
            K::Special(_) => (4, READONLY | LIBRARY),
            K::Type => (5, 0),
            K::Number => (6, 0),
            K::Comment => (7, 0),
        };
        let start = cursor.position(t.range.start);
        let end = cursor.position(t.range.end);
        if end.line != start.line || end.character <= start.character {
            continue;
        }
        let delta_line = start.line - line;
        let delta_start = if delta_line == 0 { start.character - col } else { start.character };
        data.push(SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type: ty,
            token_modifiers_bitset: modifiers,
        });
        line = start.line;
        col = start.character;
    }
    SemanticTokens { result_id: None, data }
}
