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
}

/// The server.
pub struct Backend {
    client: Client,
    state: Mutex<State>,
}

impl Backend {
    fn new(client: Client) -> Backend {
        Backend {
            client,
            state: Mutex::new(State {
                db: wave_db::Database::default(),
                documents: HashMap::new(),
                encoding: Encoding::Utf16,
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
        self.with_state(|s| s.encoding = encoding)?;
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
