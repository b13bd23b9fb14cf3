'use strict'
// RealtimeTranscriber: whisper.rn 0.7's realtime API (whisper.rn/realtime-transcription) on
// hark's engine. An AudioStreamInterface delivers 16-bit PCM; hark's native realtime transcriber
// slices it (at vadContext's pauses, or every audioSliceSec), runs the Silero VAD on the stream,
// and transcribes each slice while it grows (partial results) and once it closes (final). This
// file turns its events into whisper.rn's callbacks, in whisper.rn's order:
//   onStatusChange(true), onStatsUpdate(status_change),
//   per slice: onVad(speech_start), onTranscribe(transcribe) while it grows, onVad(speech_continue),
//   onVad(speech_end), onTranscribe(start), onTranscribe(transcribe), onSliceTranscriptionStabilized,
//   onStatsUpdate(memory_change); stop(): onStatusChange(false), onStatsUpdate(status_change).
//
// Where hark differs, it keeps work: stop() transcribes what was captured (whisper.rn drops it;
// abort() does that), every slice gets a final result (also those cut by length), reset() does not
// delete the recording.
const { WhisperContext, WhisperVadContext } = require('..')
const native = require('../native')
const { RingBufferVad } = require('./RingBufferVad')
const { joinBytes } = require('./RingBuffer')
const { VAD_PRESETS } = require('./presets')
const { WavFileWriter } = require('./WavFileWriter')

const kAudioMethods = ['initialize', 'start', 'stop', 'isRecording', 'onData', 'onError', 'onStatusChange', 'release']
const kAborted = -999 // a slice abandoned by abort(): whisper.rn's code for an aborted transcription
const kUnlimitedSec = 1e7 // whisper.rn's transcriber has no maximum length

// The first bracketed token ([BLANK_AUDIO], [ Silence ]) goes, as whisper.rn's transcriber does.
const cleanText = (text) => text.replace(/\[(\s*\w+\s*)]/i, '').trim()

class RealtimeTranscriber {
  constructor(dependencies, options = {}, callbacks = {}) {
    const d = dependencies || {}
    if (d.parakeetContext && !d.whisperContext)
      throw new TypeError('RealtimeTranscriber: hark runs Whisper models; pass whisperContext (parakeetContext is not supported)')
    if (!d.whisperContext) throw new TypeError('RealtimeTranscriber requires either whisperContext or parakeetContext')
    if (!(d.whisperContext instanceof WhisperContext))
      throw new TypeError('RealtimeTranscriber: whisperContext must be a WhisperContext of this package (initWhisper)')
    if (!d.audioStream || kAudioMethods.some((m) => typeof d.audioStream[m] !== 'function'))
      throw new TypeError(`RealtimeTranscriber: audioStream must be an AudioStreamInterface (${kAudioMethods.join(', ')})`)
    this._whisper = d.whisperContext
    this._audioStream = d.audioStream
    this._fs = d.fs
    this._vad = vadOf(d.vadContext)
    this._vadContext = d.vadContext
    const o = options || {}
    // whisper.rn's defaults; like it, 0 means the default.
    this.options = {
      audioSliceSec: o.audioSliceSec || 30,
      audioMinSec: o.audioMinSec || 1,
      maxSlicesInMemory: o.maxSlicesInMemory || 3,
      transcribeOptions: o.transcribeOptions || {},
      initialPrompt: o.initialPrompt,
      promptPreviousSlices: o.promptPreviousSlices ?? true,
      audioOutputPath: o.audioOutputPath,
      audioStreamConfig: o.audioStreamConfig,
      logger: o.logger || (() => {}),
      realtimeProcessingPauseMs: o.realtimeProcessingPauseMs || 200,
      initRealtimeAfterMs: o.initRealtimeAfterMs || 200,
    }
    this.callbacks = { ...(callbacks || {}) }
    this._active = false
    this._session = null
    this._resetState()
    d.audioStream.onData((chunk) => this._onAudio(chunk))
    d.audioStream.onError((error) => this._error(`Audio stream error: ${error}`))
    d.audioStream.onStatusChange((recording) => this._log(`audio stream ${recording ? 'recording' : 'stopped'}`))
    if (typeof d.audioStream.onEnd === 'function') d.audioStream.onEnd(() => this._onStreamEnd())
  }

  _log(text) {
    this.options.logger(`[RealtimeTranscriber] ${text}`)
  }

  _error(text) {
    this._log(text)
    if (this.callbacks.onError) this.callbacks.onError(text)
  }

  _resetState() {
    this._results = new Map() // slice index -> { slice, transcribeEvent }
    this._vadEvents = new Map() // slice index -> its latest RealtimeVadEvent
    this._finals = new Set()
    this._kept = [] // { at: sample, bytes } of 16 kHz mono audio the slices in memory cover
    this._samples = 0 // pushed so far (at the stream's rate)
    this._currentSlice = 0
    this._speaking = false
    this._lastSpeechDetectedTime = -1
    this._isTranscribing = false
    this._lastStats = null
    this._feed = Promise.resolve()
    this._events = Promise.resolve()
  }

  /** Starts the audio stream and the transcription. */
  async start() {
    if (this._active) throw new Error('Realtime transcription is already active')
    this._active = true
    this._notifyStatus(true)
    this._resetState()
    try {
      const cfg = { sampleRate: 16000, channels: 1, bitsPerSample: 16, audioSource: 6, bufferSize: 16384,
                    ...(this.options.audioStreamConfig || {}) }
      if (cfg.bitsPerSample !== 16) throw new Error(`audioStreamConfig.bitsPerSample must be 16, got ${cfg.bitsPerSample}`)
      this._rate = cfg.sampleRate
      this._channels = cfg.channels
      this._wav = null
      if (this.options.audioOutputPath && this._fs) {
        this._wav = new WavFileWriter(this._fs, this.options.audioOutputPath, cfg)
        await this._wav.initialize()
      }
      this._sessionDone = new Promise((resolve) => (this._sessionEnded = resolve))
      this._session = native.startRealtime(this._whisper._native, this._nativeOptions(cfg), (json) => {
        this._events = this._events.then(() => this._onNative(json)).catch((e) => this._error(`Transcription error: ${e && e.message}`))
      })
      await this._audioStream.initialize(cfg)
      await this._audioStream.start()
      this._stats('status_change', true)
    } catch (e) {
      if (this._session) this._session.abort()
      this._session = null
      this._active = false
      this._notifyStatus(false)
      throw e
    }
  }

  _nativeOptions(cfg) {
    const { audioCtx, onProgress, onNewSegments, prompt, ...t } = this.options.transcribeOptions
    if (typeof t.maxThreads === 'number' && t.maxThreads <= 0) delete t.maxThreads // whisper.rn: the default
    const o = {
      ...t,
      prompt: this.options.initialPrompt,
      promptPreviousSlices: !!this.options.promptPreviousSlices,
      audioSource: 'push',
      sampleRate: cfg.sampleRate,
      channels: cfg.channels,
      pcmFormat: 'int16',
      live: this._audioStream.live === true,
      realtimeAudioSec: kUnlimitedSec,
      realtimeAudioSliceSec: this.options.audioSliceSec,
      realtimeAudioMinSec: Math.max(this.options.initRealtimeAfterMs, 1) / 1000,
      partialSec: this.options.realtimeProcessingPauseMs / 1000,
    }
    if (this.options.audioOutputPath && !this._fs) {
      o.audioOutputPath = this.options.audioOutputPath
      o.audioOutputFormat = 'int16'
    }
    if (this._vad) {
      const v = this._vad.options()
      o.vadModelPath = this._vad.filePath
      o.vadThreshold = v.threshold
      // whisper.rn's VAD judges speech every inference interval: a pause shorter cannot end speech.
      o.vadSilenceMs = Math.max(v.minSilenceDurationMs ?? 100, this._vad.intervalMs)
      o.vadEvents = true
    }
    return o
  }

  _onAudio(chunk) {
    if (!this._active || !this._session) return
    const session = this._session
    const bytes = chunk && chunk.data
    if (!(bytes instanceof Uint8Array)) return this._error('Audio stream error: onData gave no Uint8Array of PCM')
    if ((chunk.sampleRate && chunk.sampleRate !== this._rate) || (chunk.channels && chunk.channels !== this._channels))
      return this._error(`Audio stream error: a chunk at ${chunk.sampleRate} Hz, ${chunk.channels} channel(s) in a stream of ${this._rate} Hz, ${this._channels}`)
    this._feed = this._feed.then(async () => {
      if (session !== this._session) return
      if (this._vad && this.callbacks.onBeginVad) {
        const ok = await this.callbacks.onBeginVad({ audioData: bytes, sliceIndex: -1, duration: this._ms(bytes.length) })
        if (ok === false) return // whisper.rn: audio the app keeps from the VAD reaches no slice
      }
      this._keep(bytes)
      if (this._wav) this._wav.appendAudioData(bytes).catch((e) => this._error(`Audio output error: ${e && e.message}`))
      if (!this._isTranscribing && (!this._vad || this._speaking)) {
        this._isTranscribing = true
        this._stats('status_change')
      }
      session.push(bytes).catch((e) => this._error(`Audio stream error: ${e && e.message}`))
    })
  }

  _ms(nBytes) {
    return (nBytes / 2 / this._channels / this._rate) * 1000
  }

  // 16 kHz mono audio kept for onBeginTranscribe's audioData and the slices in memory.
  _keep(bytes) {
    if (this._rate === 16000 && this._channels === 1) this._kept.push({ at: this._samples, bytes: bytes.slice() })
    this._samples += bytes.length / 2 / this._channels
  }

  _audioOf(t0, t1) {
    const from = t0 * 160
    const to = t1 * 160
    const parts = []
    for (const { at, bytes } of this._kept) {
      const end = at + bytes.length / 2
      if (end <= from || at >= to) continue
      parts.push(bytes.subarray((Math.max(from, at) - at) * 2, (Math.min(to, end) - at) * 2))
    }
    return joinBytes(parts)
  }

  _onStreamEnd() {
    const session = this._session
    if (!session) return
    this._log('audio stream ended')
    this._feed = this._feed.then(() => session.end())
  }

  async _onNative(json) {
    if (json === null) {
      this._sessionEnded()
      return
    }
    const raw = JSON.parse(json)
    if (raw.vad) return this._onVad(raw)
    if (raw.code !== 0) this._error(raw.error || `Transcribe failed with code ${raw.code}`)
    const s = (raw.slices || []).find((x) => x.index === raw.sliceIndex)
    if (!s || this._finals.has(s.index)) return // the last event repeats the last final
    if (s.code === kAborted) return
    if (s.final) this._finals.add(s.index)
    if (s.code !== 0) return this._error(`Transcription error: ${s.error || `code ${s.code}`}`)
    const data = {
      result: cleanText(s.data.result),
      language: this.options.transcribeOptions.language || 'auto',
      segments: s.data.segments.map((seg) => ({ text: seg.text, t0: seg.t0 - s.t0, t1: seg.t1 - s.t0 })),
      isAborted: false,
    }
    const previous = this._results.get(s.index)
    // A slice the VAD never heard speech in is closed without a transcription: whisper.rn has no slice there.
    if (this._vad && s.final && !previous && data.result === '' && data.segments.length === 0) return this._advance(s)
    if (s.final && !raw.isCapturing && this._speaking) {
      // The stream ended while speech went on: whisper.rn ends the speech before the last slice.
      this._onVad({ vad: { type: 'speech_end', confidence: 1, t: s.t1 }, slices: raw.slices })
    }
    if (s.final) this._emitStart()
    const vadEvent = this._vadEvents.get(s.index)
    if (this.callbacks.onBeginTranscribe) {
      const ok = await this.callbacks.onBeginTranscribe({ audioData: this._audioOf(s.t0, s.t1), sliceIndex: s.index,
                                                          duration: (s.t1 - s.t0) * 10, vadEvent })
      if (ok === false) return s.final ? this._advance(s) : undefined
    }
    const event = {
      type: 'transcribe',
      sliceIndex: s.index,
      data: data.result === '.' && previous ? previous.transcribeEvent.data : data,
      isCapturing: this._audioStream.isRecording(),
      processTime: Math.round(s.processTime),
      recordingTime: (s.t1 - s.t0) * 10,
      memoryUsage: this._memoryUsage(),
    }
    if (vadEvent) event.vadEvent = vadEvent
    const sliceInfo = { index: s.index, sampleCount: (s.t1 - s.t0) * 160, startTime: s.t0 * 10, endTime: s.t1 * 10,
                        isProcessed: !!s.final, isReleased: false }
    this._results.set(s.index, { slice: sliceInfo, transcribeEvent: event })
    this._forgetOldSlices()
    if (this.callbacks.onTranscribe) this.callbacks.onTranscribe(event)
    if (s.final) {
      if (this.callbacks.onSliceTranscriptionStabilized) this.callbacks.onSliceTranscriptionStabilized(event.data.result)
      this._advance(s)
      this._stats('memory_change')
    }
    if (this._isTranscribing) {
      this._isTranscribing = false
      this._stats('status_change')
    }
  }

  // whisper.rn's nextSlice() announces the slice it is about to finish with a 'start' event.
  _emitStart() {
    if (this.callbacks.onTranscribe)
      this.callbacks.onTranscribe({ type: 'start', sliceIndex: -1, data: undefined, isCapturing: this._audioStream.isRecording(),
                                    processTime: 0, recordingTime: 0, memoryUsage: this._memoryUsage() })
  }

  _advance(s) {
    this._vadEvents.delete(s.index)
    this._currentSlice = s.index + 1
  }

  // Slices beyond maxSlicesInMemory: their results stay, their audio goes.
  _forgetOldSlices() {
    const indexes = [...this._results.keys()]
    for (const i of indexes.slice(0, Math.max(0, indexes.length - this.options.maxSlicesInMemory)))
      this._results.get(i).slice.isReleased = true
    const kept = indexes.slice(-this.options.maxSlicesInMemory)
    if (kept.length === 0) return
    const from = this._results.get(kept[0]).slice.startTime / 10 * 160
    while (this._kept.length && this._kept[0].at + this._kept[0].bytes.length / 2 <= from) this._kept.shift()
  }

  _onVad(raw) {
    const type = raw.vad.type
    if (type === 'speech_start') {
      if (this._speaking) return
      this._speaking = true
    } else if (!this._speaking) {
      return
    }
    if (type === 'speech_end') this._speaking = false
    else this._lastSpeechDetectedTime = Date.now()
    const open = raw.slices && raw.slices.length ? raw.slices[raw.slices.length - 1] : null
    const sliceStart = open && open.final ? open.t1 : open ? open.t0 : 0
    const event = {
      type,
      timestamp: Date.now(),
      lastSpeechDetectedTime: this._lastSpeechDetectedTime,
      confidence: raw.vad.confidence,
      duration: Math.max(0, raw.vad.t - sliceStart) / 100, // seconds of the slice so far
      sliceIndex: this._currentSlice,
    }
    this._vadEvents.set(this._currentSlice, event)
    if (this.callbacks.onVad) this.callbacks.onVad(event)
  }

  _memoryUsage() {
    const totalSamples = this._kept.reduce((n, k) => n + k.bytes.length / 2, 0)
    return { slicesInMemory: Math.min(this._results.size, this.options.maxSlicesInMemory), totalSamples,
             estimatedMB: Math.round(((totalSamples * 2) / (1024 * 1024)) * 100) / 100 }
  }

  _notifyStatus(active) {
    if (this.callbacks.onStatusChange) this.callbacks.onStatusChange(active)
  }

  // whisper.rn's onStatsUpdate: status changes always; memory when it moved by > 5 MB or > 10%.
  _stats(type, force = false) {
    if (!this.callbacks.onStatsUpdate) return
    const data = this.getStatistics()
    const last = this._lastStats
    if (!force && last) {
      if (type === 'status_change' && last.isActive === data.isActive && last.isTranscribing === data.isTranscribing) return
      if (type === 'memory_change') {
        const a = last.sliceStats.memoryUsage.estimatedMB
        const b = data.sliceStats.memoryUsage.estimatedMB
        if (Math.abs(b - a) <= 5 && Math.abs(b - a) <= 0.1 * Math.max(a, 1e-9)) return
      }
    }
    this._lastStats = data
    this.callbacks.onStatsUpdate({ timestamp: Date.now(), type, data })
  }

  /**
   * Ends capture. Unlike whisper.rn, what was captured is still transcribed first: the open
   * slice's final result arrives before this resolves. (abort() drops it, as whisper.rn's stop.)
   */
  async stop() {
    return this._end(false)
  }

  /** hark: ends at once; the slice being transcribed is abandoned (whisper.rn's stop()). */
  async abort() {
    return this._end(true)
  }

  async _end(abort) {
    if (!this._active) return
    this._active = false
    const session = this._session
    try {
      await this._audioStream.stop()
      await this._feed
      if (session) {
        // stop: the end of the stream, after every chunk already given (they are fed in order);
        // the last slice is transcribed. abort: at once.
        if (abort) session.abort()
        else session.end()
        await this._sessionDone
        await this._events
      }
      if (this._wav) await this._wav.finalize()
    } catch (e) {
      this._error(`Stop error: ${e && e.message}`)
    }
    this._session = null
    this._wav = null
    this._isTranscribing = false
    this._notifyStatus(false)
    this._stats('status_change', true)
  }

  /** Closes the current slice where the audio is now; its final result follows (this resolves first). */
  async nextSlice() {
    if (this._session) this._session.nextSlice()
  }

  /** Forgets the results, VAD state and statistics (the stream, if running, goes on). */
  reset() {
    const feed = this._feed
    const events = this._events
    this._resetState()
    this._feed = feed
    this._events = events
    if (this._vadContext instanceof RingBufferVad) this._vadContext.reset().catch(() => {})
  }

  async release() {
    if (this._active) await this.stop()
    await this._audioStream.release()
    this._vad = null
  }

  updateCallbacks(callbacks) {
    Object.assign(this.callbacks, callbacks || {})
  }

  /** VAD options from the next start() (the VAD runs natively on the stream it was started with). */
  updateVadOptions(options) {
    if (!this._vad) return
    this._vad.update(options || {})
  }

  getStatistics() {
    const memoryUsage = this._memoryUsage()
    return {
      isActive: this._active,
      isTranscribing: this._isTranscribing,
      vadEnabled: !!this._vad,
      audioStats: { isRecording: this._audioStream.isRecording(), accumulatedSamples: memoryUsage.totalSamples },
      vadStats: this._vad
        ? { enabled: true, contextAvailable: true, lastSpeechDetectedTime: this._lastSpeechDetectedTime }
        : null,
      sliceStats: {
        currentSliceIndex: this._currentSlice,
        transcribeSliceIndex: this._currentSlice,
        totalSlices: this._results.size,
        memoryUsage,
      },
    }
  }

  /** Each slice's latest result: [{ slice, transcribeEvent }], by slice index. */
  getTranscriptionResults() {
    return [...this._results.values()]
  }
}

// The VAD the native stream runs: a RingBufferVad's model and options, or a WhisperVadContext
// (whisper.rn before 0.7 took one directly) with VAD_PRESETS.default.
function vadOf(vadContext) {
  if (vadContext === undefined || vadContext === null) return null
  let ctx
  let options
  let intervalMs = 500
  if (vadContext instanceof RingBufferVad) {
    ctx = vadContext.vadContext
    options = () => vadContext.options.vadOptions
    intervalMs = vadContext.options.inferenceIntervalMs
  } else if (vadContext instanceof WhisperVadContext) {
    ctx = vadContext
    let own = { ...VAD_PRESETS.default }
    options = () => own
    vadContext = { updateOptions: (p) => (own = { ...own, ...p }) }
  } else {
    throw new TypeError('RealtimeTranscriber: vadContext must be a RingBufferVad or a WhisperVadContext of this package')
  }
  if (!(ctx instanceof WhisperVadContext) || !ctx._filePath)
    throw new TypeError('RealtimeTranscriber: the VAD must be a WhisperVadContext of this package (initWhisperVad)')
  return {
    filePath: ctx._filePath,
    intervalMs,
    options,
    update: (p) => vadContext.updateOptions(p),
  }
}

module.exports = { RealtimeTranscriber }
