//! The language server: `wave lsp` speaks the Language Server Protocol on stdio.
//!
//! This crate is the only one that knows LSP: it keeps the open documents, applies edits in
//! order with their versions, converts byte offsets to the negotiated position encoding
//! (UTF-8 when the client offers it, else UTF-16) and back, and turns the plain data of
//! `wave_ide` and `wave_db` into protocol types. Every handler computes synchronously under
//! one lock and never awaits while holding it; a panic in a handler is caught and answered
//! with an error instead of taking the server down.

mod convert;

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;

use salsa::Setter;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::convert::{Encoding, LineIndex};

/// An open document.
struct Document {
    file: wave_db::SourceFile,
    text: String,
    version: i32,
}

struct State {
    db: wave_db::Database,
    documents: HashMap<Uri, Document>,
    encoding: Encoding,
    settings: wave_db::Settings,
}

/// Settings from `initializationOptions` or `workspace/didChangeConfiguration`: an object with
/// `target` (a target profile) and `preview` (`ptx`, `hip`, `sycl`, `metal`), at the top level
/// or under `wave`.
fn apply_settings(state: &mut State, value: &LSPAny) {
    let value = value.get("wave").unwrap_or(value);
    if let Some(t) = value.get("target").and_then(LSPAny::as_str) {
        state.settings.set_target(&mut state.db).to(t.to_string());
    }
    if let Some(p) = value.get("preview").and_then(LSPAny::as_str) {
        state.settings.set_preview(&mut state.db).to(p.to_string());
    }
}

/// The server.
pub struct Backend {
    client: Client,
    state: Mutex<State>,
}

impl Backend {
    fn new(client: Client) -> Backend {
        let db = wave_db::Database::default();
        let settings = wave_db::Settings::new(&db, "nvidia".into(), "ptx".into());
        Backend {
            client,
            state: Mutex::new(State {
                db,
                documents: HashMap::new(),
                encoding: Encoding::Utf16,
                settings,
            }),
        }
    }

    /// Runs `f` on the state, catching a panic so that one bad request cannot stop the server.
    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> Result<T> {
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        std::panic::catch_unwind(AssertUnwindSafe(|| f(&mut guard)))
            .map_err(|_| Error::internal_error())
    }

    /// The diagnostics of `uri`, in protocol form, with the document's version.
    fn diagnostics(state: &State, uri: &Uri) -> Option<(Vec<Diagnostic>, i32)> {
        let doc = state.documents.get(uri)?;
        let index = LineIndex::new(&doc.text, state.encoding);
        let list = wave_db::file_diagnostics(&state.db, doc.file)
            .iter()
            .map(|d| convert::diagnostic(d, &index, uri))
            .collect();
        Some((list, doc.version))
    }

    async fn publish(&self, uri: Uri) {
        if let Ok(Some((list, version))) = self.with_state(|s| Self::diagnostics(s, &uri)) {
            self.client.publish_diagnostics(uri, list, Some(version)).await;
        }
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offers_utf8 = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|list| list.contains(&PositionEncodingKind::UTF8));
        let encoding = if offers_utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
        self.with_state(|s| {
            s.encoding = encoding;
            if let Some(options) = &params.initialization_options {
                apply_settings(s, options);
            }
        })?;
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "wave".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: ServerCapabilities {
                position_encoding: Some(match encoding {
                    Encoding::Utf8 => PositionEncodingKind::UTF8,
                    Encoding::Utf16 => PositionEncodingKind::UTF16,
                }),
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::INCREMENTAL,
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                document_symbol_provider: Some(OneOf::Left(true)),
                folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
                document_formatting_provider: Some(OneOf::Left(true)),
                inlay_hint_provider: Some(OneOf::Left(true)),
                definition_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                rename_provider: Some(OneOf::Left(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec![".".into(), " ".into(), ",".into()]),
                    ..CompletionOptions::default()
                }),
                ..ServerCapabilities::default()
            },
            offset_encoding: None,
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let uri = doc.uri.clone();
        let _ = self.with_state(|s| {
            let file = wave_db::SourceFile::new(
                &s.db,
                doc.uri.as_str().to_string(),
                doc.text.clone(),
                doc.version,
            );
            s.documents.insert(doc.uri, Document { file, text: doc.text, version: doc.version });
        });
        self.publish(uri).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri.clone();
        let version = params.text_document.version;
        let applied = self.with_state(|s| {
            let encoding = s.encoding;
            let Some(doc) = s.documents.get_mut(&uri) else { return false };
            // Edits arrive in order; an older version than the one we have is stale.
            if version <= doc.version {
                return false;
            }
            for change in params.content_changes {
                match change.range {
                    None => doc.text = change.text,
                    Some(range) => {
                        let index = LineIndex::new(&doc.text, encoding);
                        let start = index.offset(range.start);
                        let end = index.offset(range.end).max(start);
                        doc.text.replace_range(start..end, &change.text);
                    }
                }
            }
            doc.version = version;
            let (file, text) = (doc.file, doc.text.clone());
            file.set_text(&mut s.db).to(text);
            file.set_version(&mut s.db).to(version);
            true
        });
        if applied == Ok(true) {
            self.publish(uri).await;
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let _ = self.with_state(|s| s.documents.remove(&uri));
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let _ = self.with_state(|s| apply_settings(s, &params.settings));
        let _ = self.client.inlay_hint_refresh().await;
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        self.with_state(|s| {
            let doc = s.documents.get(&params.text_document.uri)?;
            let index = LineIndex::new(&doc.text, s.encoding);
            #[allow(deprecated, reason = "the deprecated field must still be set")]
            fn convert(sym: &wave_ide::Symbol, index: &LineIndex<'_>) -> DocumentSymbol {
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
                    children: Some(sym.children.iter().map(|c| convert(c, index)).collect()),
                }
            }
            let list =
                wave_ide::symbols(&s.db, doc.file).iter().map(|k| convert(k, &index)).collect();
            Some(DocumentSymbolResponse::Nested(list))
        })
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.with_state(|s| {
            let doc = s.documents.get(&params.text_document.uri)?;
            let index = LineIndex::new(&doc.text, s.encoding);
            let list = wave_ide::folding_ranges(&s.db, doc.file)
                .into_iter()
                .map(|r| {
                    let (start, end) =
                        (index.position(r.start), index.position(r.end.saturating_sub(1)));
                    FoldingRange {
                        start_line: start.line,
                        end_line: end.line,
                        kind: Some(FoldingRangeKind::Region),
                        ..FoldingRange::default()
                    }
                })
                .collect();
            Some(list)
        })
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        self.with_state(|s| {
            let doc = s.documents.get(&params.text_document.uri)?;
            let formatted = wave_ide::format(&s.db, doc.file)?;
            let index = LineIndex::new(&doc.text, s.encoding);
            Some(vec![TextEdit { range: index.range(0..doc.text.len()), new_text: formatted }])
        })
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        self.with_state(|s| {
            let doc = s.documents.get(&params.text_document.uri)?;
            let index = LineIndex::new(&doc.text, s.encoding);
            let list = wave_ide::inlay_hints(&s.db, doc.file, s.settings)
                .into_iter()
                .map(|(at, label)| InlayHint {
                    position: index.position(at),
                    label: InlayHintLabel::String(format!("  {label}")),
                    kind: None,
                    text_edits: None,
                    tooltip: None,
                    padding_left: Some(true),
                    padding_right: None,
                    data: None,
                })
                .collect();
            Some(list)
        })
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = params.text_document_position;
        self.with_state(|s| {
            let doc = s.documents.get(&at.text_document.uri)?;
            let index = LineIndex::new(&doc.text, s.encoding);
            let items = wave_ide::completions(&s.db, doc.file, index.offset(at.position))
                .into_iter()
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
            Some(CompletionResponse::Array(items))
        })
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let at = params.text_document_position_params;
        self.with_state(|s| {
            let doc = s.documents.get(&at.text_document.uri)?;
            let index = LineIndex::new(&doc.text, s.encoding);
            let range = wave_ide::definition(&s.db, doc.file, index.offset(at.position))?;
            Some(GotoDefinitionResponse::Scalar(Location {
                uri: at.text_document.uri.clone(),
                range: index.range(range),
            }))
        })
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let at = params.text_document_position;
        self.with_state(|s| {
            let doc = s.documents.get(&at.text_document.uri)?;
            let index = LineIndex::new(&doc.text, s.encoding);
            let list: Vec<Location> =
                wave_ide::references(&s.db, doc.file, index.offset(at.position))
                    .into_iter()
                    .map(|r| Location { uri: at.text_document.uri.clone(), range: index.range(r) })
                    .collect();
            (!list.is_empty()).then_some(list)
        })
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let at = params.text_document_position;
        let outcome = self.with_state(|s| {
            let doc = s.documents.get(&at.text_document.uri)?;
            let index = LineIndex::new(&doc.text, s.encoding);
            Some(
                wave_ide::rename(&s.db, doc.file, index.offset(at.position), &params.new_name).map(
                    |edits| {
                        edits
                            .into_iter()
                            .map(|(r, new_text)| TextEdit { range: index.range(r), new_text })
                            .collect::<Vec<_>>()
                    },
                ),
            )
        })?;
        match outcome {
            None => Ok(None),
            Some(Err(why)) => Err(Error::invalid_params(why)),
            Some(Ok(edits)) => {
                let mut changes = HashMap::new();
                changes.insert(at.text_document.uri, edits);
                Ok(Some(WorkspaceEdit { changes: Some(changes), ..WorkspaceEdit::default() }))
            }
        }
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        self.with_state(|s| {
            let doc = s.documents.get(&at.text_document.uri)?;
            let index = LineIndex::new(&doc.text, s.encoding);
            let h = wave_ide::hover(&s.db, doc.file, index.offset(at.position))?;
            Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: h.markdown,
                }),
                range: Some(index.range(h.range)),
            })
        })
    }
}

/// Serves the protocol on standard input and output until the client exits.
pub fn run_stdio() -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let (service, socket) = LspService::new(Backend::new);
        Server::new(tokio::io::stdin(), tokio::io::stdout(), socket).serve(service).await;
    });
    Ok(())
}
