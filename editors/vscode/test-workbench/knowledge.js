// The real-workbench test of issue 17 (the editor's language servers as tools, diagnostics after edits):
// code-server (VS Code 1.100.3) in headless Chromium with the Pi extension AND a real Python language
// server: the test-only extension tests/editors/vscode_pylsp (vscode-languageclient starting the venv's
// `pylsp`, python-lsp-server with pyflakes), bundled and packaged here, installed next to pi-lsp.vsix.
//
// Flow: a copy of ./knowledge-workspace (greeting.py defines greet(); app.py and cli.py import and call
// it; notes.txt has no language server); the Pi view is opened with no file open (pylsp starts only when
// the first language request loads a Python file in the background); one prompt typed in the view runs
// ./knowledge-session.jsonl through `pi-lsp replay`:
//   turn 1: definition of greet in app.py (-> greeting.py:1), its references (three files), a symbol
//           that is not on the given line and symbols of notes.txt (no language server), both failing
//           with a clear error, symbols of greeting.py and hover on greet;
//   turn 2: an edit of app.py that introduces an undefined name: its result names pyflakes' error;
//   turn 3: rename greet -> welcome from greeting.py: one WorkspaceEdit over three files, saved;
//   turn 4: the diagnostics tool on app.py still names the undefined name.
// The replay checks what the model got (expect.toolResultContains; the pytest side fails on divergences);
// this harness checks what the user sees: the Pi view's tool lines and results (DOM + screenshot), the
// buffers and the files on disk, and that ONE undo in greeting.py and in cli.py takes the rename back.
// Time-bounded (E2E_TIMEOUT_MS, default 150000). On failure: prints the checks, the last state and the
// code-server log tail, and keeps $E2E_DIR/failure.png. Exit 0 = all checks passed.
//
// Environment: CODE_SERVER, VSIX, PI_LSP_SERVER, PI_BASE_URL, PYLSP (the pylsp executable), E2E_DIR,
// CHROMIUM (default /usr/bin/chromium).
'use strict';
const { chromium } = require('playwright-core');
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const net = require('net');
const path = require('path');

const env = (name, fallback) => {
  const value = process.env[name] || fallback;
  if (!value) { console.error(`knowledge.js: set ${name}`); process.exit(2); }
  return value;
};
const CODE_SERVER = env('CODE_SERVER');
const VSIX = env('VSIX');
const SERVER = env('PI_LSP_SERVER');
const BASE_URL = env('PI_BASE_URL');
const PYLSP = env('PYLSP');
const DIR = env('E2E_DIR');
const CHROMIUM = env('CHROMIUM', '/usr/bin/chromium');
const TIMEOUT_MS = Number(process.env.E2E_TIMEOUT_MS || 150000);

const EXTENSION = path.resolve(__dirname, '..');
const PYLSP_EXTENSION = path.resolve(EXTENSION, '..', '..', 'tests', 'editors', 'vscode_pylsp');
const SOURCE = path.join(__dirname, 'knowledge-workspace');
const WS = path.join(DIR, 'ws');
const EXT = path.join(DIR, 'ext');
const UD = path.join(DIR, 'ud');
const STATE = path.join(DIR, 'state.json');
const original = (name) => fs.readFileSync(path.join(SOURCE, name), 'utf8');
const disk = (name) => fs.readFileSync(path.join(WS, name), 'utf8');
const renameText = (text) => text.replace(/\bgreet\b/g, 'welcome');
const renamed = (name) => renameText(original(name));
const PROMPT = 'Make app.py greet a name, then rename greet to welcome everywhere.';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const checks = [];
const check = (name, ok, detail) => {
  checks.push({ name, ok: Boolean(ok) });
  console.log(`${ok ? 'OK  ' : 'FAIL'} ${name}${ok ? '' : `\n     saw: ${JSON.stringify(detail)}`}`);
  return Boolean(ok);
};
let page;
let lastState = null;
let csLog = '';
let cs;

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

async function waitUntil(what, fn, ms, every = 250) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(every);
  }
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Open the quick input with F1, type `text`, pick the row whose label is exactly `label`. */
async function pick(text, label) {
  const input = page.locator('.quick-input-widget input.input');
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(text);
  const row = page.locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRe(label)}$`) }) }).first();
  await row.waitFor({ state: 'visible', timeout: 5000 });
  await row.click();
}

/** Run the Pi extension's test-only command and read the state it wrote; null when not available yet. */
async function reportState() {
  fs.rmSync(STATE, { force: true });
  try {
    await pick('>Pi: Report State', 'Pi: Report State (test only)');
    await waitUntil('state.json', () => fs.existsSync(STATE), 5000, 50);
  } catch (error) {
    await page.keyboard.press('Escape').catch(() => {});
    return null;
  }
  lastState = JSON.parse(fs.readFileSync(STATE, 'utf8'));
  return lastState;
}

const doc = (state, name) => state && state.documents.find((d) => path.basename(d.path) === name);

/** Bundle (esbuild, vscode-languageclient inside) and package (vsce) the test-only pylsp extension. */
function packagePylspExtension() {
  const folder = path.join(DIR, 'pylsp-ext');
  fs.rmSync(folder, { recursive: true, force: true });
  fs.cpSync(PYLSP_EXTENSION, folder, { recursive: true });
  require(path.join(EXTENSION, 'node_modules', 'esbuild')).buildSync({
    entryPoints: [path.join(folder, 'extension.js')], bundle: true, platform: 'node', target: 'node18', format: 'cjs',
    external: ['vscode'], nodePaths: [path.join(EXTENSION, 'node_modules')], outfile: path.join(folder, 'dist', 'extension.js'), logLevel: 'error',
  });
  fs.writeFileSync(path.join(folder, '.vscodeignore'), 'extension.js\n');
  const vsix = path.join(DIR, 'pylsp-test.vsix');
  const done = spawnSync(path.join(EXTENSION, 'node_modules', '.bin', 'vsce'), ['package', '--skip-license', '--out', vsix],
    { cwd: folder, encoding: 'utf8', timeout: 60000 });
  if (!check('the test-only pylsp extension packages', done.status === 0 && fs.existsSync(vsix), `${done.stdout}${done.stderr}`)) {
    throw new Error('packaging the pylsp extension failed');
  }
  return vsix;
}

function writeSettings() {
  fs.writeFileSync(path.join(UD, 'User', 'settings.json'), JSON.stringify({
    'pi.server.path': SERVER,
    'pi.baseUrl': BASE_URL,
    'pi.model': 'replay',
    // an upper bound only: the wait ends when pylsp has published and gone quiet
    'pi.diagnostics.settleSeconds': 20,
    'pi.languageServer.timeoutSeconds': 30, // the same: pylsp starts during the first requests
    'pylspTest.command': PYLSP,
    'files.autoSave': 'off',
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'editor.formatOnSave': false,
  }, null, 1));
}

/** Open `name` with quick open and wait until it is the active editor. */
async function openFile(name) {
  await waitUntil(`quick open to find ${name}`, () => pick(name, name).then(() => true, () => false), 60000, 500);
  await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 15000 });
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().waitFor({ timeout: 15000 });
}

async function main() {
  for (const d of [WS, EXT, UD]) { fs.rmSync(d, { recursive: true, force: true }); fs.mkdirSync(d, { recursive: true }); }
  fs.cpSync(SOURCE, WS, { recursive: true });
  fs.mkdirSync(path.join(UD, 'User'), { recursive: true });
  writeSettings();
  const pylspVsix = packagePylspExtension();
  const install = spawnSync(CODE_SERVER, ['--extensions-dir', EXT, '--user-data-dir', UD, '--install-extension', VSIX,
    '--install-extension', pylspVsix], { encoding: 'utf8', timeout: 60000 });
  if (!check('pi-lsp.vsix and the pylsp test extension install into code-server', install.status === 0, `${install.stdout}${install.stderr}`)) {
    throw new Error('install failed');
  }

  const port = await freePort();
  fs.writeFileSync(path.join(DIR, 'cs-config.yaml'), 'auth: none\ncert: false\n');
  cs = spawn(CODE_SERVER, [
    '--config', path.join(DIR, 'cs-config.yaml'), '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`,
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    '--disable-getting-started-override', '--extensions-dir', EXT, '--user-data-dir', UD, WS,
  ], { env: { ...process.env, PI_VSCODE_TEST_STATE: STATE }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  cs.stdout.on('data', (d) => { csLog += d; });
  cs.stderr.on('data', (d) => { csLog += d; });
  let browser;
  try {
    await waitUntil('code-server to listen', () => csLog.includes('HTTP server listening'), 30000, 50);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu',
      '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(WS)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });

    // No Python file is open yet, so the pylsp extension is not active: the first language request loads
    // app.py in the background, which activates it (onLanguage:python), and waits for it to attach.
    // (The palette lists the command once the workbench has loaded the extensions: retry until it does.)
    await waitUntil('the Pi view command', () => pick('>Pi: Focus on Transcript View', 'Pi: Focus on Transcript View')
      .then(() => true, () => false), 60000, 500);
    const ready = await waitUntil('the Pi extension and its server', async () => {
      const s = await reportState();
      return s && s.serverRunning ? s : null;
    }, 60000, 500);
    check('the extension started pi-lsp', ready.status === 'idle', ready.status);

    const view = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await view.locator('#prompt').waitFor({ timeout: 20000 });
    const started = Date.now();
    await view.locator('#prompt').fill(PROMPT);
    await view.locator('#prompt').press('Enter');
    await view.locator('.end[data-state="done"]').first().waitFor({ timeout: 90000 });
    console.log(`the run (5 model turns, 9 language tool calls, 1 edit): ${Date.now() - started} ms`);

    const lines = await view.locator('.tool .tool-line').allTextContents();
    check('each tool call is one readable line', JSON.stringify(lines) === JSON.stringify([
      'definition app.py:3 greet', 'references greeting.py:1 greet', 'definition app.py:2 greet', 'symbols notes.txt',
      'symbols greeting.py', 'hover app.py:3 greet', 'edit app.py', 'rename greeting.py:1 greet → welcome', 'diagnostics app.py']), lines);
    const tool = (n) => view.locator('.tool').nth(n);
    const resultOf = async (n) => {
      await tool(n).locator('summary').click();
      const text = await tool(n).locator('.result').textContent();
      await tool(n).locator('summary').click();
      return text;
    };
    const definition = await resultOf(0);
    check('definition answers greeting.py:1 with the source line', /greeting\.py:1\b.*def greet\(name\):/.test(definition), definition);
    const references = await resultOf(1);
    check('references list the uses in app.py and cli.py and the definition',
      ['greeting.py:1', 'app.py:1', 'app.py:3', 'cli.py:1', 'cli.py:5'].every((s) => references.includes(s)), references);
    const notOnLine = tool(2);
    check('a symbol not on the line is an error that says so', (await notOnLine.getAttribute('class')).includes('error')
      && /greet/.test(await notOnLine.locator('.error-result').textContent()), await notOnLine.textContent());
    const noServer = tool(3);
    check('a file with no language server is an error that says so', (await noServer.getAttribute('class')).includes('error')
      && /language server/i.test(await noServer.locator('.error-result').textContent()), await noServer.textContent());
    const outline = await resultOf(4);
    check('symbols outlines greeting.py: greet on line 1', /greet/.test(outline) && /\b1\b/.test(outline), outline);
    const hover = await resultOf(5);
    check('hover shows greet\'s signature', /greet\(name\)/.test(hover), hover);
    const rename = await resultOf(7);
    check('the rename result lists the three files', ['greeting.py', 'app.py', 'cli.py'].every((s) => rename.includes(s)), rename);
    const edit = tool(6);
    const editResult = await resultOf(6);
    check('the edit that introduces an undefined name gets the error in its result',
      (await edit.getAttribute('class')).includes('done') && /app\.py:3: error: undefined name 'wrld'/.test(editResult), editResult);
    check('the problems are credited to the language extension that serves Python files (VS Code names no provider)',
      editResult.includes('Python (pylsp, test only)'), editResult);
    const problems = await resultOf(8);
    check('the diagnostics tool lists the undefined name too', /undefined name 'wrld'/.test(problems), problems);
    // Opened now, app.py shows pylsp's error as a squiggle, like any other problem.
    await openFile('app.py');
    const squiggle = page.locator('.editor-group-container.active .monaco-editor .squiggly-error');
    check('the undefined name is underlined in app.py\'s editor', await waitUntil('the squiggle', async () => (await squiggle.count()) > 0,
      10000, 200).catch(() => false));
    await shoot('knowledge.png', [tool(6), tool(7), tool(8), view.locator('.end[data-state="done"]'), squiggle.first()]);

    // The rename landed through the editor and was saved: disk = buffers, nothing dirty.
    const done = await reportState();
    const APP = renameText(original('app.py').replace('greet("world")', 'greet(wrld)'));
    for (const [name, want] of [['greeting.py', renamed('greeting.py')], ['cli.py', renamed('cli.py')], ['app.py', APP]]) {
      const d = doc(done, name);
      check(`${name} on disk holds the rename${name === 'app.py' ? ' and the edit' : ''}`, disk(name) === want, disk(name));
      // (a file only the rename's edit loaded may be closed again once saved: then the disk is all there is)
      check(`${name}'s document in VS Code, if loaded, matches and is saved`, !d || (d.text === want && !d.isDirty), d);
    }

    // One undo per file takes the rename back (the buffer; the disk keeps the saved rename).
    for (const name of ['greeting.py', 'cli.py']) {
      await openFile(name);
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+Z');
      const undone = await waitUntil(`the undo in ${name}`, async () => {
        const d = doc(await reportState(), name);
        return d && d.text !== renamed(name) ? d : null;
      }, 10000, 300).catch(() => doc(lastState, name));
      check(`one undo in ${name} takes the whole rename back`, undone && undone.text === original(name), undone && undone.text);
    }
  } catch (error) {
    await screenshot();
    throw error;
  } finally {
    if (checks.some((c) => !c.ok) || checks.length === 0) await screenshot();
    if (browser) await browser.close().catch(() => {});
    try { process.kill(-cs.pid, 'SIGTERM'); } catch { /* already gone */ }
    fs.writeFileSync(path.join(DIR, 'code-server.log'), csLog);
  }
}

/** Screenshot into $E2E_DIR/`name`, checked for the elements (each visible inside the viewport), not pixels. */
async function shoot(name, locators) {
  const file = path.join(DIR, name);
  const viewport = page.viewportSize();
  let visible = 0;
  for (const locator of locators) {
    await locator.scrollIntoViewIfNeeded({ timeout: 5000 }).catch(() => {});
  }
  await page.screenshot({ path: file, timeout: 10000 });
  for (const locator of locators) {
    const box = await locator.boundingBox({ timeout: 5000 }).catch(() => null);
    if (box && box.width > 0 && box.height > 0 && box.x >= 0 && box.y >= 0
      && box.x + box.width <= viewport.width + 1 && box.y < viewport.height) visible += 1;
  }
  check(`screenshot ${name} shows ${locators.length} checked elements`, fs.statSync(file).size > 0 && visible === locators.length,
    `${visible}/${locators.length} in view`);
  console.log(`screenshot: ${file}`);
}

async function screenshot() {
  if (!page) return;
  const file = path.join(DIR, 'failure.png');
  await page.screenshot({ path: file, timeout: 10000 }).then(() => console.log(`screenshot: ${file}`)).catch(() => {});
}

function report(error) {
  if (error) console.log(`HARNESS ERROR: ${error.stack || error}`);
  const failed = error || checks.length === 0 || checks.some((c) => !c.ok);
  if (failed) {
    console.log('--- last reported state ---');
    console.log(lastState ? JSON.stringify({ ...lastState, transcript: undefined }, null, 1) : '(none)');
    console.log('--- transcript ---');
    console.log(lastState ? lastState.transcript : '(none)');
    console.log('--- code-server log (tail) ---');
    console.log(csLog.split('\n').slice(-40).join('\n'));
  }
  console.log(`${checks.filter((c) => c.ok).length}/${checks.length} checks passed${failed ? '; FAILED' : ''}`);
  return failed ? 1 : 0;
}

const t0 = Date.now();
const timer = setTimeout(async () => {
  console.log(`HARNESS TIMEOUT after ${TIMEOUT_MS} ms`);
  await screenshot();
  report(new Error('timeout'));
  try { process.kill(-cs.pid, 'SIGTERM'); } catch { /* not started or gone */ }
  fs.writeFileSync(path.join(DIR, 'code-server.log'), csLog);
  process.exit(1);
}, TIMEOUT_MS);
main().then(() => report(null), (error) => report(error)).then((rc) => {
  clearTimeout(timer);
  console.log(`total ${Date.now() - t0} ms`);
  process.exit(rc);
});
