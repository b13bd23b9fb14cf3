'use strict'
// hark-whisper: whisper.rn's JavaScript API (initWhisper, WhisperContext, VAD, native log) on
// hark's engine. Code written for whisper.rn moves here by changing the import; whisper.rn 0.7's
// RealtimeTranscriber is at 'hark-whisper/realtime-transcription', @fugood/whisper.node's API at
// 'hark-whisper/whisper.node'.
//
// This file shapes the API; build/hark.node (src/) does the work on threads of its own. Errors
// are rejected promises whose message names what was wrong; nothing here throws synchronously
// out of a call that returns a promise (or { stop, promise }).

const native = require('./native')

// Runs fn and returns its promise; a synchronous throw becomes a rejection.
function asPromise(fn) {
  try {
    return Promise.resolve(fn())
  } catch (e) {
    return Promise.reject(e)
  }
}

// whisper.rn takes `require('./model.bin')` asset ids and file:// URLs; Node has only paths.
function resolvePath(filePath, what, isBundleAsset) {
  if (typeof filePath === 'number')
    throw new TypeError(`${what}: asset ids (require) are React Native's; pass a file path`)
  if (typeof filePath !== 'string' || filePath === '')
    throw new TypeError(`${what}: filePath must be a non-empty string, got ${describe(filePath)}`)
  if (!isBundleAsset && /^https?:\/\//.test(filePath))
    throw new Error(`${what}: remote files are not supported, download it first: ${filePath}`)
  return filePath.startsWith('file://') ? filePath.slice(7) : filePath
}

function describe(v) {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  return typeof v === 'object' ? 'an object' : `${typeof v === 'undefined' ? 'undefined' : 'a ' + typeof v}`
}

function checkOptions(options, what) {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object' || Array.isArray(options))
    throw new TypeError(`${what}: options must be an object, got ${describe(options)}`)
  return options
}

// whisper.rn's substitutions: values its native code replaces instead of refusing. An app written
// for it passes them and expects them to work; hark does the same, and says so in the native log
// at warn level. What whisper.rn would crash or misbehave on (a string, NaN) is still refused.
// `rules`: [name, isOutOfRange(value, options), replacement (undefined: the default), why].
function substituteAsWhisperRn(options, what, rules) {
  let out = options
  for (const [name, outOfRange, replacement, why] of rules) {
    const v = options[name]
    if (typeof v !== 'number' || Number.isNaN(v) || !outOfRange(v, options)) continue
    if (out === options) out = { ...options }
    if (replacement === undefined) delete out[name]
    else out[name] = replacement
    warn(
      `${what}: option '${name}' ${v} ${why}; using ${replacement === undefined ? 'the default' : replacement}, as whisper.rn does`,
    )
  }
  return out
}

const transcribeSubstitutions = [['maxThreads', (v) => v <= 0, undefined, 'is not a thread count']]

const contexts = new Map() // id -> WhisperContext, for releaseAllWhisper
const vadContexts = new Map()

class WhisperContext {
  constructor(nativeContext) {
    Object.defineProperty(this, '_native', { value: nativeContext })
    this.id = nativeContext.id
    this.ptr = nativeContext.ptr // whisper.rn's: the native context's address
    this.gpu = nativeContext.gpu
    this.reasonNoGPU = nativeContext.reasonNoGPU
    this.device = nativeContext.device // hark's: the device the model computes on ('cpu', ...)
    this.model = nativeContext.model // hark's: { path, type, weightType, multilingual }
  }

  // A transcription as whisper.rn returns it: stop() resolves once the job has stopped; the
  // promise gets the TranscribeResult (isAborted true after stop()).
  _start(kind, input, options, what) {
    let job
    let lastProgress = 0
    let onProgress
    try {
      options = substituteAsWhisperRn(checkOptions(options, what), what, transcribeSubstitutions)
      onProgress = options.onProgress
      if (onProgress !== undefined && typeof onProgress !== 'function')
        throw new TypeError(`option 'onProgress' must be a function, got ${describe(onProgress)}`)
      if (kind === 'file') input = resolvePath(input, what, false)
      const nativeOptions = onProgress
        ? {
            ...options,
            onProgress: (p) => {
              lastProgress = p > 100 ? 100 : p
              onProgress(lastProgress)
            },
          }
        : options
      job = this._native.transcribe(kind, input, nativeOptions)
    } catch (e) {
      return { stop: async () => {}, promise: Promise.reject(e) }
    }
    const promise = job.promise.then((result) => {
      // whisper.rn's promise: the caller always sees 100 at the end of a finished job.
      if (onProgress && !result.isAborted && lastProgress !== 100) onProgress(100)
      return result
    })
    return {
      jobId: job.jobId, // hark's
      stop: () => this._native.abortJob(job.jobId),
      promise,
    }
  }

  /** A file (path or data:audio/...;base64 URI). */
  transcribe(filePathOrBase64, options = {}) {
    return this._start('file', filePathOrBase64, options, 'transcribe')
  }

  /** whisper.node's name for transcribe(). */
  transcribeFile(filePathOrBase64, options = {}) {
    return this._start('file', filePathOrBase64, options, 'transcribeFile')
  }

  /** PCM: an ArrayBuffer or base64 string of 16-bit samples (pcmFormat 'float32': of float32), a typed array. */
  transcribeData(data, options = {}) {
    return this._start('data', data, options, 'transcribeData')
  }

  /**
   * Live transcription in slices. Audio: the microphone (default), or yours: audioSource
   * 'push' and then push(chunk) / end(), or audioStream: a Readable of PCM.
   */
  async transcribeRealtime(options = {}) {
    options = substituteAsWhisperRn(checkOptions(options, 'transcribeRealtime'), 'transcribeRealtime', [
      ...transcribeSubstitutions,
      ['realtimeAudioSec', (v) => v <= 0, 30, 'is not a duration'],
      ['vadMs', (v) => v < 2000, 2000, 'is under 2000 ms'],
      [
        'realtimeAudioMinSec',
        (v, o) => {
          const total = typeof o.realtimeAudioSec === 'number' && o.realtimeAudioSec > 0 ? o.realtimeAudioSec : 30
          const slice = typeof o.realtimeAudioSliceSec === 'number' && o.realtimeAudioSliceSec > 0 ? o.realtimeAudioSliceSec : total
          return v < 0.5 || v > slice
        },
        1,
        'is outside [0.5, the slice length]',
      ],
    ])
    const { audioStream, audioSessionOnStartIos, audioSessionOnStopIos, ...rest } = options
    if (audioSessionOnStartIos !== undefined || audioSessionOnStopIos !== undefined)
      debug('transcribeRealtime: audioSessionOnStartIos / audioSessionOnStopIos are iOS audio session settings; ignored here')
    if (audioStream !== undefined && (audioStream === null || typeof audioStream[Symbol.asyncIterator] !== 'function'))
      throw new TypeError(`transcribeRealtime: audioStream must be a Readable of PCM, got ${describe(audioStream)}`)
    const nativeOptions = audioStream ? { ...rest, audioSource: 'push' } : rest
    const buffered = [] // events before the first subscribe(), given to it
    const listeners = []
    let ended = false
    let lastEvent
    let resolveDone
    const done = new Promise((resolve) => (resolveDone = resolve))
    const contextId = this.id
    const deliver = (event) => {
      lastEvent = event
      if (listeners.length === 0) buffered.push(event)
      for (const l of listeners.slice()) l(event)
    }
    const session = native.startRealtime(this._native, nativeOptions, (json) => {
      if (json === null) {
        ended = true
        resolveDone(lastEvent)
        return
      }
      deliver(toRealtimeEvent(contextId, JSON.parse(json)))
    })
    const handle = {
      jobId: session.jobId,
      /**
       * Ends capture; unlike whisper.rn, the slice being transcribed is not aborted and what was
       * captured is still transcribed (nothing recorded is lost); resolves after the last event.
       */
      stop: () => session.stop(),
      /** whisper.rn's stop(): ends at once, the transcription in progress is abandoned (its slice: code -999). */
      abort: () => session.abort(),
      /** Adds a listener of every TranscribeRealtimeEvent (as whisper.rn's; the first also gets those before it). */
      subscribe: (callback) => {
        if (typeof callback !== 'function') throw new TypeError('subscribe: callback must be a function')
        listeners.push(callback)
        for (const e of buffered.splice(0)) callback(e)
      },
      /** audioSource 'push': PCM (Float32Array, Int16Array, Buffer, ArrayBuffer); resolves once taken. */
      push: (chunk) => asPromise(() => session.push(chunk)),
      /** audioSource 'push': no more audio. */
      end: () => session.end(),
      /** hark: true once the last event has been delivered. */
      get ended() {
        return ended
      },
      /** hark: resolves with the last event once the stream has ended (after end(), stop(), realtimeAudioSec). */
      done,
    }
    if (audioStream) {
      ;(async () => {
        try {
          for await (const chunk of audioStream) {
            if (ended) break // the stream is over (stop(), realtimeAudioSec): leaving destroys the Readable
            await session.push(chunk)
          }
        } catch (e) {
          deliver({ contextId, jobId: session.jobId, code: -3, error: String(e && e.message), isCapturing: true,
                    processTime: 0, recordingTime: 0 })
        }
        session.end()
      })()
    }
    return handle
  }

  /** whisper-bench's figures: { config, nThreads, encodeMs, decodeMs, batchMs, promptMs }. */
  bench(maxThreads) {
    return asPromise(() => this._native.bench(maxThreads))
  }

  /** Stops the jobs running on it, then frees the model. */
  async release() {
    await this._native.release()
    contexts.delete(this.id)
  }
}

// whisper.rn's TranscribeRealtimeEvent from hark's event JSON: data joins every slice's text and
// segments (times from the start of the recording), slices lists them.
function toRealtimeEvent(contextId, raw) {
  const slices = (raw.slices || []).map((s) => {
    const slice = {
      code: s.code,
      index: s.index,
      final: s.final,
      t0: s.t0,
      t1: s.t1,
      data: s.data,
      processTime: s.processTime,
      recordingTime: ((s.t1 - s.t0) * 10) | 0,
    }
    if (s.error) slice.error = s.error
    return slice
  })
  const data =
    slices.length > 0
      ? { result: slices.map((s) => s.data.result).join(''), segments: slices.flatMap((s) => s.data.segments) }
      : raw.data
  const event = {
    contextId,
    jobId: raw.jobId,
    isCapturing: raw.isCapturing,
    isStoppedByAction: raw.isStoppedByAction,
    code: raw.code,
    processTime: raw.processTime,
    recordingTime: raw.recordingTime,
    sliceIndex: raw.sliceIndex,
    droppedSamples: raw.droppedSamples,
    data,
    slices,
  }
  if (raw.error) event.error = raw.error
  return event
}

/** Loads a whisper.cpp ggml model. */
function initWhisper(options) {
  return asPromise(() => {
    const o = checkOptions(options, 'initWhisper')
    const file = resolvePath(o.filePath, 'initWhisper', o.isBundleAsset)
    if (o.coreMLModelAsset !== undefined || o.useCoreMLIos !== undefined)
      debug('initWhisper: coreMLModelAsset / useCoreMLIos are for Core ML on iOS; ignored here')
    return native.loadContext(file, {
      useGpu: o.useGpu,
      useFlashAttn: o.useFlashAttn,
      device: o.device,
      crossKvType: o.crossKvType,
    })
  }).then((n) => {
    const ctx = new WhisperContext(n)
    contexts.set(ctx.id, ctx)
    return ctx
  })
}

async function releaseAllWhisper() {
  await Promise.all([...contexts.values()].map((c) => c.release()))
}

class WhisperVadContext {
  constructor(nativeVad) {
    Object.defineProperty(this, '_native', { value: nativeVad })
    this.id = nativeVad.id
    this.gpu = nativeVad.gpu
    this.reasonNoGPU = nativeVad.reasonNoGPU
  }

  /** Speech in a file (path or data:audio/...;base64 URI): [{ t0, t1 }] in 10 ms units. */
  detectSpeech(filePathOrBase64, options = {}) {
    return asPromise(() => {
      const input = resolvePath(filePathOrBase64, 'detectSpeech', false)
      return this._native.detect('file', input, checkOptions(options, 'detectSpeech'))
    })
  }

  /** Speech in PCM (as transcribeData takes it). */
  detectSpeechData(audioData, options = {}) {
    return asPromise(() => this._native.detect('data', audioData, checkOptions(options, 'detectSpeechData')))
  }

  async release() {
    await this._native.release()
    vadContexts.delete(this.id)
  }
}

/** Loads a Silero VAD model (whisper.cpp's ggml-silero-*.bin). */
function initWhisperVad(options) {
  return asPromise(() => {
    const o = substituteAsWhisperRn(checkOptions(options, 'initWhisperVad'), 'initWhisperVad', [
      ['nThreads', (v) => v === 0, undefined, 'is not a thread count'],
    ])
    const file = resolvePath(o.filePath, 'initWhisperVad', o.isBundleAsset)
    return native.loadVad(file, { nThreads: o.nThreads, useGpu: o.useGpu }).then((n) => [n, file])
  }).then(([n, file]) => {
    const vad = new WhisperVadContext(n)
    Object.defineProperty(vad, '_filePath', { value: file }) // for RealtimeTranscriber's native VAD
    vadContexts.set(vad.id, vad)
    return vad
  })
}

async function releaseAllWhisperVad() {
  await Promise.all([...vadContexts.values()].map((v) => v.release()))
}

// ---- native log ----
const logListeners = []
let nativeLogOn = false
function dispatchLog(level, text) {
  for (const l of logListeners.slice()) l(level, text)
}
// The binding's own messages go where the library's do: to the listeners while the log is on.
function warn(text) {
  if (nativeLogOn) dispatchLog('warn', text)
}
function debug(text) {
  if (nativeLogOn) dispatchLog('debug', text)
}

/** Sends hark's log to the listeners (on) or nowhere (off, the default). */
async function toggleNativeLog(enabled) {
  nativeLogOn = !!enabled
  native.setLogSink(enabled ? dispatchLog : null)
}

/** hark (whisper.node's name): whether toggleNativeLog turned the log on. */
function isNativeLogEnabled() {
  return nativeLogOn
}

function addNativeLogListener(listener) {
  if (typeof listener !== 'function') throw new TypeError('addNativeLogListener: listener must be a function')
  logListeners.push(listener)
  return {
    remove: () => {
      const i = logListeners.indexOf(listener)
      if (i >= 0) logListeners.splice(i, 1)
    },
  }
}

// whisper.rn's iOS audio session utility. There is no AVAudioSession here: the setters resolve
// without effect (an app's setup runs unchanged), the getters reject as whisper.rn's do off iOS.
const AudioSessionCategoryIos = Object.freeze(
  Object.fromEntries(['Ambient', 'SoloAmbient', 'Playback', 'Record', 'PlayAndRecord', 'MultiRoute'].map((k) => [k, k])),
)
const AudioSessionCategoryOptionIos = Object.freeze(
  Object.fromEntries(
    ['MixWithOthers', 'DuckOthers', 'InterruptSpokenAudioAndMixWithOthers', 'AllowBluetooth', 'AllowBluetoothA2DP',
     'AllowAirPlay', 'DefaultToSpeaker'].map((k) => [k, k]),
  ),
)
const AudioSessionModeIos = Object.freeze(
  Object.fromEntries(
    ['Default', 'VoiceChat', 'VideoChat', 'GameChat', 'VideoRecording', 'Measurement', 'MoviePlayback', 'SpokenAudio'].map(
      (k) => [k, k],
    ),
  ),
)
const notIos = () => Promise.reject(new Error('Only supported on iOS'))
const noAudioSession = (what) => async () => debug(`AudioSessionIos.${what}: no iOS audio session here; ignored`)
const AudioSessionIos = Object.freeze({
  Category: AudioSessionCategoryIos,
  CategoryOption: AudioSessionCategoryOptionIos,
  Mode: AudioSessionModeIos,
  getCurrentCategory: notIos,
  getCurrentMode: notIos,
  setCategory: noAudioSession('setCategory'),
  setMode: noAudioSession('setMode'),
  setActive: noAudioSession('setActive'),
})

module.exports = {
  AudioSessionIos,
  AudioSessionCategoryIos,
  AudioSessionCategoryOptionIos,
  AudioSessionModeIos,
  initWhisper,
  releaseAllWhisper,
  WhisperContext,
  initWhisperVad,
  releaseAllWhisperVad,
  WhisperVadContext,
  toggleNativeLog,
  addNativeLogListener,
  isNativeLogEnabled,
  /** hark's version (whisper.rn reports its whisper.cpp's here). */
  libVersion: native.version,
  isUseCoreML: false,
  isCoreMLAllowFallback: false,
  /** hark's: SIMD levels and devices of this machine and build. */
  systemInfo: native.systemInfo,
  /** hark's: whether this build can capture from a microphone. */
  captureSupported: native.captureSupported,
}
