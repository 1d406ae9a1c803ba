//! The language server: `wave lsp` speaks the Language Server Protocol on stdio.
//!
//! This crate is the only one that knows LSP: it keeps the open documents, applies edits in
//! order with their versions, converts byte offsets to the negotiated position encoding
//! (UTF-8 when the client offers it, else UTF-16) and back, and turns the plain data of
//! `wave_ide` and `wave_db` into protocol types. Every handler computes synchronously under
//! one lock and never awaits while holding it; a panic in a handler is caught and answered
//! with an error instead of taking the server down. Runs in the emulator are the one long
//! task: they run on a blocking thread, report progress, and stop when cancelled.

mod convert;
mod features;
pub mod harness;
mod run_result;
pub mod transport;

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use salsa::Setter;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService};

use crate::convert::{Encoding, LineIndex};

/// The stack of the threads that compute answers (see [`Backend::compute`]), as large as the
/// `wave` command's main thread: address space reserved, used only as deep as the analysis
/// goes.
const ANALYSIS_STACK: usize = 256 << 20;

/// The threads that compute answers: the blocking pool of a runtime of their own, whose
/// threads have [`ANALYSIS_STACK`] whatever runtime the server itself runs on (a test's, or
/// `wave lsp`'s), and are kept a while between requests rather than started for each.
fn analysis_threads() -> tokio::runtime::Handle {
    static POOL: std::sync::OnceLock<Option<tokio::runtime::Runtime>> = std::sync::OnceLock::new();
    let pool = POOL.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .thread_name("wave-analysis")
            .thread_stack_size(ANALYSIS_STACK)
            .build()
            .ok()
    });
    match pool {
        Some(runtime) => runtime.handle().clone(),
        // (Only if the system refuses the runtime: the caller's own blocking pool.)
        None => tokio::runtime::Handle::current(),
    }
}

/// An open document.
#[derive(Clone)]
struct Document {
    file: wave_db::SourceFile,
    /// The text as a rope: an edit and a position conversion cost the log of its size, and
    /// the snapshots of requests in flight share its nodes.
    text: ropey::Rope,
    version: i32,
    /// Diagnostics of the last run (traps at their line), for this version only.
    run_diagnostics: Vec<Diagnostic>,
}

/// What the server knows.
pub(crate) struct State {
    db: wave_db::Database,
    documents: HashMap<Uri, Document>,
    encoding: Encoding,
    settings: wave_db::Settings,
    /// Instruction budget of runs.
    run_budget: u64,
    /// The client pulls diagnostics (`textDocument/diagnostic`); otherwise they are pushed.
    pull_diagnostics: bool,
    /// The client shows `window/workDoneProgress`.
    progress: bool,
    /// The client expands snippets in completions.
    snippets: bool,
    /// Cancel flags of runs in flight, by progress token.
    runs: HashMap<String, Arc<AtomicBool>>,
    /// Why there is no CUDA GPU to run on (`None` when there is one): asked of the driver once,
    /// when the server starts.
    no_gpu: Option<String>,
}

impl State {
    /// [`State::view`] of every open document (their texts are shared, not copied).
    fn view_all(&self) -> State {
        self.snapshot(self.documents.clone())
    }

    /// What a request on document `uri` computes from, taken under the lock and used without
    /// it: a snapshot of the database (a salsa handle, which the next edit cancels), the
    /// settings, and that document alone. `None` when it is not open.
    fn view(&self, uri: &Uri) -> Option<State> {
        let doc = self.documents.get(uri)?.clone();
        Some(self.snapshot(HashMap::from([(uri.clone(), doc)])))
    }

    /// A snapshot of the database and the settings, with `documents`.
    fn snapshot(&self, documents: HashMap<Uri, Document>) -> State {
        State {
            db: self.db.clone(),
            documents,
            encoding: self.encoding,
            settings: self.settings,
            run_budget: self.run_budget,
            pull_diagnostics: self.pull_diagnostics,
            progress: self.progress,
            snippets: self.snippets,
            runs: HashMap::new(),
            no_gpu: self.no_gpu.clone(),
        }
    }
}

/// Settings from `initializationOptions` or `workspace/didChangeConfiguration`: an object with
/// `target` (a target profile), `preview` (`ptx`, `hip`, `sycl`, `metal`), `waveWidth`,
/// `liveRegisters` and `runBudget`, at the top level or under `wave`.
fn apply_settings(state: &mut State, value: &LSPAny) {
    let value = value.get("wave").unwrap_or(value);
    if let Some(t) = value.get("target").and_then(LSPAny::as_str) {
        state.settings.set_target(&mut state.db).to(t.to_string());
    }
    if let Some(p) = value.get("preview").and_then(LSPAny::as_str) {
        state.settings.set_preview(&mut state.db).to(p.to_string());
    }
    if let Some(w) = value.get("waveWidth").and_then(LSPAny::as_u64) {
        state.settings.set_wave_width(&mut state.db).to(u32::try_from(w).unwrap_or(0));
    }
    if let Some(l) = value.get("liveRegisters").and_then(LSPAny::as_bool) {
        state.settings.set_live_registers(&mut state.db).to(l);
    }
    if let Some(b) = value.get("runBudget").and_then(LSPAny::as_u64) {
        state.run_budget = b.max(1);
    }
}

/// Sets a run's cancel flag when the request that started it goes away (answered, or
/// cancelled with `$/cancelRequest`, which drops the request's future).
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The server.
pub struct Backend {
    client: Client,
    state: Mutex<State>,
    next_token: AtomicU64,
}

impl Backend {
    fn new(client: Client) -> Backend {
        let db = wave_db::Database::default();
        let settings = wave_db::Settings::new(&db, "nvidia".into(), "ptx".into(), 0, false);
        Backend {
            client,
            state: Mutex::new(State {
                db,
                documents: HashMap::new(),
                encoding: Encoding::Utf16,
                settings,
                run_budget: wave_ide::DEFAULT_RUN_BUDGET,
                pull_diagnostics: false,
                progress: false,
                snippets: false,
                runs: HashMap::new(),
                no_gpu: match wave_runtime::devices() {
                    (gpus, _) if !gpus.is_empty() => None,
                    (_, why) => Some(why.map_or("no CUDA GPU".into(), |e| e.to_string())),
                },
            }),
            next_token: AtomicU64::new(1),
        }
    }

    /// Runs `f` off the request loop, on a thread of a pool with a known, large stack
    /// ([`analysis_threads`]: the analyses of deeply nested code need a few MB), so that the
    /// loop goes on reading messages. `f` computes on a snapshot of the database
    /// ([`State::view`]): an edit that arrives meanwhile cancels it at its next query (salsa's
    /// cancellation), and the request is answered `ContentModified`. A panic is an internal
    /// error answer, and the server goes on.
    async fn compute<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let job = analysis_threads()
            .spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(f)));
        match job.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(payload)) if payload.is::<salsa::Cancelled>() => Err(Error::content_modified()),
            _ => Err(Error::internal_error()),
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

    /// A request on one open document, computed off the request loop on a snapshot (see
    /// [`Backend::compute`]): `None` when the document is not open.
    async fn on_document<T: Send + 'static>(
        &self,
        uri: &Uri,
        f: impl FnOnce(&State, &Document, &LineIndex<'_>) -> Option<T> + Send + 'static,
    ) -> Result<Option<T>> {
        let Some(view) = self.with_state(|s| s.view(uri))? else { return Ok(None) };
        let uri = uri.clone();
        self.compute(move || {
            let doc = view.documents.get(&uri)?;
            let index = LineIndex::new(&doc.text, view.encoding);
            f(&view, doc, &index)
        })
        .await
    }

    /// The diagnostics of `uri`, in protocol form, with the document's version.
    fn diagnostics(state: &State, uri: &Uri) -> Option<(Vec<Diagnostic>, i32)> {
        let doc = state.documents.get(uri)?;
        let index = LineIndex::new(&doc.text, state.encoding);
        let mut list: Vec<Diagnostic> = wave_ide::diagnostics(&state.db, doc.file)
            .iter()
            .map(|d| convert::diagnostic(d, &index, uri))
            .collect();
        list.extend(doc.run_diagnostics.iter().cloned());
        Some((list, doc.version))
    }

    /// Publishes the diagnostics of `uri` if they are pushed and `version` is still current
    /// (a newer edit publishes its own: stale work is skipped).
    async fn publish(&self, uri: Uri, version: Option<i32>) {
        // Let edits that are already queued apply first.
        tokio::task::yield_now().await;
        let view = self.with_state(|s| {
            if s.pull_diagnostics {
                return None;
            }
            let current = s.documents.get(&uri)?.version;
            if version.is_some_and(|v| v != current) {
                return None;
            }
            s.view(&uri)
        });
        let Ok(Some(view)) = view else { return };
        let at = uri.clone();
        // Cancelled by a newer edit: that edit publishes its own.
        let computed = self.compute(move || Self::diagnostics(&view, &at)).await;
        if let Ok(Some((list, version))) = computed {
            self.client.publish_diagnostics(uri, list, Some(version)).await;
        }
    }

    /// Diagnostics changed for a reason other than an edit (settings, a run).
    async fn refresh_diagnostics(&self, uri: Option<Uri>) {
        let pull = self.with_state(|s| s.pull_diagnostics).unwrap_or(false);
        if pull {
            let _ = self.client.workspace_diagnostic_refresh().await;
        } else {
            let uris: Vec<Uri> = match uri {
                Some(u) => vec![u],
                None => {
                    self.with_state(|s| s.documents.keys().cloned().collect()).unwrap_or_default()
                }
            };
            for u in uris {
                self.publish(u, None).await;
            }
        }
    }

    /// `wave/preview`: `{ textDocument: { uri }, target?, kernel?, position? }` to
    /// `{ target, language, text, lines }`, where `lines[i]` is the 0-based line of the WAVE
    /// file that generated line `i` comes from (or `null`).
    async fn preview(&self, params: LSPAny) -> Result<LSPAny> {
        let uri = params
            .pointer("/textDocument/uri")
            .and_then(LSPAny::as_str)
            .and_then(|u| u.parse::<Uri>().ok())
            .ok_or_else(|| Error::invalid_params("wave/preview needs textDocument.uri"))?;
        let Some(view) = self.with_state(|s| s.view(&uri))? else {
            return Err(Error::invalid_params("the document is not open"));
        };
        let answer = self.compute(move || features::preview(&view, &uri, &params)).await?;
        answer.map_err(Error::invalid_params)
    }

    /// `window/workDoneProgress/cancel`: stops the run that reports to that token.
    async fn cancel_progress(&self, params: WorkDoneProgressCancelParams) {
        let key = features::token_key(&params.token);
        let _ = self.with_state(|s| {
            if let Some(flag) = s.runs.get(&key) {
                flag.store(true, Ordering::Relaxed);
            }
        });
    }

    /// `wave.run`: runs a kernel in the emulator off the request loop.
    async fn run_kernel(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let arg = params.arguments.first().cloned().unwrap_or(LSPAny::Null);
        let uri = arg
            .get("uri")
            .and_then(LSPAny::as_str)
            .and_then(|u| u.parse::<Uri>().ok())
            .ok_or_else(|| Error::invalid_params("wave.run needs { uri, kernel }"))?;
        let kernel = arg.get("kernel").and_then(LSPAny::as_str).map(str::to_owned);
        let device = match arg.get("device").and_then(LSPAny::as_str) {
            None => wave_ide::RunDevice::Emulator,
            Some(name) => wave_ide::RunDevice::from_name(name).ok_or_else(|| {
                Error::invalid_params(format!(
                    "wave.run: unknown device `{name}` (emulator, cuda or compare)"
                ))
            })?,
        };
        if device != wave_ide::RunDevice::Emulator
            && let Some(why) = self.with_state(|s| s.no_gpu.clone())?
        {
            return Err(Error::invalid_params(format!("wave.run on a GPU: {why}")));
        }
        let view = self.with_state(|s| s.view(&uri))?;
        let at = uri.clone();
        let planned = self
            .compute(move || match view {
                Some(view) => features::plan(&view, &at, kernel.as_deref()),
                None => Err("the document is not open".to_string()),
            })
            .await?;
        let (mut plan, version) = planned.map_err(Error::invalid_params)?;
        let budget = self.with_state(|s| s.run_budget)?;
        plan.dispatch.max_steps = plan.dispatch.max_steps.min(budget);
        let workgroups =
            plan.dispatch.grid.iter().fold(1u64, |n, &d| n.saturating_mul(u64::from(d)));
        // Progress: the request's own token, or one we create when the client shows progress.
        let token = match params.work_done_progress_params.work_done_token {
            Some(t) => Some(t),
            None if self.with_state(|s| s.progress).unwrap_or(false) => {
                let t = NumberOrString::String(format!(
                    "wave-run-{}",
                    self.next_token.fetch_add(1, Ordering::Relaxed)
                ));
                self.client.create_work_done_progress(t.clone()).await.ok().map(|()| t)
            }
            None => None,
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let _guard = CancelOnDrop(cancel.clone());
        let key = token.as_ref().map(features::token_key);
        if let Some(k) = &key {
            let _ = self.with_state(|s| s.runs.insert(k.clone(), cancel.clone()));
        }
        let progress = Arc::new(wave_ide::Progress::default());
        let started = std::time::Instant::now();
        let ongoing = match &token {
            Some(t) => Some(
                self.client
                    .progress(t.clone(), format!("Running {}", plan.kernel))
                    .with_percentage(0)
                    .with_cancel_button()
                    .begin()
                    .await,
            ),
            None => None,
        };
        let task = {
            let (cancel, progress) = (cancel.clone(), progress.clone());
            // A GPU runs in a child `wave` (this binary), which a fault or a hang cannot take
            // along with the server.
            let exe = std::env::current_exe().unwrap_or_else(|_| "wave".into());
            tokio::task::spawn_blocking(move || match device {
                wave_ide::RunDevice::Emulator => wave_ide::execute(plan, &cancel, &progress),
                wave_ide::RunDevice::Gpu => {
                    wave_ide::execute_on_gpu(&plan, &exe, GPU_RUN_TIMEOUT, &cancel)
                }
                wave_ide::RunDevice::Compare => {
                    wave_ide::compare(plan, &exe, GPU_RUN_TIMEOUT, &cancel, &progress)
                }
            })
        };
        tokio::pin!(task);
        let result = loop {
            tokio::select! {
                done = &mut task => break done,
                () = tokio::time::sleep(std::time::Duration::from_millis(100)) => {
                    if let Some(p) = &ongoing {
                        let done = progress.workgroups.load(Ordering::Relaxed);
                        let percent = (done.saturating_mul(100) / workgroups.max(1)).min(99) as u32;
                        let message = progress_message(&progress, workgroups, started.elapsed());
                        p.report_with_message(message, percent, None).await;
                    }
                }
            }
        };
        if let Some(k) = &key {
            let _ = self.with_state(|s| s.runs.remove(k));
        }
        if let Some(p) = ongoing {
            p.finish().await;
        }
        let result = result.map_err(|_| Error::internal_error())?;
        // A trap becomes a diagnostic at its line, for this version of the document.
        let changed = self.with_state(|s| features::record_run(s, &uri, version, &result))?;
        if changed {
            self.refresh_diagnostics(Some(uri)).await;
        }
        // Every client shows these: the whole result in its log, a summary as a message.
        self.client.log_message(MessageType::INFO, result.to_text()).await;
        let (kind, summary) = features::run_summary(&result);
        self.client.show_message(kind, summary).await;
        Ok(Some(run_result::run_json(&result)))
    }
}

/// `12 of 64 workgroups, 1.52 G lane-ops/s`: what a run in progress shows.
fn progress_message(
    progress: &wave_ide::Progress,
    workgroups: u64,
    elapsed: std::time::Duration,
) -> String {
    let done = progress.workgroups.load(Ordering::Relaxed);
    let rate = progress.lane_ops.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64().max(1e-3);
    format!("{done} of {workgroups} workgroups, {:.2} G lane-ops/s", rate / 1e9)
}

/// How long a kernel may run on a GPU for `wave.run`.
const GPU_RUN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The commands the server executes.
const COMMANDS: [&str; 2] = ["wave.run", "wave.preview"];

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offers_utf8 = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|list| list.contains(&PositionEncodingKind::UTF8));
        let encoding = if offers_utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
        let pull =
            params.capabilities.text_document.as_ref().is_some_and(|t| t.diagnostic.is_some());
        let progress =
            params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        let snippets = params
            .capabilities
            .text_document
            .as_ref()
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.snippet_support)
            .unwrap_or(false);
        self.with_state(|s| {
            s.encoding = encoding;
            s.pull_diagnostics = pull;
            s.progress = progress;
            s.snippets = snippets;
            if let Some(options) = &params.initialization_options {
                apply_settings(s, options);
            }
        })?;
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "wave".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: features::capabilities(encoding, pull),
            offset_encoding: None,
        })
    }

    async fn shutdown(&self) -> Result<()> {
        let _ = self.with_state(|s| {
            for flag in s.runs.values() {
                flag.store(true, Ordering::Relaxed);
            }
        });
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let uri = doc.uri.clone();
        let _ = self.with_state(|s| {
            // Reopening replaces the document (and its version).
            match s.documents.get_mut(&doc.uri) {
                Some(d) => {
                    d.file.set_text(&mut s.db).to(doc.text.clone());
                    d.file.set_version(&mut s.db).to(doc.version);
                    d.text = ropey::Rope::from_str(&doc.text);
                    d.version = doc.version;
                    d.run_diagnostics.clear();
                }
                None => {
                    let file = wave_db::SourceFile::new(
                        &s.db,
                        doc.uri.as_str().to_string(),
                        doc.text.clone(),
                        doc.version,
                    );
                    let document = Document {
                        file,
                        text: ropey::Rope::from_str(&doc.text),
                        version: doc.version,
                        run_diagnostics: Vec::new(),
                    };
                    s.documents.insert(doc.uri, document);
                }
            }
        });
        self.publish(uri, None).await;
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
                    None => doc.text = ropey::Rope::from_str(&change.text),
                    Some(range) => {
                        let index = LineIndex::new(&doc.text, encoding);
                        let start = index.offset(range.start);
                        let end = index.offset(range.end).max(start);
                        convert::replace(&mut doc.text, start..end, &change.text);
                    }
                }
            }
            doc.version = version;
            doc.run_diagnostics.clear();
            let (file, text) = (doc.file, doc.text.to_string());
            file.set_text(&mut s.db).to(text);
            file.set_version(&mut s.db).to(version);
            true
        });
        if applied == Ok(true) {
            self.publish(uri, Some(version)).await;
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let pull = self
            .with_state(|s| {
                if let Some(doc) = s.documents.remove(&uri) {
                    // The outline kept for the next version's cut is not needed any more.
                    wave_db::Db::outlines(&s.db).forget(doc.file);
                }
                s.pull_diagnostics
            })
            .unwrap_or(false);
        if !pull {
            self.client.publish_diagnostics(uri, Vec::new(), None).await;
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let _ = self.with_state(|s| apply_settings(s, &params.settings));
        let _ = self.client.inlay_hint_refresh().await;
        let _ = self.client.code_lens_refresh().await;
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        let uri = params.text_document.uri;
        let view = self.with_state(|s| s.view(&uri))?;
        let report = self
            .compute(move || {
                let Some(s) = view else {
                    return DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                        related_documents: None,
                        full_document_diagnostic_report: FullDocumentDiagnosticReport {
                            result_id: None,
                            items: Vec::new(),
                        },
                    });
                };
                let s = &s;
                let (items, version) = Self::diagnostics(s, &uri).unwrap_or_default();
                let id = format!(
                    "{version}:{}",
                    s.documents.get(&uri).map_or(0, |d| d.run_diagnostics.len())
                );
                if params.previous_result_id.as_deref() == Some(id.as_str()) {
                    DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
                        related_documents: None,
                        unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport {
                            result_id: id,
                        },
                    })
                } else {
                    DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                        related_documents: None,
                        full_document_diagnostic_report: FullDocumentDiagnosticReport {
                            result_id: Some(id),
                            items,
                        },
                    })
                }
            })
            .await?;
        Ok(DocumentDiagnosticReportResult::Report(report))
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        self.on_document(&params.text_document.uri.clone(), move |s, doc, index| {
            let list = wave_ide::symbols(&s.db, doc.file)
                .iter()
                .map(|k| features::document_symbol(k, index))
                .collect();
            Some(DocumentSymbolResponse::Nested(list))
        })
        .await
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        let view = self.with_state(|s| s.view_all())?;
        self.compute(move || Some(features::workspace_symbols(&view, &params.query))).await
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.on_document(&params.text_document.uri.clone(), move |s, doc, index| {
            Some(features::folding_ranges(s, doc, index))
        })
        .await
    }

    async fn selection_range(
        &self,
        params: SelectionRangeParams,
    ) -> Result<Option<Vec<SelectionRange>>> {
        self.on_document(&params.text_document.uri.clone(), move |s, doc, index| {
            Some(features::selection_ranges(s, doc, index, &params.positions))
        })
        .await
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        self.on_document(&params.text_document.uri.clone(), move |s, doc, index| {
            let formatted = wave_ide::format(&s.db, doc.file)?;
            Some(vec![TextEdit {
                range: index.range(0..doc.text.len_bytes()),
                new_text: formatted,
            }])
        })
        .await
    }

    async fn on_type_formatting(
        &self,
        params: DocumentOnTypeFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>> {
        let at = params.text_document_position;
        self.on_document(&at.text_document.uri.clone(), move |s, doc, index| {
            let offset = index.offset(at.position);
            let edits = wave_ide::on_type_indent(&s.db, doc.file, offset, &params.ch);
            Some(
                edits
                    .into_iter()
                    .map(|(r, new_text)| TextEdit { range: index.range(r), new_text })
                    .collect(),
            )
        })
        .await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        self.on_document(&params.text_document.uri.clone(), move |s, doc, index| {
            Some(features::inlay_hints(s, doc, index))
        })
        .await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        self.on_document(&uri.clone(), move |s, doc, index| {
            Some(features::code_lenses(s, &uri, doc, index))
        })
        .await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri.clone();
        self.on_document(&uri.clone(), move |s, doc, index| {
            Some(features::code_actions(s, &uri, doc, index, &params))
        })
        .await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        match params.command.as_str() {
            "wave.run" => self.run_kernel(params).await,
            "wave.preview" => {
                let arg = params.arguments.first().cloned().unwrap_or(LSPAny::Null);
                self.preview(arg).await.map(Some)
            }
            other => Err(Error::invalid_params(format!(
                "unknown command `{other}` (the server runs {})",
                COMMANDS.join(", ")
            ))),
        }
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = params.text_document_position;
        self.on_document(&at.text_document.uri.clone(), move |s, doc, index| {
            Some(features::completion(s, doc, index, at.position))
        })
        .await
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let at = params.text_document_position_params;
        self.on_document(&at.text_document.uri.clone(), move |s, doc, index| {
            let sig = wave_ide::signature_help(&s.db, doc.file, index.offset(at.position))?;
            Some(features::signature(sig, s.encoding))
        })
        .await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let at = params.text_document_position_params;
        self.on_document(&at.text_document.uri.clone(), move |s, doc, index| {
            let range = wave_ide::definition(&s.db, doc.file, index.offset(at.position))?;
            Some(GotoDefinitionResponse::Scalar(Location {
                uri: at.text_document.uri.clone(),
                range: index.range(range),
            }))
        })
        .await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let at = params.text_document_position;
        self.on_document(&at.text_document.uri.clone(), move |s, doc, index| {
            let list: Vec<Location> =
                wave_ide::references(&s.db, doc.file, index.offset(at.position))
                    .into_iter()
                    .map(|r| Location { uri: at.text_document.uri.clone(), range: index.range(r) })
                    .collect();
            (!list.is_empty()).then_some(list)
        })
        .await
    }

    async fn document_highlight(
        &self,
        params: DocumentHighlightParams,
    ) -> Result<Option<Vec<DocumentHighlight>>> {
        let at = params.text_document_position_params;
        self.on_document(&at.text_document.uri.clone(), move |s, doc, index| {
            let list: Vec<DocumentHighlight> =
                wave_ide::document_highlights(&s.db, doc.file, index.offset(at.position))
                    .into_iter()
                    .map(|(r, access)| DocumentHighlight {
                        range: index.range(r),
                        kind: Some(match access {
                            wave_ide::Access::Read => DocumentHighlightKind::READ,
                            wave_ide::Access::Write => DocumentHighlightKind::WRITE,
                        }),
                    })
                    .collect();
            (!list.is_empty()).then_some(list)
        })
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        self.on_document(&params.text_document.uri.clone(), move |s, doc, index| {
            Some(SemanticTokensResult::Tokens(features::semantic_tokens(s, doc, index)))
        })
        .await
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        self.on_document(&params.text_document.uri.clone(), move |s, doc, index| {
            let offset = index.offset(params.position);
            let refs = wave_ide::references(&s.db, doc.file, offset);
            let here = refs.into_iter().find(|r| r.start <= offset && offset <= r.end)?;
            Some(PrepareRenameResponse::Range(index.range(here)))
        })
        .await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let at = params.text_document_position;
        let outcome = self
            .on_document(&at.text_document.uri.clone(), move |s, doc, index| {
                Some(
                    wave_ide::rename(&s.db, doc.file, index.offset(at.position), &params.new_name)
                        .map(|edits| {
                            edits
                                .into_iter()
                                .map(|(r, new_text)| TextEdit { range: index.range(r), new_text })
                                .collect::<Vec<_>>()
                        }),
                )
            })
            .await?;
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
        self.on_document(&at.text_document.uri.clone(), move |s, doc, index| {
            let h = wave_ide::hover(&s.db, doc.file, index.offset(at.position))?;
            Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: h.markdown,
                }),
                range: Some(index.range(h.range)),
            })
        })
        .await
    }
}

/// The service with the custom methods (`wave/preview`, progress cancellation).
pub fn service() -> (LspService<Backend>, tower_lsp_server::ClientSocket) {
    LspService::build(Backend::new)
        .custom_method("wave/preview", Backend::preview)
        .custom_method("window/workDoneProgress/cancel", Backend::cancel_progress)
        .finish()
}

/// Serves the protocol on standard input and output until the client exits.
pub fn run_stdio() -> std::io::Result<()> {
    // Handlers compute on this thread (the `wave` command gives it a large stack); runs go to
    // blocking threads, given the same.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_stack_size(64 << 20)
        .build()?;
    runtime.block_on(transport::serve(tokio::io::stdin(), tokio::io::stdout()));
    // Reading standard input blocks a thread that no one can wake: do not wait for it.
    runtime.shutdown_background();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_a_handler_is_an_error_answer_and_the_server_goes_on() {
        let (service, _socket) = LspService::new(Backend::new);
        let backend = service.inner();
        let prior = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let answer = backend.with_state(|_| -> u32 { panic!("a bug in a handler") });
        std::panic::set_hook(prior);
        assert_eq!(answer, Err(Error::internal_error()));
        // The state is still usable (the poisoned lock is recovered).
        assert_eq!(backend.with_state(|s| s.documents.len()), Ok(0));
    }
}
