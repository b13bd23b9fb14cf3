'use strict'
// hark-whisper/whisper.node: @fugood/whisper.node's API (1.1) on hark's engine, so a program
// written for it moves here by changing the import. Its differences from whisper.rn's API (the
// package's main entry) are kept: segment times in milliseconds, language 'en' unless given,
// transcribeData takes an ArrayBuffer of 16-bit PCM, a stopped job's promise rejects, bench's
// `batchdMs`, getModelInfo(), detectSpeechFile(), a default export. Parakeet models and the
// browser (WASM) build are whisper.node's alone: those calls say so.
const hark = require('.')

function msSegments(segments) {
  return segments.map((s) => ({ text: s.text, t0: s.t0 * 10, t1: s.t1 * 10 }))
}

// whisper.node's options over whisper.rn's: the same names; language 'en' by default.
function transcribeOptions(options) {
  const o = { language: 'en', ...(options || {}) }
  const { onNewSegments } = o
  if (typeof onNewSegments === 'function')
    o.onNewSegments = (r) => onNewSegments({ nNew: r.nNew, totalNNew: r.totalNNew, result: r.result, segments: msSegments(r.segments) })
  return o
}

function asWhisperNodeJob(job) {
  let stopped = false
  return {
    stop: async () => {
      stopped = true
      await job.stop()
    },
    promise: job.promise.then((r) => {
      if (stopped || r.isAborted) throw new Error('Transcription cancelled')
      const out = { result: r.result, segments: msSegments(r.segments), isAborted: false }
      if (r.language) out.language = r.language
      return out
    }),
  }
}

function requireArrayBuffer(data) {
  if (!(data instanceof ArrayBuffer)) throw new TypeError('Expected ArrayBuffer')
  if (data.byteLength % 2 !== 0) throw new Error('Audio buffer size must be even for 16-bit PCM')
}

// What both contexts are: one of the main API's, and what getModelInfo() tells of it.
class WrappedContext {
  constructor(inner, info) {
    Object.defineProperty(this, '_inner', { value: inner })
    Object.defineProperty(this, '_info', { value: info })
  }

  getModelInfo() {
    return { ...this._info }
  }

  release() {
    return this._inner.release()
  }
}

class WhisperContext extends WrappedContext {

  transcribeFile(filePath, options) {
    return asWhisperNodeJob(this._inner.transcribeFile(filePath, transcribeOptions(options)))
  }

  transcribe(filePath, options) {
    return this.transcribeFile(filePath, options)
  }

  transcribeData(audioData, options) {
    requireArrayBuffer(audioData)
    return asWhisperNodeJob(this._inner.transcribeData(audioData, { ...transcribeOptions(options), pcmFormat: 'int16' }))
  }

  async bench(nThreads) {
    const b = await this._inner.bench(typeof nThreads === 'number' ? nThreads : 1)
    return { config: b.config, nThreads: b.nThreads, encodeMs: b.encodeMs, decodeMs: b.decodeMs, batchdMs: b.batchMs,
             promptMs: b.promptMs }
  }
}

class WhisperVadContext extends WrappedContext {
  /** Speech in a file: [{ t0, t1 }] in 10 ms units (whisper.cpp's, as whisper.node gives them). */
  detectSpeechFile(filePath, options) {
    return this._inner.detectSpeech(filePath, options)
  }

  detectSpeech(filePath, options) {
    return this.detectSpeechFile(filePath, options)
  }

  async detectSpeechData(audioData, options) {
    requireArrayBuffer(audioData)
    if (audioData.byteLength === 0) throw new Error('Empty audio data')
    return this._inner.detectSpeechData(audioData, { ...(options || {}), pcmFormat: 'int16' })
  }
}

function checkVariant(variant) {
  if (variant !== undefined && variant !== 'default')
    throw new Error(`whisper.node's '${variant}' library variant is not hark's; hark picks its devices itself (variant 'default')`)
}

async function initWhisper(options, variant) {
  checkVariant(variant)
  const o = options || {}
  if (typeof o.filePath !== 'string' || o.filePath === '') throw new Error('Model path is required')
  const inner = await hark.initWhisper({ filePath: o.filePath, useGpu: o.useGpu, useFlashAttn: o.useFlashAttn ?? false })
  return new WhisperContext(inner, { filePath: o.filePath, useGpu: inner.gpu, useFlashAttn: !!o.useFlashAttn })
}

async function initWhisperVad(options, variant) {
  checkVariant(variant)
  const o = options || {}
  if (typeof o.filePath !== 'string' || o.filePath === '') throw new Error('Model path is required')
  const inner = await hark.initWhisperVad({ filePath: o.filePath, useGpu: o.useGpu, nThreads: o.nThreads })
  return new WhisperVadContext(inner, { filePath: o.filePath, useGpu: inner.gpu, nThreads: o.nThreads ?? 0 })
}

async function initParakeet() {
  throw new Error('Parakeet models are not supported by hark (Whisper models only)')
}

async function loadWhisperModule(variant) {
  checkVariant(variant)
  return { WhisperContext, WhisperVadContext }
}

function configureWasm() {
  throw new Error('configureWasm is only available in the browser WASM build')
}

const isWasmThreadsSupported = () => false
const WASM_CONFIG_PATHS = Object.freeze({ index: '', js: '', wasm: '', threadsJs: '', threadsWasm: '', worker: '' })

const api = {
  initWhisper,
  initWhisperVad,
  initParakeet,
  loadWhisperModule,
  toggleNativeLog: hark.toggleNativeLog,
  addNativeLogListener: hark.addNativeLogListener,
  isNativeLogEnabled: hark.isNativeLogEnabled,
  configureWasm,
  isWasmThreadsSupported,
  WASM_CONFIG_PATHS,
}

module.exports = { ...api, WhisperContext, WhisperVadContext, default: api }
Object.defineProperty(module.exports, '__esModule', { value: true })
