// The extension in real VS Code: code-server (VS Code in the browser) with the packaged
// wave.vsix, driven in Debian's Chromium by Playwright. It opens a .wave file and checks, each
// with a screenshot in e2e/screenshots/: syntax colours, a diagnostic, a hover with the
// encoding, the Run in emulator lens and its result, the PTX preview (following an edit), and
// a debug session stopped at a breakpoint.
//
// Needs (installed by .ci/install-editor-tools): Node 24, code-server and playwright-core on
// NODE_PATH, Chromium at $CHROMIUM; $WAVE_BIN; the packaged extension at editors/vscode/wave.vsix.
// Run: node --test editors/vscode/e2e/
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const HERE = __dirname;
const VSIX = path.join(HERE, '..', 'wave.vsix');
const WAVE = process.env.WAVE_BIN;
const SHOTS = path.join(HERE, 'screenshots');
const PORT = 18000 + (process.pid % 1000);

const SOURCE = `; A divergent loop, and a kernel with a mistake.
; wave-run: --workgroup 32 --arg out=0 --dump 0:u32:8
.kernel divergent
.param out: ptr
.workgroup_size 32
    mov r1, sr_lane_id
    iadd r4, r1, 1
    mov_imm r2, 0
    loop
        iadd r2, r2, r4
        icmp.gt p0, r2, 10
        break p0
    endloop
    shift.shl r3, r1, 2
    iadd r3, out, r3
    device_store.u32 [r3], r2
.end

.kernel broken
    iaddd r1, r1, 1
.end
`;

function codeServer(args, opts) {
  const bin = require.resolve('code-server/out/node/entry.js');
  return cp.spawn(process.execPath, [bin, ...args], opts);
}

async function waitForServer(url, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`code-server did not answer at ${url}`);
}

test('the WAVE extension in VS Code (code-server, Chromium, Playwright)', { timeout: 300000 }, async () => {
  assert.ok(WAVE, 'WAVE_BIN is set');
  assert.ok(fs.existsSync(VSIX), `the packaged extension ${VSIX} exists`);
  fs.mkdirSync(SHOTS, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wave-e2e-'));
  const workspace = path.join(tmp, 'work');
  const userData = path.join(tmp, 'user');
  const extensions = path.join(tmp, 'extensions');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, 'divergent.wave'), SOURCE);
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'wave.path': WAVE,
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'security.workspace.trust.enabled': false,
      'editor.hover.delay': 100,
      'window.commandCenter': false,
      'telemetry.telemetryLevel': 'off',
    }),
  );
  const install = cp.spawnSync(
    process.execPath,
    [require.resolve('code-server/out/node/entry.js'), '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', VSIX],
    { encoding: 'utf8' },
  );
  assert.strictEqual(install.status, 0, `install: ${install.stdout}${install.stderr}`);

  const server = codeServer(
    ['--auth', 'none', '--bind-addr', `127.0.0.1:${PORT}`, '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--user-data-dir', userData, '--extensions-dir', extensions, workspace],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  server.stdout.on('data', (d) => (log += d));
  server.stderr.on('data', (d) => (log += d));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const shot = (page, name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  try {
    await waitForServer(`http://127.0.0.1:${PORT}/healthz`, 60000);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`http://127.0.0.1:${PORT}/?folder=${encodeURIComponent(workspace)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });

    // Open the file with Quick Open: wait for its row, choose it, and try again if the
    // workbench was still starting.
    const editor = page.locator('.editor-instance .monaco-editor').first();
    for (let attempt = 0; ; attempt++) {
      await page.keyboard.press('Control+P');
      await page.waitForSelector('.quick-input-widget input', { timeout: 20000 });
      await page.keyboard.type('divergent.wave');
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'divergent.wave' }).first();
      await row.waitFor({ timeout: 20000 });
      await row.click();
      try {
        await editor.waitFor({ timeout: 15000 });
        break;
      } catch (e) {
        if (attempt >= 3) throw e;
        await page.keyboard.press('Escape');
      }
    }
    await page.locator('.view-line', { hasText: 'icmp.gt' }).first().waitFor({ timeout: 30000 });

    // 1. Syntax colours: the mnemonic and the comment are coloured differently from names.
    const colour = (text) =>
      page.locator('.view-line span span', { hasText: text }).first().evaluate((e) => getComputedStyle(e).color);
    await page.waitForTimeout(1500);
    const mnemonic = await colour('icmp.gt');
    const comment = await colour('; A divergent loop');
    const name = await colour('out');
    assert.notStrictEqual(mnemonic, comment, 'mnemonic and comment colours differ');
    assert.notStrictEqual(mnemonic, name, 'mnemonic and name colours differ');
    await shot(page, '01-syntax');

    // 2. A diagnostic (E0101 on `iaddd`).
    await page.waitForSelector('.squiggly-error', { timeout: 60000 });
    await shot(page, '02-diagnostic');

    // 3. A hover with the encoding.
    // Hover until the server answers (it may still be starting).
    const hover = page.locator('.monaco-hover', { hasText: 'opcode' });
    for (let attempt = 0; ; attempt++) {
      await page.mouse.move(5, 5);
      await page.locator('.view-line span span', { hasText: 'icmp.gt' }).first().hover();
      try {
        await hover.waitFor({ timeout: 8000 });
        break;
      } catch (e) {
        if (attempt >= 5) throw e;
      }
    }
    assert.match(await hover.innerText(), /47:40/);
    await shot(page, '03-hover');
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');

    // 4. Run in emulator: the lens, then the result panel.
    const runLens = page.locator('.codelens-decoration a', { hasText: 'Run in emulator' }).first();
    await runLens.waitFor({ timeout: 60000 });
    await runLens.click();
    const runTab = page.locator('.tab', { hasText: 'Run: divergent' });
    await runTab.waitFor({ timeout: 60000 });
    const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
    await frame.locator('#status').waitFor({ timeout: 30000 });
    assert.match(await frame.locator('#status').innerText(), /wave run divergent \(; wave-run:\): ok/);
    assert.match(await frame.locator('table.memory').first().innerText(), /11\s+12\s+12\s+12/);
    await shot(page, '04-run');

    // 5. The PTX preview.
    await page.locator('.tab', { hasText: 'divergent.wave' }).first().click();
    const ptxLens = page.locator('.codelens-decoration a', { hasText: 'Show PTX' }).first();
    await ptxLens.click();
    await page.locator('.tab', { hasText: 'divergent.wave.ptx' }).waitFor({ timeout: 30000 });
    await page.locator('.view-line', { hasText: '.entry divergent' }).first().waitFor({ timeout: 30000 });
    // The preview follows edits: change the compare's bound in the source, see it in the PTX.
    await page.locator('.view-line', { hasText: 'icmp.gt p0, r2, 10' }).first().click();
    await page.keyboard.press('End');
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('77');
    await page.locator('.view-line', { hasText: '%r2, 77;' }).first().waitFor({ timeout: 30000 });
    await shot(page, '05-ptx-preview');
    await page.keyboard.press('Control+Z');
    await page.keyboard.press('Control+Z');
    await page.locator('.view-line', { hasText: 'icmp.gt p0, r2, 10' }).first().waitFor({ timeout: 10000 });

    // 6. Debug: a breakpoint on the compare, the Debug lens, continue, stopped there.
    await page.locator('.tab', { hasText: 'divergent.wave' }).first().click();
    await page.locator('.view-line', { hasText: 'icmp.gt' }).first().click();
    await page.keyboard.press('F9');
    await page.locator('.codicon-debug-breakpoint').first().waitFor({ timeout: 20000 });
    await page.locator('.codelens-decoration a', { hasText: 'Debug' }).first().click();
    await page.locator('.debug-toolbar').waitFor({ timeout: 60000 });
    await page.waitForTimeout(1500);
    await page.keyboard.press('F5');
    // The Call Stack view shows the stop's description: which lanes hit.
    await page.getByText(/breakpoint at line 11: wave 0, (lanes|\d+ lanes)/).first().waitFor({ timeout: 60000 });
    await page.locator('.pane-header', { hasText: 'Variables' }).first().waitFor({ timeout: 10000 });
    await page.locator('.monaco-list-row', { hasText: 'Registers' }).first().waitFor({ timeout: 10000 });
    await page.locator('.debug-top-stack-frame-line').first().waitFor({ timeout: 30000 });
    await shot(page, '06-debug-breakpoint');
  } catch (e) {
    const pages = browser.contexts().flatMap((c) => c.pages());
    if (pages[0]) await pages[0].screenshot({ path: path.join(SHOTS, 'failure.png') }).catch(() => {});
    throw new Error(`${e.message}\n--- code-server log ---\n${log.slice(-4000)}`);
  } finally {
    await browser.close();
    server.kill();
  }
});
