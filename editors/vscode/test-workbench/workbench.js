// What the real-workbench harnesses (run.js, knowledge.js) share: reading their environment, the
// checks they print, waiting, the quick input, the Pi extension's test-only state report, starting
// code-server with headless Chromium on it and stopping both, screenshots, the final report and the
// overall time bound. Each harness keeps its own flow and checks.
'use strict';
const { chromium } = require('playwright-core');
const { spawn } = require('child_process');
const fs = require('fs');
const net = require('net');
const path = require('path');

/** A reader of required environment variables for `script`: exits 2 naming the one that is unset. */
const envReader = (script) => (name, fallback) => {
  const value = process.env[name] || fallback;
  if (!value) { console.error(`${script}: set ${name}`); process.exit(2); }
  return value;
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

/** Poll `fn` every `every` ms until it returns a truthy value (returned); throws after `ms` ms. */
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

/**
 * One harness run: `dir` is $E2E_DIR (artifacts), `state` the file the test-only command writes,
 * `codeServer` and `chromiumPath` the executables. The returned object holds the checks, `page` (once
 * the workbench is open) and `lastState` (the last state reported), and the shared steps below.
 */
function createHarness({ dir, state, codeServer, chromiumPath }) {
  const h = { checks: [], page: null, lastState: null, csLog: '', cs: null };

  h.check = (name, ok, detail) => {
    h.checks.push({ name, ok: Boolean(ok) });
    console.log(`${ok ? 'OK  ' : 'FAIL'} ${name}${ok ? '' : `\n     saw: ${JSON.stringify(detail)}`}`);
    return Boolean(ok);
  };

  /** Open the quick input with F1, type `text`, pick the row whose label is exactly `label`. */
  h.pick = async (text, label) => {
    const { page } = h;
    const input = page.locator('.quick-input-widget input.input');
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill(text);
    const row = page.locator('.quick-input-list .monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRe(label)}$`) }) }).first();
    await row.waitFor({ state: 'visible', timeout: 5000 });
    await row.click();
  };

  /** Run the Pi extension's test-only command and read the state it wrote; null when not available yet. */
  h.reportState = async () => {
    fs.rmSync(state, { force: true });
    try {
      await h.pick('>Pi: Report State', 'Pi: Report State (test only)');
      await waitUntil('state.json', () => fs.existsSync(state), 5000, 50);
    } catch (error) {
      await h.page.keyboard.press('Escape').catch(() => {});
      return null;
    }
    h.lastState = JSON.parse(fs.readFileSync(state, 'utf8'));
    return h.lastState;
  };

  const stopCodeServer = () => {
    try { process.kill(-h.cs.pid, 'SIGTERM'); } catch { /* not started or gone */ }
    fs.writeFileSync(path.join(dir, 'code-server.log'), h.csLog);
  };

  /**
   * Start code-server on folder `ws` (extensions in `ext`, user data in `ud`), open it in headless
   * Chromium and run `body(page)`; then close the browser, stop code-server and keep its log in
   * $E2E_DIR/code-server.log. A screenshot (failure.png) is taken when `body` throws or a check failed.
   */
  h.withWorkbench = async ({ ws, ext, ud }, body) => {
    const port = await freePort();
    fs.writeFileSync(path.join(dir, 'cs-config.yaml'), 'auth: none\ncert: false\n');
    h.cs = spawn(codeServer, [
      '--config', path.join(dir, 'cs-config.yaml'), '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
      '--disable-getting-started-override', '--extensions-dir', ext, '--user-data-dir', ud, ws,
    ], { env: { ...process.env, PI_VSCODE_TEST_STATE: state }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    h.cs.stdout.on('data', (d) => { h.csLog += d; });
    h.cs.stderr.on('data', (d) => { h.csLog += d; });
    let browser;
    try {
      await waitUntil('code-server to listen', () => h.csLog.includes('HTTP server listening'), 30000, 50);
      // Chromium's singleton socket lives in TMPDIR, and a Unix socket path holds at most 107
      // bytes: a deep test folder there makes it abort ("Socket path too long"). CHROMIUM_TMPDIR
      // is a short folder the test runner made for it.
      const browserEnv = { ...process.env, TMPDIR: process.env.CHROMIUM_TMPDIR || process.env.TMPDIR || '/tmp' };
      browser = await chromium.launch({ executablePath: chromiumPath, headless: true, env: browserEnv, args: ['--no-sandbox', '--disable-gpu',
        '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
      h.page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await h.page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
      await h.page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
      await body(h.page);
    } catch (error) {
      await h.screenshot();
      throw error;
    } finally {
      if (h.checks.some((c) => !c.ok) || h.checks.length === 0) await h.screenshot();
      if (browser) await browser.close().catch(() => {});
      stopCodeServer();
    }
  };

  /**
   * Screenshot of the workbench into $E2E_DIR/`name`, checked for the elements (not pixels): each
   * locator must be visible and lie inside the captured viewport (scrolled into view first).
   */
  h.shoot = async (name, locators) => {
    const { page } = h;
    const file = path.join(dir, name);
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
    h.check(`screenshot ${name} shows ${locators.length} checked elements`, fs.statSync(file).size > 0 && visible === locators.length,
      `${visible}/${locators.length} in view`);
    console.log(`screenshot: ${file}`);
  };

  /** The failure screenshot, $E2E_DIR/failure.png (nothing before the page exists). */
  h.screenshot = async () => {
    if (!h.page) return;
    const file = path.join(dir, 'failure.png');
    await h.page.screenshot({ path: file, timeout: 10000 }).then(() => console.log(`screenshot: ${file}`)).catch(() => {});
  };

  /** Print the outcome (on failure also the last state and code-server's log tail); the exit code. */
  h.report = (error) => {
    if (error) console.log(`HARNESS ERROR: ${error.stack || error}`);
    const failed = error || h.checks.length === 0 || h.checks.some((c) => !c.ok);
    const { lastState } = h;
    if (failed) {
      console.log('--- last reported state ---');
      console.log(lastState ? JSON.stringify({ ...lastState, transcript: undefined }, null, 1) : '(none)');
      console.log('--- transcript ---');
      console.log(lastState ? lastState.transcript : '(none)');
      console.log('--- code-server log (tail) ---');
      console.log(h.csLog.split('\n').slice(-40).join('\n'));
    }
    console.log(`${h.checks.filter((c) => c.ok).length}/${h.checks.length} checks passed${failed ? '; FAILED' : ''}`);
    return failed ? 1 : 0;
  };

  /** Run `main` within `timeoutMs` ms, report and exit the process: 0 when every check passed. */
  h.runMain = (main, timeoutMs) => {
    const t0 = Date.now();
    const timer = setTimeout(async () => {
      console.log(`HARNESS TIMEOUT after ${timeoutMs} ms`);
      await h.screenshot();
      h.report(new Error('timeout'));
      stopCodeServer();
      process.exit(1);
    }, timeoutMs);
    main().then(() => h.report(null), (error) => h.report(error)).then((rc) => {
      clearTimeout(timer);
      console.log(`total ${Date.now() - t0} ms`);
      process.exit(rc);
    });
  };

  return h;
}

module.exports = { envReader, sleep, freePort, waitUntil, escapeRe, createHarness };
