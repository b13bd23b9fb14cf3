'use strict'
// hark-whisper/realtime-transcription: whisper.rn 0.7's RealtimeTranscriber, written against as
// whisper.rn's README does, over the file adapter (with the Silero VAD of ../shared/vad), the
// push adapter and the microphone (the test's PulseAudio null sink). Callbacks come in whisper.rn's
// order and shapes; each slice's text is what transcribing that slice's audio gives.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('fs')
const path = require('path')
const hark = require('..')
const {
  RealtimeTranscriber,
  RingBufferVad,
  VAD_PRESETS,
  SimulateFileAudioStreamAdapter,
  PushAudioStreamAdapter,
  MicrophoneAudioStreamAdapter,
  SliceManager,
  RingBuffer,
} = require('hark-whisper/realtime-transcription')
const { micro, speechWav, wavInt16, fast, sharedVad, tmp, withPulse } = require('./helpers')

const transcribeOptions = { ...fast }

// Every callback as [name, payload], in the order they came.
function recorder() {
  const log = []
  const on = (name) => (x) => log.push([name, x])
  const callbacks = {
    onTranscribe: on('transcribe'),
    onVad: on('vad'),
    onError: on('error'),
    onStatusChange: on('status'),
    onStatsUpdate: on('stats'),
    onSliceTranscriptionStabilized: on('stabilized'),
  }
  return { log, callbacks }
}

const fileEnd = (adapter) => new Promise((resolve) => adapter.onEnd(resolve))

// The order whisper.rn 0.7 gives: status(true) and stats first; per slice the VAD's start before
// any of its transcriptions, its end before the final ('start' event, then 'transcribe', then
// 'stabilized' with the same text); status(false) and stats last.
function checkOrder(log, { vad }) {
  const names = log.map(([n, x]) => (n === 'transcribe' ? `transcribe:${x.type}` : n === 'vad' ? `vad:${x.type}` : n))
  assert.deepEqual(names.slice(0, 2), ['status', 'stats'], names.join(' '))
  assert.equal(log[0][1], true)
  assert.deepEqual(names.slice(-2), ['status', 'stats'], names.join(' '))
  assert.equal(log[log.length - 2][1], false)
  assert.ok(!names.includes('error'), JSON.stringify(log.filter(([n]) => n === 'error')))
  const finals = []
  for (let i = 0; i < log.length; i++) {
    const [name, x] = log[i]
    if (name !== 'transcribe' || x.type !== 'start') continue
    assert.equal(x.sliceIndex, -1)
    assert.equal(x.data, undefined)
    const [nextName, final] = log[i + 1]
    assert.equal(nextName, 'transcribe')
    assert.equal(final.type, 'transcribe')
    assert.deepEqual(log[i + 2], ['stabilized', final.data.result])
    finals.push({ at: i + 1, event: final })
  }
  assert.deepEqual(finals.map((f) => f.event.sliceIndex), finals.map((_, i) => finals[0].event.sliceIndex + i))
  if (vad) {
    for (const { at, event } of finals) {
      const mine = log.slice(0, at).filter(([n, x]) => n === 'vad' && x.sliceIndex === event.sliceIndex).map(([, x]) => x.type)
      assert.equal(mine[0], 'speech_start', `slice ${event.sliceIndex}: ${mine}`)
      assert.equal(mine[mine.length - 1], 'speech_end', `slice ${event.sliceIndex}: ${mine}`)
      const firstOfSlice = log.findIndex(([n, x]) => n === 'transcribe' && x.sliceIndex === event.sliceIndex)
      const speechStart = log.findIndex(([n, x]) => n === 'vad' && x.type === 'speech_start' && x.sliceIndex === event.sliceIndex)
      assert.ok(speechStart < firstOfSlice, `slice ${event.sliceIndex}: transcribed before its speech started`)
    }
  }
  return finals.map((f) => f.event)
}

function checkTranscribeEvent(e) {
  assert.deepEqual(Object.keys(e).sort().filter((k) => k !== 'vadEvent'),
                   ['data', 'isCapturing', 'memoryUsage', 'processTime', 'recordingTime', 'sliceIndex', 'type'])
  assert.deepEqual(Object.keys(e.data).sort(), ['isAborted', 'language', 'result', 'segments'])
  assert.equal(typeof e.data.result, 'string')
  assert.equal(e.data.isAborted, false)
  for (const s of e.data.segments) {
    assert.ok(s.t0 >= 0 && s.t1 >= s.t0, 'segment times are from the slice start, 10 ms units')
    assert.ok(s.t1 <= e.recordingTime / 10 + 1)
  }
  assert.ok(e.processTime > 0)
  assert.ok(e.recordingTime > 0)
  assert.deepEqual(Object.keys(e.memoryUsage).sort(), ['estimatedMB', 'slicesInMemory', 'totalSamples'])
}

test('VAD_PRESETS, RingBuffer and SliceManager as whisper.rn has them', () => {
  assert.deepEqual(Object.keys(VAD_PRESETS), ['default', 'sensitive', 'very-sensitive', 'conservative',
                                              'very-conservative', 'continuous', 'meeting', 'noisy'])
  assert.deepEqual(VAD_PRESETS.default, { threshold: 0.5, minSpeechDurationMs: 250, minSilenceDurationMs: 100,
                                          maxSpeechDurationS: 30, speechPadMs: 30, samplesOverlap: 0.1 })
  const ring = new RingBuffer(4)
  ring.write(Uint8Array.of(1, 2, 3))
  ring.write(Uint8Array.of(4, 5))
  assert.deepEqual(Array.from(ring.read()), [2, 3, 4, 5])
  const slices = new SliceManager(0.001, 1, 16000) // 16 samples a slice
  assert.equal(slices.addAudioData(new Uint8Array(20)).slice, undefined)
  const { slice } = slices.addAudioData(new Uint8Array(20))
  assert.equal(slice.index, 0)
  assert.equal(slice.sampleCount, 16)
  assert.equal(slices.getMemoryUsage().slicesInMemory, 1)
  assert.equal(slices.getAudioDataForTranscription(0), null, 'released: beyond maxSlicesInMemory')
})

test('a whisper.rn 0.7 app: RealtimeTranscriber over a file with the Silero VAD', async (t) => {
  const vadModel = sharedVad('silero-v6.2.0-ggml.bin')
  const clip = sharedVad('vad-three-clips.wav')
  if (!vadModel || !clip) return t.skip('../shared/vad (the Silero model and its clip) is not here')
  const whisperContext = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const vadContext = await hark.initWhisperVad({ filePath: vadModel })
  const audioStream = new SimulateFileAudioStreamAdapter({ filePath: clip, playbackSpeed: 0 })
  const { log, callbacks } = recorder()
  const audioOf = new Map()
  const transcriber = new RealtimeTranscriber(
    { whisperContext, vadContext: new RingBufferVad(vadContext, { vadPreset: 'default' }), audioStream },
    { audioSliceSec: 25, transcribeOptions, promptPreviousSlices: false, maxSlicesInMemory: 5 },
    {
      ...callbacks,
      onBeginTranscribe: async ({ audioData, sliceIndex, duration }) => {
        audioOf.set(sliceIndex, { audioData, duration })
        return true
      },
    },
  )
  const ended = fileEnd(audioStream)
  await transcriber.start()
  await assert.rejects(transcriber.start(), /Realtime transcription is already active/)
  await ended
  await transcriber.stop()
  const finals = checkOrder(log, { vad: true })
  // The clip holds three utterances with pauses between them: three slices.
  assert.equal(finals.length, 3, finals.map((f) => f.data.result).join(' | '))
  for (const e of finals) checkTranscribeEvent(e)
  const vadEvent = log.find(([n]) => n === 'vad')[1]
  assert.deepEqual(Object.keys(vadEvent).sort(), ['confidence', 'duration', 'lastSpeechDetectedTime', 'sliceIndex',
                                                  'timestamp', 'type'])
  assert.ok(vadEvent.confidence >= 0.5 && vadEvent.confidence <= 1)
  // Each slice's text is what transcribing that slice's audio gives (no prompt between slices).
  for (const e of finals) {
    const { audioData, duration } = audioOf.get(e.sliceIndex)
    assert.ok(Math.abs(audioData.length / 32 - duration) <= 10, `${audioData.length} bytes for ${duration} ms`)
    const alone = await whisperContext.transcribeData(audioData.slice().buffer, transcribeOptions).promise
    assert.equal(e.data.result, alone.result.replace(/\[(\s*\w+\s*)]/i, '').trim(), `slice ${e.sliceIndex}`)
  }
  const results = transcriber.getTranscriptionResults()
  assert.deepEqual(results.map((r) => r.transcribeEvent), finals)
  assert.deepEqual(Object.keys(results[0].slice).sort(), ['endTime', 'index', 'isProcessed', 'isReleased', 'sampleCount',
                                                         'startTime'])
  const stats = transcriber.getStatistics()
  assert.equal(stats.isActive, false)
  assert.equal(stats.vadEnabled, true)
  assert.equal(stats.sliceStats.currentSliceIndex, 3)
  assert.equal(typeof stats.vadStats.lastSpeechDetectedTime, 'number')
  await transcriber.release()
  await whisperContext.release()
  await vadContext.release()
})

test('no VAD: slices of audioSliceSec, nextSlice() cuts, stop() transcribes what was captured', async () => {
  const whisperContext = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const audioStream = new PushAudioStreamAdapter()
  const { log, callbacks } = recorder()
  const transcriber = new RealtimeTranscriber({ whisperContext, audioStream }, { audioSliceSec: 3, transcribeOptions },
                                              callbacks)
  await transcriber.start()
  const pcm = Buffer.from(wavInt16(speechWav()).buffer)
  audioStream.push(pcm)
  await new Promise((resolve) => setTimeout(resolve, 100))
  await transcriber.nextSlice() // closes the first slice where the audio is now
  audioStream.push(pcm)
  await transcriber.stop() // the open slice is transcribed before stop() resolves
  const finals = checkOrder(log, { vad: false })
  assert.ok(finals.length >= 2, `${finals.length} slices`)
  assert.ok(Math.abs(finals[0].recordingTime - pcm.length / 32) <= 20, `nextSlice cut at ${finals[0].recordingTime} ms`)
  for (const e of finals) checkTranscribeEvent(e)
  const total = finals.reduce((n, e) => n + e.recordingTime, 0)
  assert.ok(Math.abs(total - (2 * pcm.length) / 32) < 20, `${total} ms of ${(2 * pcm.length) / 32}`)
  assert.ok(finals.every((e) => e.recordingTime <= 3000))
  await transcriber.release()
  await whisperContext.release()
})

test('recording to audioOutputPath: natively, or through whisper.rn\'s fs interface', async () => {
  const whisperContext = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
  const pcm = Buffer.from(wavInt16(speechWav()).buffer)
  const files = new Map()
  const memoryFs = {
    writeFile: async (p, data) => void files.set(p, Buffer.from(data, 'base64')),
    appendFile: async (p, data) => void files.set(p, Buffer.concat([files.get(p), Buffer.from(data, 'base64')])),
    readFile: async (p) => files.get(p).toString('base64'),
    exists: async (p) => files.has(p),
    unlink: async (p) => void files.delete(p),
  }
  for (const viaFs of [false, true]) {
    const out = path.join(tmp, `rt-out-${viaFs}-${process.pid}.wav`)
    const audioStream = new PushAudioStreamAdapter()
    const transcriber = new RealtimeTranscriber({ whisperContext, audioStream, fs: viaFs ? memoryFs : undefined },
                                                { audioOutputPath: out, transcribeOptions })
    await transcriber.start()
    audioStream.push(pcm)
    await transcriber.stop()
    const wav = viaFs ? files.get(out) : fs.readFileSync(out)
    assert.equal(wav.readUInt16LE(34), 16, 'bits per sample')
    assert.equal(wav.readUInt32LE(40), pcm.length, 'data size in the header')
    assert.deepEqual(wav.subarray(44), pcm)
    await transcriber.release()
  }
  await whisperContext.release()
})

test('bad dependencies and a second start are clear errors', async () => {
  const whisperContext = await hark.initWhisper({ filePath: micro })
  const audioStream = new PushAudioStreamAdapter()
  assert.throws(() => new RealtimeTranscriber({ audioStream }), /requires either whisperContext or parakeetContext/)
  assert.throws(() => new RealtimeTranscriber({ parakeetContext: {}, audioStream }), /parakeetContext is not supported/)
  assert.throws(() => new RealtimeTranscriber({ whisperContext: { transcribeData() {} }, audioStream }),
                /WhisperContext of this package/)
  assert.throws(() => new RealtimeTranscriber({ whisperContext, audioStream: {} }), /AudioStreamInterface/)
  assert.throws(() => new RealtimeTranscriber({ whisperContext, audioStream, vadContext: {} }), /vadContext must be/)
  assert.throws(() => new SimulateFileAudioStreamAdapter({}), /filePath/)
  const bad = new RealtimeTranscriber({ whisperContext, audioStream: new SimulateFileAudioStreamAdapter({ filePath: '/nonexistent.wav' }) },
                                      { transcribeOptions })
  await assert.rejects(bad.start(), /nonexistent\.wav/)
  assert.equal(bad.getStatistics().isActive, false)
  await whisperContext.release()
})

test('the microphone adapter: speech played into a PulseAudio null sink reaches onTranscribe', async (t) => {
  await withPulse(t, async ({ play }) => {
    const whisperContext = await hark.initWhisper({ filePath: micro, useFlashAttn: true })
    const audioStream = new MicrophoneAudioStreamAdapter({ device: 'hark_null.monitor' })
    const { log, callbacks } = recorder()
    const transcriber = new RealtimeTranscriber({ whisperContext, audioStream }, { audioSliceSec: 2, transcribeOptions },
                                                callbacks)
    await transcriber.start()
    assert.equal(audioStream.isRecording(), true)
    await play(speechWav())
    await transcriber.stop()
    assert.equal(audioStream.isRecording(), false)
    const finals = checkOrder(log, { vad: false })
    assert.ok(finals.length >= 1)
    for (const e of finals) checkTranscribeEvent(e)
    const heard = finals.reduce((n, e) => n + e.recordingTime, 0)
    assert.ok(heard >= 1500, `${heard} ms captured`)
    await transcriber.release()
    await whisperContext.release()
  })
})
