// A real DAP client against `wave dap`: @vscode/debugadapter-testsupport's DebugClient launches
// the adapter, stops at a conditional breakpoint in a divergent loop, steps forward and back,
// reads per-lane registers and device memory, and checks them against the emulator
// (`wave run --json` on the same kernel). Then it debugs a Python kernel of the kernel set: a
// breakpoint on a source line, and variables read by their source names. The `wave` binary is
// $WAVE_BIN.
// Run: WAVE_BIN=target/debug/wave node --test server/dap/tests/client/
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const WAVE = process.env.WAVE_BIN || path.join(__dirname, '..', '..', '..', '..', 'target', 'debug', 'wave');
const PROGRAM = path.join(__dirname, 'divergent.wave');
const LINE_CMP = 11;
const LINE_STORE = 16;

/** What the emulator computes: out[t] for the 64 threads. */
function emulator() {
  const out = execFileSync(WAVE, ['run', PROGRAM, '--arg', 'out=0', '--dump', '0:u32:64', '--json'], { encoding: 'utf8' });
  return JSON.parse(out).dumps[0].values.map(Number);
}

/** The lanes of register `name` in the top frame of `threadId`. */
async function lanes(dc, threadId, name) {
  const st = await dc.stackTraceRequest({ threadId });
  const scopes = await dc.scopesRequest({ frameId: st.body.stackFrames[0].id });
  const regs = scopes.body.scopes.find((s) => s.name === 'Registers');
  const rows = await dc.variablesRequest({ variablesReference: regs.variablesReference });
  const row = rows.body.variables.find((v) => v.name.split(' ')[0] === name);
  assert.ok(row, `no ${name} in ${JSON.stringify(rows.body.variables.map((v) => v.name))}`);
  const children = await dc.variablesRequest({ variablesReference: row.variablesReference });
  return children.body.variables.map((v) => Number(v.value.split(' ')[0]));
}

function words(base64) {
  const b = Buffer.from(base64, 'base64');
  const out = [];
  for (let i = 0; i + 4 <= b.length; i += 4) out.push(b.readUInt32LE(i));
  return out;
}

test('a divergent loop through a real DAP client', async () => {
  const expected = emulator();
  assert.strictEqual(expected.length, 64);
  const dc = new DebugClient(WAVE, 'dap', 'wave');
  dc.defaultTimeout = 20000;
  await dc.start();
  try {
    const initialized = dc.waitForEvent('initialized');
    const init = await dc.initializeRequest({ adapterID: 'wave', linesStartAt1: true, columnsStartAt1: true, supportsANSIStyling: false });
    assert.strictEqual(init.body.supportsStepBack, true);
    await initialized;
    await dc.launchRequest({ program: PROGRAM, args: { out: 0 } });
    const bps = await dc.setBreakpointsRequest({
      source: { path: PROGRAM },
      breakpoints: [{ line: LINE_CMP, condition: 'lane == 5 && r2 > 10' }],
    });
    assert.strictEqual(bps.body.breakpoints[0].verified, true);
    const stoppedAtBreakpoint = dc.waitForEvent('stopped');
    const located = dc.assertStoppedLocation('breakpoint', { path: PROGRAM, line: LINE_CMP });
    await dc.configurationDoneRequest();
    const stopped = await stoppedAtBreakpoint;
    await located;
    assert.strictEqual(stopped.body.description, 'breakpoint at line 11: wave 0, lane 5 hit');

    // Lane 5 adds 6: 12 is the first sum past 10, and it is what the emulator stores.
    const atBreak = await lanes(dc, 1, 'r2');
    assert.strictEqual(atBreak[5], 12);
    assert.strictEqual(atBreak[5], expected[5]);
    const ev = await dc.evaluateRequest({ expression: 'r2[5] + 0', context: 'repl' });
    assert.strictEqual(ev.body.result, '12');

    // Forward one line, then back: the same registers.
    await Promise.all([dc.nextRequest({ threadId: 1 }), dc.assertStoppedLocation('step', { line: LINE_CMP + 1 })]);
    await Promise.all([dc.stepBackRequest({ threadId: 1 }), dc.assertStoppedLocation('step', { line: LINE_CMP })]);
    assert.deepStrictEqual(await lanes(dc, 1, 'r2'), atBreak);

    // At the store, every lane of wave 0 holds what the emulator stores.
    await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [{ line: LINE_STORE }] });
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.assertStoppedLocation('breakpoint', { line: LINE_STORE })]);
    const r2 = await lanes(dc, 1, 'r2');
    assert.deepStrictEqual(r2, expected.slice(0, 32));

    // Step over the store: device memory holds wave 0's results, wave 1's are still 0.
    await Promise.all([dc.nextRequest({ threadId: 1, granularity: 'instruction' }), dc.waitForEvent('stopped')]);
    const mem = await dc.customRequest('readMemory', { memoryReference: 'device', offset: 0, count: 256 });
    const got = words(mem.body.data);
    assert.deepStrictEqual(got.slice(0, 32), expected.slice(0, 32));
    assert.deepStrictEqual(got.slice(32), new Array(32).fill(0));

    // Wave 1 stops at the store too; then, without breakpoints, the dispatch runs to its end.
    await Promise.all([dc.continueRequest({ threadId: 2 }), dc.assertStoppedLocation('breakpoint', { line: LINE_STORE })]);
    assert.deepStrictEqual(await lanes(dc, 2, 'r2'), expected.slice(32));
    await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [] });
    await Promise.all([dc.continueRequest({ threadId: 2 }), dc.waitForEvent('terminated')]);
  } finally {
    await dc.stop();
  }
});

test('a bad launch configuration is a clear error in the client', async () => {
  const dc = new DebugClient(WAVE, 'dap', 'wave');
  await dc.start();
  try {
    await dc.initializeRequest();
    await assert.rejects(dc.launchRequest({ program: PROGRAM, grid: 'big' }), /`grid` must be a number or a list/);
  } finally {
    await dc.stop();
  }
});

test('a Python kernel: a breakpoint on its source line and its variables by name', async () => {
  const kernels = path.join(__dirname, '..', '..', '..', '..', 'conformance', 'kernels', 'python');
  const CASE = path.join(kernels, 'vector_add.toml');
  const SOURCE = path.join(kernels, 'vector_add.py');
  const lines = require('node:fs').readFileSync(SOURCE, 'utf8').split('\n');
  // The last line holding the store (the docstring above quotes it).
  const STORE = lines.map((l, i) => [l, i]).filter(([l]) => l.includes('c[i] = a[i] + b[i]')).pop()[1] + 1;
  const dc = new DebugClient(WAVE, 'dap', 'wave');
  dc.defaultTimeout = 20000;
  await dc.start();
  try {
    const initialized = dc.waitForEvent('initialized');
    await dc.initializeRequest({ adapterID: 'wave', linesStartAt1: true, columnsStartAt1: true });
    await initialized;
    // The case file gives the dispatch and the memory; its `file` is the Python kernel.
    await dc.launchRequest({ program: CASE, waveWidth: 32 });
    const bps = await dc.setBreakpointsRequest({ source: { path: SOURCE }, breakpoints: [{ line: STORE }] });
    assert.strictEqual(bps.body.breakpoints[0].verified, true, JSON.stringify(bps.body));
    assert.strictEqual(bps.body.breakpoints[0].line, STORE);
    await Promise.all([dc.configurationDoneRequest(), dc.assertStoppedLocation('breakpoint', { path: SOURCE, line: STORE })]);

    const st = await dc.stackTraceRequest({ threadId: 1 });
    assert.match(st.body.stackFrames[0].name, /^vector_add · .+ · \d+\/32 lanes active$/);
    const scopes = await dc.scopesRequest({ frameId: st.body.stackFrames[0].id });
    assert.strictEqual(scopes.body.scopes[0].name, 'Variables');
    const rows = await dc.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
    const byName = Object.fromEntries(rows.body.variables.map((v) => [v.name, v]));
    assert.ok(byName.i, `no i in ${JSON.stringify(rows.body.variables.map((v) => v.name))}`);
    assert.strictEqual(byName.i.type, 'u32');
    assert.match(byName.i.value, /^0 · lanes \[0, 1, 2, 3, 4, 5, 6, 7, …\]$/);
    const perLane = await dc.variablesRequest({ variablesReference: byName.i.variablesReference });
    assert.deepStrictEqual(perLane.body.variables.map((v) => Number(v.value)), [...Array(32).keys()]);
    // By name in the console, with a lane and arithmetic.
    const ev = await dc.evaluateRequest({ expression: 'i[7] * 2', context: 'repl', frameId: st.body.stackFrames[0].id });
    assert.strictEqual(ev.body.result, '14');
    await dc.setBreakpointsRequest({ source: { path: SOURCE }, breakpoints: [] });
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.waitForEvent('terminated')]);
  } finally {
    await dc.stop();
  }
});
