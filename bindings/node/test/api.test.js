'use strict'
// whisper.rn's API on the micro model: initWhisper, transcribe / transcribeFile / transcribeData
// in every input form, every option, the result shapes, bench, release, the native log; and the
// tiny preset once.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('fs')
const path = require('path')
const hark = require('..')
const { tmp, micro, tiny, tdrz, speechWav, wavInt16, fast } = require('./helpers')

function checkResult(r) {
  assert.equal(typeof r.result, 'string')
  assert.equal(typeof r.language, 'string')
  assert.equal(typeof r.isAborted, 'boolean')
  assert.ok(Array.isArray(r.segments))
  for (const s of r.segments) {
    assert.equal(typeof s.text, 'string')
    assert.ok(Number.isInteger(s.t0) && Number.isInteger(s.t1) && s.t1 >= s.t0, JSON.stringify(s))
  }
  assert.equal(r.result, r.segments.map((s) => s.text).join(''))
}

test('initWhisper gives a WhisperContext with id, gpu and reasonNoGPU', async () => {
  const ctx = await hark.initWhisper({ filePath: micro })
  assert.ok(ctx instanceof hark.WhisperContext)
  assert.equal(typeof ctx.id, 'number')
  assert.equal(typeof ctx.gpu, 'boolean')
  assert.equal(typeof ctx.reasonNoGPU, 'string')
  if (!ctx.gpu) assert.ok(ctx.reasonNoGPU.length > 0, 'a CPU context says why it is not on a GPU')
  assert.equal(ctx.model.path, micro)
  const other = await hark.initWhisper({ filePath: 'file://' + micro, useGpu: false, useFlashAttn: true })
  assert.notEqual(other.id, ctx.id)
  assert.equal(other.gpu, false)
  await Promise.all([ctx.release(), other.release()])
  assert.equal(typeof hark.libVersion, 'string')
  assert.match(hark.libVersion, /^\d+\.\d+\.\d+/)
})

test('transcribe a file, a data URI, and transcribeFile (whisper.node) give the same result', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const wav = speechWav()
  const a = await ctx.transcribe(wav, fast).promise
  checkResult(a)
  assert.equal(a.isAborted, false)
  assert.equal(a.language, 'en')
  assert.ok(a.segments.length > 0)
  const uri = 'data:audio/wav;base64,' + fs.readFileSync(wav).toString('base64')
  const b = await ctx.transcribe(uri, fast).promise
  assert.deepEqual(b.segments, a.segments)
  const c = await ctx.transcribeFile(wav, fast).promise
  assert.deepEqual(c.segments, a.segments)
  await ctx.release()
})

test('crossKvType q8_0: a context with an 8-bit cross-attention cache transcribes', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true, crossKvType: 'q8_0' })
  const r = await ctx.transcribe(speechWav(), fast).promise
  checkResult(r)
  assert.equal(r.isAborted, false)
  assert.ok(r.segments.length > 0)
  await ctx.release()
})

test('transcribeData: ArrayBuffer and base64 int16 (whisper.rn\'s), float32 by pcmFormat, typed arrays, other rates', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const wav = speechWav()
  const ref = await ctx.transcribe(wav, fast).promise
  const pcm16 = wavInt16(wav)
  const f32 = Float32Array.from(pcm16, (v) => v / 32768)
  const forms = [
    ['ArrayBuffer int16', pcm16.buffer],
    ['Int16Array', pcm16],
    ['Float32Array', f32],
    ['Buffer int16', Buffer.from(pcm16.buffer)],
    ['base64 int16 (whisper.rn reads base64 as 16-bit PCM)', Buffer.from(pcm16.buffer).toString('base64')],
  ]
  for (const [name, data] of forms) {
    const r = await ctx.transcribeData(data, fast).promise
    checkResult(r)
    assert.deepEqual(r.segments, ref.segments, name)
  }
  const b64int16 = await ctx.transcribeData(Buffer.from(pcm16.buffer).toString('base64'), { ...fast, pcmFormat: 'int16' })
    .promise
  assert.deepEqual(b64int16.segments, ref.segments, 'base64 int16 with pcmFormat')
  const b64f32 = await ctx.transcribeData(Buffer.from(f32.buffer).toString('base64'), { ...fast, pcmFormat: 'float32' })
    .promise
  assert.deepEqual(b64f32.segments, ref.segments, 'base64 float32 with pcmFormat')
  // float32 read from bytes that are no float32 (here, the int16 clip) is refused, never garbage:
  // odd-indexed int16 samples in -128..-1 make NaN/Inf floats
  const asF32 = Buffer.from(Int16Array.from([0, -1, 0, -5]).buffer).toString('base64')
  await assert.rejects(ctx.transcribeData(asF32, { ...fast, pcmFormat: 'float32' }).promise, /NaN|infinite/)
  // 8 kHz stereo: converted to 16 kHz mono before transcription
  const stereo8k = new Int16Array((pcm16.length / 2) * 2)
  for (let i = 0; i < pcm16.length / 2; i++) stereo8k[2 * i] = stereo8k[2 * i + 1] = pcm16[2 * i]
  const r8 = await ctx.transcribeData(stereo8k, { ...fast, sampleRate: 8000, channels: 2 }).promise
  checkResult(r8)
  await ctx.release()
})

test('every TranscribeOption is accepted and reaches the job', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const wav = speechWav()
  const progress = []
  const newSegments = []
  const r = await ctx.transcribe(wav, {
    ...fast,
    translate: false,
    maxThreads: 2,
    nProcessors: 1,
    maxContext: 16,
    maxLen: 0,
    tokenTimestamps: true,
    tdrzEnable: false,
    wordThold: 0.02,
    offset: 0,
    duration: 0,
    temperature: 0,
    beamSize: 2,
    bestOf: 2,
    prompt: 'hello',
    onProgress: (p) => progress.push(p),
    onNewSegments: (s) => newSegments.push(s),
  }).promise
  checkResult(r)
  assert.ok(progress.length > 0 && progress[progress.length - 1] === 100, JSON.stringify(progress))
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i] >= progress[i - 1])
  assert.ok(newSegments.length > 0)
  const last = newSegments[newSegments.length - 1]
  assert.equal(last.totalNNew, r.segments.length)
  assert.equal(newSegments.reduce((n, s) => n + s.nNew, 0), r.segments.length)
  for (const s of newSegments) {
    assert.equal(s.segments.length, s.nNew)
    assert.equal(s.result, s.segments.map((x) => x.text).join(''))
  }
  for (const s of r.segments) {
    assert.ok(Array.isArray(s.tokens), 'tokenTimestamps adds each segment\'s tokens')
    for (const t of s.tokens) assert.ok(t.t0 >= 0 && t.t1 >= t.t0)
  }

  // offset / duration cut the audio; maxLen shortens segments; sampling with bestOf
  const cut = await ctx.transcribe(wav, { ...fast, offset: 500, duration: 800 }).promise
  for (const s of cut.segments) assert.ok(s.t0 >= 50 && s.t1 <= 130 + 1, JSON.stringify(s))
  const short = await ctx.transcribe(wav, { ...fast, maxLen: 4 }).promise
  for (const s of short.segments) assert.ok(Buffer.byteLength(s.text) <= 4 + 4, JSON.stringify(s))
  const sampled = await ctx.transcribe(wav, { ...fast, temperature: 0.5, bestOf: 2, seed: 7 }).promise
  checkResult(sampled)
  const auto = await ctx.transcribe(wav, { ...fast, language: undefined }).promise
  assert.ok(auto.language.length >= 2, 'language auto-detected by default')
  const translated = await ctx.transcribe(wav, { ...fast, translate: true, language: 'de' }).promise
  checkResult(translated)
  // hark's extras
  const words = await ctx.transcribe(wav, { ...fast, wordTimestamps: true, splitOnWord: true, noContext: true }).promise
  for (const s of words.segments) for (const w of s.words || []) assert.ok(typeof w.word === 'string' && w.t1 >= w.t0)
  const single = await ctx.transcribe(wav, { ...fast, singleSegment: true, noTimestamps: true, maxTokensPerWindow: 8 }).promise
  assert.ok(single.segments.length <= 1)
  const parallel = await ctx.transcribe(wav, { ...fast, nProcessors: 2 }).promise
  checkResult(parallel)
  await ctx.release()
})

// 30 s of gated tones (what hark's own tinydiarize test uses): the tdrz test model writes its
// speaker-turn token on them.
function speechLikeTones(seconds) {
  const a = new Float32Array(seconds * 16000)
  for (let i = 0; i < a.length; i++) {
    const t = i / 16000
    const gate = t % 3 < 2.2 ? 1 : 0
    const f = 180 + 60 * Math.sin(0.7 * t)
    a[i] = gate * (0.3 * Math.sin(2 * Math.PI * f * t) + 0.1 * Math.sin(2 * Math.PI * 3.1 * f * t))
  }
  return a
}

test('tdrzEnable marks speaker turns as whisper.rn writes them', async () => {
  const ctx = await hark.initWhisper({ filePath: tdrz, useFlashAttn: true })
  const audio = speechLikeTones(30)
  const on = await ctx.transcribeData(audio, { ...fast, tdrzEnable: true, maxTokensPerWindow: 48 }).promise
  assert.ok(on.segments.some((s) => s.text.endsWith(' [SPEAKER_TURN]')), JSON.stringify(on.segments))
  assert.ok(on.result.includes('[SPEAKER_TURN]'))
  const off = await ctx.transcribeData(audio, { ...fast, maxTokensPerWindow: 48 }).promise
  assert.ok(!off.result.includes('[SPEAKER_TURN]'))
  await ctx.release()
})

test('bench gives whisper.rn\'s BenchResult', async () => {
  const ctx = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const b = await ctx.bench(1)
  assert.equal(typeof b.config, 'string')
  assert.equal(b.nThreads, 1)
  for (const k of ['encodeMs', 'decodeMs', 'batchMs', 'promptMs']) assert.ok(b[k] > 0, k)
  await assert.rejects(ctx.bench('two'), /maxThreads/)
  await ctx.release()
})

test('native log: toggleNativeLog and addNativeLogListener', async () => {
  const got = []
  const sub = hark.addNativeLogListener((level, text) => got.push([level, text]))
  await hark.toggleNativeLog(true)
  const ctx = await hark.initWhisper({ filePath: micro })
  await new Promise((r) => setImmediate(r))
  assert.ok(got.some(([level, text]) => level === 'info' && text.includes(micro)), JSON.stringify(got))
  await ctx.release()
  await hark.toggleNativeLog(false)
  got.length = 0
  const ctx2 = await hark.initWhisper({ filePath: micro })
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(got, [], 'no log once it is toggled off')
  sub.remove()
  await ctx2.release()
})

test('releaseAllWhisper releases every context', async () => {
  const a = await hark.initWhisper({ filePath: micro })
  const b = await hark.initWhisper({ filePath: micro })
  await hark.releaseAllWhisper()
  await assert.rejects(a.transcribe(speechWav(), fast).promise, /released/)
  await assert.rejects(b.bench(1), /released/)
})

test('the tiny preset transcribes once', async () => {
  const ctx = await hark.initWhisper({ filePath: tiny, useFlashAttn: true })
  assert.equal(ctx.model.type, 'tiny')
  const r = await ctx.transcribe(speechWav(), { ...fast, maxThreads: 2 }).promise
  checkResult(r)
  assert.equal(r.isAborted, false)
  await ctx.release()
})

test('initWhisper takes an official model name from $HARK_MODELS and says how to get a missing one', async () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'models-'))
  fs.copyFileSync(micro, path.join(dir, 'ggml-tiny.en.bin')) // the micro model under an official name
  const before = process.env.HARK_MODELS
  process.env.HARK_MODELS = dir // node sets the process environment, which hark reads
  try {
    const ctx = await hark.initWhisper({ filePath: 'tiny.en' })
    const r = await ctx.transcribe(speechWav(), fast).promise
    assert.equal(r.isAborted, false)
    await ctx.release()
    await assert.rejects(hark.initWhisper({ filePath: 'base.en' }), /hark download base\.en/)
  } finally {
    if (before === undefined) delete process.env.HARK_MODELS
    else process.env.HARK_MODELS = before
  }
})
