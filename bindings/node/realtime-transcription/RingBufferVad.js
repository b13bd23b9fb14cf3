'use strict'
// RingBufferVad: whisper.rn's streaming VAD over a WhisperVadContext (RealtimeVadContextLike).
// processAudio() takes 16-bit PCM; every inferenceIntervalMs of it, the Silero model judges the
// last preRecordingBufferMs (at least one interval) and the share of it that is speech decides:
// onSpeechStart(confidence, the buffered audio), onSpeechContinue(confidence, the new audio),
// onSpeechEnd(confidence) once speech has been missing for minSilenceDurationMs.
//
// Given to RealtimeTranscriber as its vadContext, it is not run in JavaScript: the transcriber
// hands its model and options to hark's engine, which runs the VAD natively on the stream.
const { RingBuffer, joinBytes } = require('./RingBuffer')
const { VAD_PRESETS } = require('./presets')

class RingBufferVad {
  constructor(vadContext, options = {}) {
    if (!vadContext || typeof vadContext.detectSpeechData !== 'function')
      throw new TypeError('RingBufferVad: vadContext must be a WhisperVadContext (initWhisperVad)')
    const o = options || {}
    const preset = o.vadPreset === undefined ? VAD_PRESETS.default : VAD_PRESETS[o.vadPreset]
    if (!preset)
      throw new TypeError(`RingBufferVad: unknown vadPreset '${o.vadPreset}' (one of ${Object.keys(VAD_PRESETS).join(', ')})`)
    this.vadContext = vadContext
    this.options = {
      vadOptions: { ...preset, ...(o.vadOptions || {}) },
      preRecordingBufferMs: o.preRecordingBufferMs ?? 1000,
      sampleRate: o.sampleRate || 16000,
      inferenceIntervalMs: o.inferenceIntervalMs || 500,
      speechRateThreshold: o.speechRateThreshold ?? 0.3,
      logger: o.logger || (() => {}),
    }
    if (this.options.preRecordingBufferMs < this.options.inferenceIntervalMs)
      throw new RangeError('RingBufferVad: preRecordingBufferMs must be at least inferenceIntervalMs')
    const bytesPerMs = (this.options.sampleRate * 2) / 1000
    this._ring = new RingBuffer(Math.ceil(this.options.preRecordingBufferMs * bytesPerMs))
    this._intervalBytes = Math.ceil(this.options.inferenceIntervalMs * bytesPerMs)
    this._callbacks = {}
    this._work = Promise.resolve()
    this._resetState()
  }

  _resetState() {
    this._pending = [] // audio since the last judgement
    this._pendingBytes = 0
    this._speaking = false
    this._speechSince = 0
    this._silenceSince = 0
    this._clock = 0 // ms of audio judged
  }

  onSpeechStart(cb) { this._callbacks.start = cb }
  onSpeechContinue(cb) { this._callbacks.continue = cb }
  onSpeechEnd(cb) { this._callbacks.end = cb }
  onError(cb) { this._callbacks.error = cb }

  updateOptions(options) {
    this.options.vadOptions = { ...this.options.vadOptions, ...(options || {}) }
  }

  processAudio(data) {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data)
    this._ring.write(bytes)
    this._pending.push(bytes.slice())
    this._pendingBytes += bytes.length
    if (this._pendingBytes >= this._intervalBytes) this._judge()
  }

  _judge() {
    const chunk = joinBytes(this._pending)
    this._pending = []
    this._pendingBytes = 0
    const audio = this._ring.read()
    this._work = this._work.then(async () => {
      try {
        const segments = await this.vadContext.detectSpeechData(audio.buffer, this.options.vadOptions)
        const seconds = audio.length / 2 / this.options.sampleRate
        const speech = segments.reduce((n, s) => n + (s.t1 - s.t0) / 100, 0)
        this._decide(seconds > 0 ? speech / seconds : 0, chunk, audio)
      } catch (e) {
        if (this._callbacks.error) this._callbacks.error(`VAD processing error: ${e && e.message}`)
      }
    })
  }

  _decide(rate, chunk, audio) {
    // Durations in audio time (a file may be played faster than real time).
    const now = (this._clock += (chunk.length / 2 / this.options.sampleRate) * 1000)
    const v = this.options.vadOptions
    if (rate > this.options.speechRateThreshold) {
      this._silenceSince = 0
      if (!this._speaking) {
        this._speaking = true
        this._speechSince = now
        if (this._callbacks.start) this._callbacks.start(rate, audio)
      } else if (v.maxSpeechDurationS && now - this._speechSince > v.maxSpeechDurationS * 1000) {
        if (this._callbacks.end) this._callbacks.end(1)
        this._speechSince = now
        if (this._callbacks.start) this._callbacks.start(rate, audio)
      } else if (this._callbacks.continue) {
        this._callbacks.continue(rate, chunk)
      }
    } else if (this._speaking) {
      if (now - this._speechSince < (v.minSpeechDurationMs || 100)) {
        if (this._callbacks.continue) this._callbacks.continue(rate, chunk) // too short to end yet
        return
      }
      if (!this._silenceSince) this._silenceSince = now
      if (now - this._silenceSince >= (v.minSilenceDurationMs || 100)) {
        this._speaking = false
        this._silenceSince = 0
        if (this._callbacks.end) this._callbacks.end(1 - rate)
      }
    }
  }

  /** Judges what is left and waits for every judgement in flight. */
  async flush() {
    if (this._pendingBytes > 0) this._judge()
    await this._work
  }

  async reset() {
    await this.flush()
    this._resetState()
    this._ring.clear()
  }
}

module.exports = { RingBufferVad }
