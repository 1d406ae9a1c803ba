// The WAVE extension: the language client of `wave lsp`, the debugger (`wave dap`), previews of
// the generated GPU code beside the editor, runs in the emulator with their results, and each
// kernel's occupancy in the status bar.
import * as cp from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  ExecuteCommandSignature,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;

const TARGETS = ['ptx', 'hip', 'sycl', 'metal'];

function settings() {
  const c = vscode.workspace.getConfiguration('wave');
  return {
    target: c.get<string>('target', 'nvidia'),
    waveWidth: c.get<number>('waveWidth', 0),
    preview: c.get<string>('preview', 'ptx'),
    liveRegisters: c.get<boolean>('liveRegisters', false),
    runBudget: c.get<number>('runBudget', 20000000),
  };
}

/** The `wave` binary, or undefined after telling the user how to fix it. */
async function waveBinary(): Promise<string | undefined> {
  const configured = vscode.workspace.getConfiguration('wave').get<string>('path', 'wave');
  const probe = cp.spawnSync(configured, ['--version'], { encoding: 'utf8' });
  if (probe.status === 0) {
    output.appendLine(`using ${configured}: ${probe.stdout.trim()}`);
    return configured;
  }
  const choice = await vscode.window.showErrorMessage(
    `WAVE: cannot run \`${configured}\` (${probe.error?.message ?? probe.stderr?.trim() ?? 'no output'}). ` +
      'Install it with `cargo install --path server/cli`, or set `wave.path`.',
    'Open Settings',
  );
  if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'wave.path');
  }
  return undefined;
}

/** The kernel whose `.kernel` line is at or above `line`. */
function kernelAt(doc: vscode.TextDocument, line: number): string | undefined {
  for (let i = line; i >= 0; i--) {
    const m = /^\s*\.kernel\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(doc.lineAt(i).text);
    if (m) return m[1];
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Backend previews: a read-only document per (source, target) that follows edits.

interface PreviewKey {
  uri: string;
  target: string;
  kernel?: string;
}

class Previews implements vscode.TextDocumentContentProvider {
  readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** Generated line → source line (0-based), per preview document. */
  readonly maps = new Map<string, (number | null)[]>();
  readonly decoration = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    isWholeLine: true,
  });

  static uri(key: PreviewKey): vscode.Uri {
    const source = vscode.Uri.parse(key.uri);
    const name = `${path.basename(source.path)}.${key.target}`;
    return vscode.Uri.from({
      scheme: 'wave-preview',
      path: `/${name}`,
      query: JSON.stringify(key),
    });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const key = JSON.parse(uri.query) as PreviewKey;
    if (!client) return '// the WAVE language server is not running';
    try {
      const result: { text: string; lines: (number | null)[] } = await client.sendRequest('wave/preview', {
        textDocument: { uri: key.uri },
        target: key.target,
        kernel: key.kernel,
      });
      this.maps.set(uri.toString(), result.lines);
      return result.text;
    } catch (e) {
      return `// ${(e as Error).message}`;
    }
  }

  /** Highlights the generated lines of the source line under the cursor. */
  follow(editor: vscode.TextEditor) {
    for (const preview of vscode.window.visibleTextEditors) {
      const uri = preview.document.uri;
      if (uri.scheme !== 'wave-preview') continue;
      const key = JSON.parse(uri.query) as PreviewKey;
      if (key.uri !== editor.document.uri.toString()) continue;
      const line = editor.selection.active.line;
      const map = this.maps.get(uri.toString()) ?? [];
      const ranges: vscode.Range[] = [];
      map.forEach((l, i) => {
        if (l === line) ranges.push(new vscode.Range(i, 0, i, 0));
      });
      preview.setDecorations(this.decoration, ranges);
      if (ranges.length > 0) preview.revealRange(ranges[0], vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }
}

/** Languages whose files the server analyses: WAVE assembly, and kernels written in Python,
 * Rust, C++ and TypeScript (only the kernels of those files; the rest is the language's own
 * server's). */
const LANGUAGES = ['wave', 'python', 'rust', 'cpp', 'typescript'];

function ours(doc: vscode.TextDocument): boolean {
  return LANGUAGES.includes(doc.languageId);
}

/** The kernel at `line`: the `.kernel` above it in assembly, the server's lens line above it
 * in a kernel source. */
function kernelNear(doc: vscode.TextDocument, line: number): string | undefined {
  if (doc.languageId === 'wave') return kernelAt(doc, line);
  const kernel = /(?:def|fn|void|function)\s+(\w+)\s*\(|static\s+(\w+)\s*\(/;
  for (let l = line; l >= 0; l--) {
    const m = kernel.exec(doc.lineAt(l).text);
    if (m) return m[1] ?? m[2];
  }
  return undefined;
}

async function showPreview(previews: Previews, arg?: PreviewKey) {
  let key = arg;
  if (!key || !key.uri) {
    const editor = vscode.window.activeTextEditor;
    if (!editor || !ours(editor.document)) {
      void vscode.window.showWarningMessage('WAVE: open a .wave file or a kernel source to preview it');
      return;
    }
    const forms = editor.document.languageId === 'wave' ? TARGETS : ['wave', 'mir', ...TARGETS];
    const target = await vscode.window.showQuickPick(forms, { placeHolder: 'Target language' });
    if (!target) return;
    key = { uri: editor.document.uri.toString(), target, kernel: kernelNear(editor.document, editor.selection.active.line) };
  }
  const doc = await vscode.workspace.openTextDocument(Previews.uri(key));
  const language = { ptx: 'ptx', hip: 'cpp', sycl: 'cpp', metal: 'cpp', wave: 'wave' }[key.target] ?? 'plaintext';
  await vscode.languages.setTextDocumentLanguage(doc, language).then(undefined, () => doc);
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true, preview: false });
}

// ---------------------------------------------------------------------------------------------
// Runs: the server runs the kernel; the result goes to the output panel and a webview.

interface RunResult {
  kernel: string;
  from: string;
  ok: boolean;
  cancelled: boolean;
  trap: { message: string; line: number | null } | null;
  steps: number;
  stats: Record<string, number>;
  dumps: { offset: number; type: string; values: string[] }[];
  mismatches: string[];
  warnings: string[];
  profile?: { line: number | null; text: string; executions: number; utilisation: number }[];
  timeline?: { wave: number; start: number; end: number; text: string; active: number }[];
  device?: string;
  comparison?: {
    offset: number;
    type: string;
    count: number;
    agree: boolean;
    differing: number;
    first: { index: number; emulator: string; gpu: string }[];
  }[];
}

/** Per buffer, whether the GPU and the emulator agree, and the first differing elements. */
function comparisonLines(r: RunResult): string[] {
  return (r.comparison ?? []).map((c) => {
    const what = `${c.offset} ${c.type}[${c.count}]`;
    if (c.agree) return `GPU and emulator agree: ${what}`;
    const first = c.first.map((f) => `[${f.index}] emulator ${f.emulator}, GPU ${f.gpu}`).join('; ');
    return `GPU and emulator differ: ${what}, ${c.differing} elements; first: ${first}`;
  });
}

function where(r: RunResult): string {
  return r.device && r.device !== 'emulator' ? ` on ${r.device}` : '';
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);
}

function runHtml(r: RunResult): string {
  const status = r.ok ? 'ok' : r.cancelled ? 'cancelled' : r.trap ? `trap: ${r.trap.message}` : 'differs from the case';
  const dumps = r.dumps
    .map((d) => {
      const cells = d.values.map((v, i) => `<td title="${d.offset + i * 4}">${escapeHtml(v)}</td>`);
      const rows: string[] = [];
      for (let i = 0; i < cells.length; i += 8) rows.push(`<tr><th>${i}</th>${cells.slice(i, i + 8).join('')}</tr>`);
      return `<h3>${d.offset}: ${d.type}[${d.values.length}]</h3><table class="memory">${rows.join('')}</table>`;
    })
    .join('');
  const profile = (r.profile ?? [])
    .map(
      (p) =>
        `<tr><td>${p.line ?? ''}</td><td><code>${escapeHtml(p.text)}</code></td><td>${p.executions}</td>` +
        `<td><div class="bar" style="width:${Math.round(p.utilisation * 200)}px"></div> ${(p.utilisation * 100).toFixed(0)}%</td></tr>`,
    )
    .join('');
  const waves = new Map<number, { start: number; end: number; active: number; text: string }[]>();
  let last = 1;
  for (const e of r.timeline ?? []) {
    if (!waves.has(e.wave)) waves.set(e.wave, []);
    waves.get(e.wave)!.push(e);
    last = Math.max(last, e.end);
  }
  const width = 800;
  const rowsSvg = [...waves.entries()]
    .map(([wave, events], row) =>
      events
        .map(
          (e) =>
            `<rect x="${(e.start / last) * width}" y="${row * 14}" width="${Math.max(1, ((e.end - e.start) / last) * width)}" height="12" fill-opacity="${0.25 + 0.75 * e.active}"><title>wave ${wave}: ${escapeHtml(e.text)}</title></rect>`,
        )
        .join(''),
    )
    .join('');
  const stats = Object.entries(r.stats)
    .map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${v}</td></tr>`)
    .join('');
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); }
table { border-collapse: collapse; margin-bottom: 1em; }
td, th { border: 1px solid var(--vscode-panel-border); padding: 2px 6px; text-align: right; }
.bar { display: inline-block; height: 10px; background: var(--vscode-charts-blue); }
rect { fill: var(--vscode-charts-green); }
</style></head><body>
<h2 id="status">wave run ${escapeHtml(r.kernel)} (${escapeHtml(r.from)})${escapeHtml(where(r))}: ${escapeHtml(status)}</h2>
${r.mismatches.map((m) => `<p>expected: ${escapeHtml(m)}</p>`).join('')}
${r.comparison && r.comparison.length ? `<h2>GPU against the emulator</h2><ul id="comparison">${comparisonLines(r).map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>` : ''}
<h2>Memory</h2>${dumps || '<p>no memory shown</p>'}
<h2>Lane utilisation per instruction</h2>
<table id="profile"><tr><th>line</th><th>instruction</th><th>executions</th><th>active lanes</th></tr>${profile}</table>
<h2>Wave timeline</h2>
<svg id="timeline" width="${width}" height="${waves.size * 14}">${rowsSvg}</svg>
<h2>Statistics</h2><table>${stats}</table>
</body></html>`;
}

function showRun(r: RunResult) {
  output.appendLine(`wave run ${r.kernel} (${r.from})${where(r)}: ${r.ok ? 'ok' : 'FAILED'}, ${r.steps} wave-instructions`);
  if (r.trap) output.appendLine(`trap: ${r.trap.message}`);
  for (const d of r.dumps) output.appendLine(`${d.offset} ${d.type}[${d.values.length}]: ${d.values.join(' ')}`);
  for (const m of r.mismatches) output.appendLine(`expected: ${m}`);
  for (const l of comparisonLines(r)) output.appendLine(l);
  output.show(true);
  const panel = vscode.window.createWebviewPanel('waveRun', `Run: ${r.kernel}`, vscode.ViewColumn.Beside, {
    enableScripts: false,
  });
  panel.webview.html = runHtml(r);
}

// ---------------------------------------------------------------------------------------------
// Occupancy of the kernel under the cursor, from the server's inlay hints.

async function updateOccupancy(item: vscode.StatusBarItem) {
  const editor = vscode.window.activeTextEditor;
  if (!client || !editor || !ours(editor.document)) {
    item.hide();
    return;
  }
  const doc = editor.document;
  const kernel = kernelNear(doc, editor.selection.active.line);
  try {
    const hints: { position: { line: number }; label: string | { value: string }[] }[] = await client.sendRequest(
      'textDocument/inlayHint',
      {
        textDocument: { uri: doc.uri.toString() },
        range: { start: { line: 0, character: 0 }, end: { line: doc.lineCount, character: 0 } },
      },
    );
    for (const h of hints ?? []) {
      const label = typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join('');
      const name =
        doc.languageId === 'wave'
          ? /^\s*\.kernel\s+(\w+)/.exec(doc.lineAt(h.position.line).text)?.[1]
          : kernelNear(doc, h.position.line);
      if (label.startsWith('R=') && name === kernel) {
        item.text = `$(pulse) ${name}: ${label}`;
        item.tooltip = `Occupancy of ${name} on ${settings().target}`;
        item.show();
        return;
      }
    }
  } catch {
    // The server answers nothing while the kernel does not assemble.
  }
  item.hide();
}

// ---------------------------------------------------------------------------------------------
// The debugger.

class DebugConfigurations implements vscode.DebugConfigurationProvider {
  resolveDebugConfiguration(_folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration) {
    if (!config.type && !config.request && !config.name) {
      const editor = vscode.window.activeTextEditor;
      if (!editor || !ours(editor.document)) return undefined;
      // The case file next to the source, when there is one.
      const source = editor.document.uri.fsPath;
      const caseFile = source.replace(/\.(wave|py|rs|cpp|cc|cxx|ts)$/, '.toml');
      const program = fs.existsSync(caseFile) ? caseFile : source;
      return { type: 'wave', request: 'launch', name: 'Debug this kernel', program, stopOnEntry: true };
    }
    if (!config.program) {
      return vscode.window.showErrorMessage('WAVE: the launch configuration needs `program`').then(() => undefined);
    }
    return config;
  }
}

class DebugAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly binary: string) {}
  createDebugAdapterDescriptor(): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    return new vscode.DebugAdapterExecutable(this.binary, ['dap']);
  }
}

// ---------------------------------------------------------------------------------------------

export async function activate(context: vscode.ExtensionContext) {
  output = vscode.window.createOutputChannel('WAVE');
  context.subscriptions.push(output);
  const binary = await waveBinary();
  if (!binary) return;

  const previews = new Previews();
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider('wave-preview', previews),
    vscode.commands.registerCommand('wave.showPreview', (arg?: PreviewKey) => showPreview(previews, arg)),
    vscode.commands.registerCommand('wave.debug', async (arg?: { launch?: vscode.DebugConfiguration }) => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      const launch = arg?.launch ?? (await new DebugConfigurations().resolveDebugConfiguration(folder, {} as vscode.DebugConfiguration));
      if (launch) await vscode.debug.startDebugging(folder, launch);
    }),
    vscode.debug.registerDebugConfigurationProvider('wave', new DebugConfigurations()),
    vscode.debug.registerDebugAdapterDescriptorFactory('wave', new DebugAdapterFactory(binary)),
  );

  const serverOptions: ServerOptions = { command: binary, args: ['lsp'] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: LANGUAGES.map((language) => ({ language })),
    initializationOptions: { wave: settings() },
    outputChannel: output,
    synchronize: { configurationSection: 'wave' },
    middleware: {
      // `wave.run` is the server's command: fill its arguments from the cursor when it comes
      // from the palette, and show its result.
      executeCommand: async (command: string, args: unknown[], next: ExecuteCommandSignature) => {
        if (command === 'wave.run' && (args.length === 0 || !args[0])) {
          const editor = vscode.window.activeTextEditor;
          if (!editor || !ours(editor.document)) return undefined;
          args = [{ uri: editor.document.uri.toString(), kernel: kernelNear(editor.document, editor.selection.active.line) }];
        }
        const result = await next(command, args);
        if (command === 'wave.run' && result) showRun(result as RunResult);
        return result;
      },
    },
  };
  client = new LanguageClient('wave', 'WAVE language server', serverOptions, clientOptions);
  await client.start();

  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  context.subscriptions.push(
    status,
    vscode.window.onDidChangeTextEditorSelection((e) => {
      previews.follow(e.textEditor);
      void updateOccupancy(status);
    }),
    vscode.window.onDidChangeActiveTextEditor(() => void updateOccupancy(status)),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (!ours(e.document)) return;
      for (const doc of vscode.workspace.textDocuments) {
        if (doc.uri.scheme === 'wave-preview' && (JSON.parse(doc.uri.query) as PreviewKey).uri === e.document.uri.toString()) {
          previews.changed.fire(doc.uri);
        }
      }
    }),
  );
  void updateOccupancy(status);
}

export async function deactivate() {
  await client?.stop();
}
