// The official `openai` npm SDK against `hark serve`, with only baseURL (and a key) changed: what an
// OpenAI client sees of every response format, streaming, translations, models and errors.
// Started by run.sh (ctest server.openai_sdk); HARK_CLI and HARK_MAKE_TEST_MODEL name the binaries.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI, { toFile } from 'openai';
import { microModel, startServe, stopServe, tonesWav } from '../../js/hark_serve.mjs';

const HARK = process.env.HARK_CLI;
const MAKE_MODEL = process.env.HARK_MAKE_TEST_MODEL;
const KEY = 'sk-hark-test';

let dir, server, client, port;
const wav = tonesWav();
const file = () => toFile(wav, 'tones.wav', { type: 'audio/wav' });

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'hark-sdk-'));
  const model = microModel(MAKE_MODEL, dir);
  ({ server, port } = await startServe(HARK, ['-m', `micro=${model}`, '-t', '1', '--no-fallback', '--api-key', KEY]));
  client = new OpenAI({ apiKey: KEY, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
});

after(async () => {
  if (server && server.exitCode === null) assert.equal(await stopServe(server), 0, 'hark serve exits 0 on SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('json: the text', async () => {
  const r = await client.audio.transcriptions.create({ file: await file(), model: 'whisper-1' });
  assert.equal(typeof r.text, 'string');
});

test('text, srt and vtt come back as strings', async () => {
  const text = await client.audio.transcriptions.create({ file: await file(), model: 'micro', response_format: 'text' });
  assert.equal(typeof text, 'string');
  const srt = await client.audio.transcriptions.create({ file: await file(), model: 'micro', response_format: 'srt' });
  assert.match(srt, /^1\n00:00:\d\d,\d{3} --> /);
  const vtt = await client.audio.transcriptions.create({ file: await file(), model: 'micro', response_format: 'vtt' });
  assert.match(vtt, /^WEBVTT/);
});

test('verbose_json with segments and words', async () => {
  const r = await client.audio.transcriptions.create({
    file: await file(), model: 'micro', response_format: 'verbose_json',
    timestamp_granularities: ['segment', 'word'],
  });
  assert.equal(r.task, 'transcribe');
  assert.equal(r.duration, 4);
  assert.ok(Array.isArray(r.segments) && r.segments.length > 0);
  for (const s of r.segments)
    for (const k of ['id', 'seek', 'start', 'end', 'text', 'tokens', 'temperature', 'avg_logprob',
                     'compression_ratio', 'no_speech_prob'])
      assert.ok(k in s, `segment field ${k}`);
  assert.ok(Array.isArray(r.words));
  for (const w of r.words) assert.ok(typeof w.word === 'string' && w.start <= w.end);
});

test('translations', async () => {
  const r = await client.audio.translations.create({ file: await file(), model: 'whisper-1', response_format: 'verbose_json' });
  assert.equal(r.task, 'translate');
});

test('stream: deltas then done, adding up to the text', async () => {
  const plain = await client.audio.transcriptions.create({ file: await file(), model: 'micro' });
  const stream = await client.audio.transcriptions.create({ file: await file(), model: 'micro', stream: true });
  const events = [];
  for await (const ev of stream) events.push(ev);
  assert.ok(events.length >= 1);
  const done = events.at(-1);
  assert.equal(done.type, 'transcript.text.done');
  assert.equal(done.text, plain.text);
  const deltas = events.slice(0, -1);
  for (const d of deltas) assert.equal(d.type, 'transcript.text.delta');
  assert.ok(deltas.map((d) => d.delta).join('').startsWith(plain.text));
});

test('models list', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids, ['micro']);
  assert.equal((await client.models.retrieve('micro')).id, 'micro');
});

test('errors are the SDK error classes with OpenAI error bodies', async () => {
  await assert.rejects(client.audio.transcriptions.create({ file: await file(), model: 'large-v9' }),
    (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && e.code === 'model_not_found');
  // Not audio: 415 (the SDK's generic APIError, with OpenAI's error body).
  await assert.rejects(client.audio.transcriptions.create({ file: await toFile(Buffer.from('not audio at all'), 'x.wav'), model: 'micro' }),
    (e) => e instanceof OpenAI.APIError && e.status === 415 && e.param === 'file' && e.code === 'invalid_file_format');
  await assert.rejects(client.audio.transcriptions.create({ file: await file(), model: 'micro', response_format: 'xml' }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'response_format');
  const wrong = new OpenAI({ apiKey: 'sk-wrong', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  await assert.rejects(wrong.audio.transcriptions.create({ file: await file(), model: 'micro' }),
    (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
});

// The README's example ("Serve over HTTP"), run as printed: saved as example.mjs in a folder with
// talk.mp3 and this test's node_modules (the pinned SDK), against a server started as the README
// starts it (-m base=..., --api-key "$KEY"). Only the port differs: 8080 becomes the free one.
test('the README example runs as printed', async (t) => {
  const makeAudio = process.env.HARK_MAKE_TEST_AUDIO;
  if (!makeAudio) return t.skip('no make-test-audio to make talk.mp3 (run.sh passes it)');
  const here = path.dirname(fileURLToPath(import.meta.url));
  const readme = readFileSync(path.join(here, '..', '..', '..', 'README.md'), 'utf8');
  const section = readme.split('\n## Serve over HTTP\n')[1];
  assert.ok(section, 'the README has "## Serve over HTTP"');
  const m = /^```js\n([\s\S]*?)^```$/m.exec(section);
  assert.ok(m, 'a js block under "## Serve over HTTP"');
  assert.ok(m[1].includes("baseURL: 'http://127.0.0.1:8080/v1'"), m[1]);
  const work = mkdtempSync(path.join(tmpdir(), 'hark-readme-js-'));
  let readmeServer;
  try {
    symlinkSync(path.join(here, 'node_modules'), path.join(work, 'node_modules'));
    execFileSync(makeAudio, [path.join(work, 'talk.mp3'), '--seconds', '4']);
    const model = microModel(MAKE_MODEL, work);
    let readmePort;
    ({ server: readmeServer, port: readmePort } = await startServe(HARK, ['-m', `base=${model}`, '--api-key', KEY, '--no-fallback']));
    writeFileSync(path.join(work, 'example.mjs'), m[1].replace('127.0.0.1:8080', `127.0.0.1:${readmePort}`));
    const out = execFileSync(process.execPath, ['example.mjs'], { cwd: work, env: { ...process.env, KEY }, encoding: 'utf8' });
    // The first call's text on its own line, then the streamed deltas: the same text again.
    const [first, ...rest] = out.split('\n');
    assert.equal(rest.join('\n'), first, `output:\n${out}`);
  } finally {
    if (readmeServer) assert.equal(await stopServe(readmeServer), 0);
    rmSync(work, { recursive: true, force: true });
  }
});
