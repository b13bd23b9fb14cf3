'use strict'
// hark-whisper/whisper.node: @fugood/whisper.node 1.1's API, so its programs move by changing
// the import: segment times in ms, language 'en' by default, ArrayBuffer of 16-bit PCM,
// batchdMs, getModelInfo, detectSpeechFile, isNativeLogEnabled, a default export.
const test = require('node:test')
const assert = require('node:assert/strict')
const hark = require('..')
const whisperNode = require('hark-whisper/whisper.node')
const { micro, speechWav, wavInt16, fast, sharedVad } = require('./helpers')

test('the exports: named, and the same as a default export', () => {
  const names = ['initWhisper', 'initWhisperVad', 'initParakeet', 'loadWhisperModule', 'toggleNativeLog',
                 'addNativeLogListener', 'isNativeLogEnabled', 'configureWasm', 'isWasmThreadsSupported', 'WASM_CONFIG_PATHS']
  for (const n of names) assert.equal(whisperNode.default[n], whisperNode[n], n)
  assert.deepEqual(Object.keys(whisperNode.default), names)
  assert.equal(whisperNode.isWasmThreadsSupported(), false)
  assert.throws(() => whisperNode.configureWasm({}), /only available in the browser WASM build/)
})

test('transcribeFile / transcribeData: segments in ms, the same text as the whisper.rn API', async () => {
  const ctx = await whisperNode.initWhisper({ filePath: micro })
  assert.deepEqual(ctx.getModelInfo(), { filePath: micro, useGpu: false, useFlashAttn: false })
  const options = { ...fast } // language 'en' as whisper.node's default would be
  const viaNode = await ctx.transcribeFile(speechWav(), options).promise
  const rn = await hark.initWhisper({ filePath: micro })
  const viaRn = await rn.transcribe(speechWav(), options).promise
  assert.equal(viaNode.result, viaRn.result)
  assert.equal(viaNode.language, 'en')
  assert.deepEqual(viaNode.segments, viaRn.segments.map((s) => ({ text: s.text, t0: s.t0 * 10, t1: s.t1 * 10 })))
  const pcm = wavInt16(speechWav())
  const data = await ctx.transcribeData(pcm.buffer, options).promise
  assert.equal(data.result, viaNode.result)
  const news = []
  await ctx.transcribe(speechWav(), { ...options, onNewSegments: (r) => news.push(r) }).promise
  assert.deepEqual(news.flatMap((r) => r.segments), viaNode.segments)
  assert.throws(() => ctx.transcribeData(pcm, options), /Expected ArrayBuffer/)
  assert.throws(() => ctx.transcribeData(new ArrayBuffer(3), options), /must be even for 16-bit PCM/)
  await rn.release()
  await ctx.release()
})

test('stop() rejects the job\'s promise (whisper.node\'s "Transcription cancelled"); bench has batchdMs', async () => {
  const ctx = await whisperNode.initWhisper({ filePath: micro })
  const long = new Int16Array(16000 * 60)
  const job = ctx.transcribeData(long.buffer, { ...fast })
  await job.stop()
  await assert.rejects(job.promise, /Transcription cancelled/)
  const b = await ctx.bench(1)
  assert.deepEqual(Object.keys(b), ['config', 'nThreads', 'encodeMs', 'decodeMs', 'batchdMs', 'promptMs'])
  await ctx.release()
  await assert.rejects(whisperNode.initWhisper({ model: micro }), /Model path is required/)
  await assert.rejects(whisperNode.initWhisper({ filePath: micro }, 'cuda'), /variant/)
  await assert.rejects(whisperNode.initParakeet({ filePath: micro }), /Parakeet models are not supported/)
})

test('VAD: detectSpeechFile, detectSpeechData of an ArrayBuffer, getModelInfo', async (t) => {
  const model = sharedVad('silero-v6.2.0-ggml.bin')
  const clip = sharedVad('vad-three-clips.wav')
  if (!model || !clip) return t.skip('../shared/vad is not here')
  const vad = await whisperNode.initWhisperVad({ filePath: model, nThreads: 1 })
  assert.deepEqual(vad.getModelInfo(), { filePath: model, useGpu: false, nThreads: 1 })
  const fromFile = await vad.detectSpeechFile(clip)
  assert.ok(fromFile.length > 0)
  assert.deepEqual(await vad.detectSpeech(clip), fromFile)
  const fromData = await vad.detectSpeechData(wavInt16(clip).buffer)
  assert.deepEqual(fromData, fromFile)
  await assert.rejects(vad.detectSpeechData(new ArrayBuffer(0)), /Empty audio data/)
  await vad.release()
})
