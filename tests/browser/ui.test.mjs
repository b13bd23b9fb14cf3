// The page `hark serve` answers at /, in a real browser: Debian's Chromium, headless, driven by
// puppeteer-core over the DevTools protocol, against a server this test starts on a loopback
// port with a seeded micro model and an API key. Chromium's fake capture device plays a WAV file
// as the microphone. Screenshots of each state go to HARK_SCREENSHOT_DIR for a person to look at.
// Started by run.sh (ctest browser.ui).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { microModel, startServe, stopServe, tonesWav } from '../js/hark_serve.mjs';

const HARK = process.env.HARK_CLI;
const MAKE_MODEL = process.env.HARK_MAKE_TEST_MODEL;
// chromium (the default) or firefox: the same page and flows in both; what only Chromium's
// DevTools protocol does (a slow network, the fake microphone playing a WAV file) is left out in
// Firefox, whose fake microphone is a tone.
const BROWSER = process.env.HARK_BROWSER || 'chromium';
const FIREFOX = BROWSER === 'firefox';
const EXECUTABLE = process.env.HARK_BROWSER_PATH || (FIREFOX ? '/usr/bin/firefox-esr' : '/usr/bin/chromium');
const SHOTS = process.env.HARK_SCREENSHOT_DIR;
const SHARED = process.env.HARK_SHARED_DIR || path.resolve(import.meta.dirname, '../../../shared');
const KEY = 'sk-hark-ui-test';

let dir, server, port, browser, page, clip;
const downloads = () => path.join(dir, 'downloads');
const problems = [];  // page errors and CSP violations: none may happen

async function shot(name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${FIREFOX ? 'firefox-' : ''}${name}.png`), fullPage: true });
}

const text = (sel) => page.$eval(sel, (e) => e.textContent);

// What the page shows, for a failure's message.
const pageState = () => page.evaluate(() => ['status', 'notice', 'progress-label', 'partial']
  .map((id) => `#${id}: ${JSON.stringify(document.getElementById(id).textContent)}`).join(', '));

async function withState(wait) {
  try {
    return await wait;
  } catch (e) {
    e.message += ` (the page: ${await pageState()}; problems: ${JSON.stringify(problems)})`;
    throw e;
  }
}
const visible = (sel) => withState(page.waitForSelector(sel, { visible: true, timeout: 60000 }));
const until = (fn, timeout = 60000) => withState(page.waitForFunction(fn, { timeout }));

// Clicks a download link and returns the file's contents once the browser has written it.
// A download, once whole: the browser may create the file before it has written it (a read
// then found it empty, once in a CI run), so wait until it has bytes and two looks agree.
async function download(sel, name) {
  const file = path.join(downloads(), name);
  rmSync(file, { force: true });
  await page.click(sel);
  let last = -1;
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const size = existsSync(file) ? statSync(file).size : -1;
    if (size > 0 && size === last) break;
    last = size;
  }
  assert.ok(existsSync(file), `${name} was downloaded`);
  return readFileSync(file);
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'hark-ui-'));
  const model = microModel(MAKE_MODEL, dir);
  const speech = path.join(SHARED, 'audio', 'sense_and_sensibility_01_austen_64kb-0870.wav');
  if (existsSync(speech)) {
    clip = speech;
  } else {
    clip = path.join(dir, 'tones.wav');
    writeFileSync(clip, tonesWav(6));
  }
  ({ server, port } = await startServe(HARK, ['-m', `micro=${model}`, '-t', '1', '--no-fallback', '--api-key', KEY,
                                             '--max-upload-mb', '2']));
  mkdirSync(downloads(), { recursive: true });
  browser = FIREFOX
    ? await puppeteer.launch({
      browser: 'firefox',
      executablePath: EXECUTABLE,
      headless: true,
      extraPrefsFirefox: {
        'media.navigator.streams.fake': true,
        'media.navigator.permission.disabled': true,
        'media.autoplay.default': 0,
        'browser.download.folderList': 2,
        'browser.download.dir': downloads(),
        'browser.download.useDownloadDir': true,
        'browser.download.always_ask_before_handling_new_types': false,
      },
    })
    : await puppeteer.launch({
      executablePath: EXECUTABLE,
      headless: true,
      userDataDir: path.join(dir, 'profile'),
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
             '--disable-component-update', '--disable-sync', '--use-fake-ui-for-media-stream',
             '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${clip}`,
             '--autoplay-policy=no-user-gesture-required'],
    });
  page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 900 });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  if (!FIREFOX) {
    const cdp = await browser.target().createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads() });
  }
});

after(async () => {
  if (browser) await browser.close();
  await stopServe(server);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Console errors the page causes on purpose: the server's refusals show in the console as failed
// requests; anything else (a script error, a CSP violation) is a failure.
function unexpectedProblems() {
  return problems.filter((p) => !/Failed to load resource: the server responded with a status of (401|413|415)/.test(p));
}

test('the page asks for the key; a wrong key gets a sentence, the right one the options', async () => {
  const res = await page.goto(`http://127.0.0.1:${port}/`);
  const csp = res.headers()['content-security-policy'];
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  await visible('#key-input');
  await shot('0-key');
  await page.type('#key-input', 'sk-wrong');
  await page.keyboard.press('Enter');
  await until(() => /did not accept/.test(document.getElementById('notice').textContent));
  assert.ok(await page.$eval('#app', (e) => e.hidden), 'the options stay hidden with a wrong key');
  await page.type('#key-input', KEY);
  await page.keyboard.press('Enter');
  await visible('#app');
  assert.ok(await page.$eval('#notice', (e) => e.hidden), 'the notice goes once the key is right');
  const models = await page.$$eval('#model option', (os) => os.map((o) => o.value));
  assert.deepEqual(models, ['micro']);
  const languages = await page.$$eval('#language option', (os) => os.map((o) => o.value));
  assert.equal(languages[0], 'auto');
  assert.ok(languages.includes('en') && languages.length > 50, 'the model\'s languages');
  assert.ok(await page.$eval('#vad', (e) => e.disabled), 'no VAD without --vad-model');
  await shot('1-empty');
});

test('a clip: upload progress, segments with times, and an srt equal to the server\'s', async () => {
  // A slow upload (about 1.5 s), so the transcribing state can be seen and photographed.
  const net = FIREFOX ? null : await page.createCDPSession();
  const throttle = (bytesPerSecond) => net && net.send('Network.emulateNetworkConditions',
    { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond });
  await throttle(150 * 1024);
  const input = await page.$('#file-input');
  await input.uploadFile(clip);
  if (net) {
    await visible('#file-progress');
    await until(() => document.getElementById('progress-bar').value > 0);
    await shot('2-transcribing');
  }
  await throttle(-1);
  await visible('#downloads');
  const times = await page.$$eval('#segments time', (ts) => ts.map((t) => t.textContent));
  assert.ok(times.length >= 1, 'at least one segment');
  for (const t of times) assert.match(t, /^\d+:\d\d\.\d\d–\d+:\d\d\.\d\d$/);
  assert.ok(await page.$eval('#file-progress', (e) => e.hidden), 'the progress goes when done');
  assert.match(await text('#status'), /^Done: /);
  await shot('3-result');

  // Clicking a segment plays the file from its start.
  await page.click('#segments li:last-child button');
  const at = await page.$eval('#player', (p) => p.currentTime);
  assert.ok(at > 0 || times.length === 1, 'the player moved to the segment');

  const srt = (await download('#dl-srt', 'transcript.srt')).toString();
  const form = new FormData();
  form.append('file', new Blob([readFileSync(clip)]), 'clip.wav');
  form.append('model', 'micro');
  form.append('language', 'auto');
  form.append('response_format', 'srt');
  const r = await fetch(`http://127.0.0.1:${port}/v1/audio/transcriptions`,
                        { method: 'POST', body: form, headers: { Authorization: `Bearer ${KEY}` } });
  assert.equal(r.status, 200);
  assert.equal(srt, await r.text(), 'the page\'s srt is the server\'s');
  for (const [sel, name, re] of [['#dl-vtt', 'transcript.vtt', /^WEBVTT\n\n/], ['#dl-txt', 'transcript.txt', /\n$/],
                                 ['#dl-json', 'transcript.json', /"segments"/]])
    assert.match((await download(sel, name)).toString(), re);
});

test('a file that is not audio shows the server\'s error, and the page goes on', async () => {
  const junk = path.join(dir, 'notes.txt');
  writeFileSync(junk, 'these are words, not sound\n'.repeat(50));
  await (await page.$('#file-input')).uploadFile(junk);
  await until(() => !document.getElementById('notice').hidden);
  assert.match(await text('#notice'), /could not read this file as audio/);
  await until(() => document.getElementById('file-progress').hidden);
  assert.equal(await page.$eval('#record', (b) => b.disabled), false);
  await shot('4-error');
  // Over --max-upload-mb (2): refused as its head arrives, said as a sentence.
  const big = path.join(dir, 'big.wav');
  writeFileSync(big, Buffer.alloc(3 * 1024 * 1024, 1));
  await (await page.$('#file-input')).uploadFile(big);
  await until(() => /too large/.test(document.getElementById('notice').textContent));
  await until(() => document.getElementById('file-progress').hidden);
  // The next file works without a reload.
  await (await page.$('#file-input')).uploadFile(clip);
  await until(() => /^Done: /.test(document.getElementById('status').textContent));
  assert.ok(await page.$eval('#notice', (e) => e.hidden), 'the notice goes with the next file');
});

test('keyboard only: choose a file, play a segment, reach the downloads', async () => {
  await page.reload();  // the key stays: sessionStorage lives as long as the tab
  await visible('#app');
  let focused = '';
  for (let i = 0; i < 25 && focused !== 'file-input'; i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.activeElement.id);
  }
  assert.equal(focused, 'file-input', 'Tab reaches the file chooser');
  if (FIREFOX) {
    // Firefox's WebDriver BiDi has no file chooser event: the input Tab reached gets the file.
    await (await page.$('#file-input')).uploadFile(clip);
  } else {
    const [chooser] = await Promise.all([page.waitForFileChooser(), page.keyboard.press(' ')]);
    await chooser.accept([clip]);
  }
  await until(() => /^Done: /.test(document.getElementById('status').textContent));
  focused = '';
  for (let i = 0; i < 25 && focused !== 'segment'; i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => (document.activeElement.closest('#segments') ? 'segment' : document.activeElement.id));
  }
  assert.equal(focused, 'segment', 'Tab reaches the segments');
  await page.keyboard.press('Enter');
  for (let i = 0; i < 25 && focused !== 'dl-txt'; i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.activeElement.id);
  }
  assert.equal(focused, 'dl-txt', 'Tab reaches the downloads');
});

// Firefox plays audio (and so runs an AudioContext) only with a sound server: run.sh starts a
// private PulseAudio daemon with a null sink for it, or says why not.
const NO_AUDIO = FIREFOX && !process.env.PULSE_SERVER ? 'no PulseAudio daemon for Firefox (see run.sh)' : false;

test('the microphone: partial results in grey, then finals; stop ends the session', { skip: NO_AUDIO }, async () => {
  await page.click('#record');
  await until(() => document.getElementById('record').textContent === 'Stop', 30000);
  // Partial results come every second of audio while the slice is open.
  await until(() => document.getElementById('partial').textContent.trim().length > 0);
  const color = await page.$eval('#partial', (e) => getComputedStyle(e).color);
  assert.notEqual(color, 'rgb(27, 27, 31)', 'a partial result is not in the finals\' colour');
  await shot('5-recording');
  await new Promise((r) => setTimeout(r, 1500));
  await page.click('#record');
  await until(() => /^Recording finished/.test(document.getElementById('status').textContent), 120000);
  const finals = await page.$$eval('#segments li', (ls) => ls.length);
  assert.ok(finals >= 1, 'stop finishes the last slice: a final result');
  assert.equal(await text('#partial'), '');
  assert.equal(await text('#record'), 'Record');
  const wav = await download('#rec-download', 'recording.wav');
  assert.equal(wav.subarray(0, 4).toString(), 'RIFF');
  assert.equal(wav.readUInt32LE(24), 16000, 'the recording is 16 kHz');
  assert.ok(wav.length > 44 + 2 * 16000, 'more than a second was recorded');
  await shot('6-recorded');
});

test('a phone\'s width: nothing wider than the screen', async () => {
  await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
  await page.reload();
  await visible('#app');
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= 390, `the page is ${wide} px wide on a 390 px screen`);
  await shot('7-phone');
});

test('no script error and no CSP violation on the way', () => {
  assert.deepEqual(unexpectedProblems(), []);
});
