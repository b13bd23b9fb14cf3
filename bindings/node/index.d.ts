// Types of hark-whisper: whisper.rn's JavaScript API on hark's engine (index.js).
/// <reference types="node" />
import type { Readable } from 'stream'

/** whisper.rn's TranscribeOptions, plus hark's extras (marked). */
export type TranscribeOptions = {
  /** Spoken language code, or 'auto' to detect (default 'auto'). */
  language?: string
  /** Translate into English (default false). */
  translate?: boolean
  /** Compute threads (default 2 on a 4-core machine, else up to 4). */
  maxThreads?: number
  /** Parts decoded in parallel (default 1). */
  nProcessors?: number
  /** Previous-text tokens kept as prompt (-1: the model's). */
  maxContext?: number
  /** Maximum segment length in bytes of text (0: no limit). */
  maxLen?: number
  /** Token-level timestamps (each segment gets `tokens`). */
  tokenTimestamps?: boolean
  /** Speaker turns on tinydiarize models (" [SPEAKER_TURN]" after a segment's text). */
  tdrzEnable?: boolean
  /** Token timestamp probability threshold (default 0.01). */
  wordThold?: number
  /** Start in the audio, ms. */
  offset?: number
  /** Length of audio to transcribe, ms (0: to the end). */
  duration?: number
  /** Initial decoding temperature (default 0). */
  temperature?: number
  /** Fallback temperature step (default 0.2; 0: no fallback). */
  temperatureInc?: number
  /** Beam search width (default: greedy). */
  beamSize?: number
  /** Candidates sampled at temperature > 0 (default 5). */
  bestOf?: number
  /** Initial prompt. */
  prompt?: string
  /** hark: word timestamps by DTW over the alignment heads (segments get `words`). */
  wordTimestamps?: boolean
  /** hark: maxLen cuts only between words. */
  splitOnWord?: boolean
  /** hark: no previous text as prompt. */
  noContext?: boolean
  /** hark: one segment per window. */
  singleSegment?: boolean
  /** hark: no timestamp tokens. */
  noTimestamps?: boolean
  /** hark: decoding thresholds and sampling (whisper.cpp's meanings). */
  suppressBlank?: boolean
  /** Never write non-speech tokens ("(", "[", "♪", ...). Default false, as whisper.rn's (hark's CLI: true). */
  suppressNst?: boolean
  noSpeechThold?: number
  logprobThold?: number
  entropyThold?: number
  patience?: number
  lengthPenalty?: number
  seed?: number
  maxInitialTs?: number
  carryInitialPrompt?: boolean
  /** hark: tokens decoded per 30 s window at most (0: the model's limit). */
  maxTokensPerWindow?: number
  /** hark: batched pipeline (needs vadModelPath): this many VAD chunks decoded at once. */
  batchSize?: number
  /** hark (faster-whisper's hotwords): words to expect, before every window's prompt. */
  hotwords?: string
  /** hark (faster-whisper's prefix): the transcript begins with this text. */
  prefix?: string
  /** hark (faster-whisper's multilingual): each window decoded in its own detected language. */
  multilingual?: boolean
  /** hark: a produced token's logit is divided by this (faster-whisper's repetition_penalty; 1: off). */
  repetitionPenalty?: number
  /** hark: no n-gram of this many tokens occurs twice in a window (0: off). */
  noRepeatNgramSize?: number
  /** hark: lengthPenalty as CTranslate2's exponent (log-probability / length^lengthPenalty). */
  lengthPenaltyPower?: boolean
  /** hark: transcribe only these clips, seconds [start, end, start, ...] (odd: the last to the end). */
  clipTimestamps?: number[]
  /** hark: transcribe only the speech the Silero VAD finds (needs vadModelPath). */
  vad?: boolean
  vadModelPath?: string
  vadThreshold?: number
  vadMinSpeechDurationMs?: number
  vadMinSilenceDurationMs?: number
  vadSpeechPadMs?: number
  vadMaxSpeechDurationS?: number
  vadSamplesOverlap?: number
}

/** hark: how raw PCM given to transcribeData / detectSpeechData / push is read. */
export type PcmOptions = {
  /** How an ArrayBuffer, Buffer or base64 string is read (default 'int16': 16-bit little-endian, as whisper.rn reads them). */
  pcmFormat?: 'int16' | 'float32'
  /** Default 16000. */
  sampleRate?: number
  /** Interleaved channels (default 1). */
  channels?: number
}

export type TranscribeSegment = {
  text: string
  /** 10 ms units. */
  t0: number
  t1: number
  /** hark, with wordTimestamps. */
  words?: Array<{ word: string; t0: number; t1: number; p: number }>
  /** hark, with tokenTimestamps. */
  tokens?: Array<{ id: number; text: string; p: number; t0: number; t1: number }>
}

export type TranscribeResult = {
  result: string
  language: string
  segments: TranscribeSegment[]
  isAborted: boolean
  /** hark: the detected language's probability (0 when it was given). */
  languageProb?: number
  /** hark. */
  timings?: { totalMs: number; encodeMs: number; decodeMs: number; melMs: number; audioSeconds: number; nThreads: number }
}

export type TranscribeNewSegmentsResult = {
  nNew: number
  totalNNew: number
  result: string
  segments: TranscribeResult['segments']
}

export type TranscribeFileOptions = TranscribeOptions & {
  /** 0..100 */
  onProgress?: (progress: number) => void
  onNewSegments?: (result: TranscribeNewSegmentsResult) => void
}

export type TranscribeDataOptions = TranscribeFileOptions & PcmOptions

export type TranscribeJob = {
  /** Resolves once the job has stopped. */
  stop: () => Promise<void>
  promise: Promise<TranscribeResult>
  /** hark. */
  jobId: number
}

export type TranscribeRealtimeOptions = TranscribeOptions &
  PcmOptions & {
    realtimeAudioSec?: number
    realtimeAudioSliceSec?: number
    realtimeAudioMinSec?: number
    /** A WAV of everything captured: 16-bit PCM as whisper.rn writes it. */
    audioOutputPath?: string
    /** hark: 'float32' writes the samples exactly as fed (default 'int16'). */
    audioOutputFormat?: 'int16' | 'float32'
    /** iOS audio session settings (whisper.rn's): accepted, ignored here. */
    audioSessionOnStartIos?: AudioSessionSettingIos
    audioSessionOnStopIos?: AudioSessionSettingIos | 'restore'
    useVad?: boolean
    vadMs?: number
    vadThold?: number
    vadFreqThold?: number
    /** hark: partial results at most every this many seconds of new audio (default 1; 0: none). */
    partialSec?: number
    /** hark: 'microphone' (default) or 'push' (push() / end()). */
    audioSource?: 'microphone' | 'push'
    /** hark: a Readable of PCM to transcribe (implies audioSource 'push'). */
    audioStream?: Readable | AsyncIterable<Buffer | Uint8Array>
    /** hark: the capture device ('default'). */
    captureDevice?: string
    /** hark, push: drop audio that finds the buffer full instead of waiting (default false). */
    live?: boolean
  }

export type TranscribeRealtimeSlice = {
  /** 0; -1 its transcription failed (error says why); -999 abandoned by abort(). */
  code: number
  error?: string
  data?: { result: string; segments: TranscribeSegment[] }
  processTime: number
  recordingTime: number
  /** hark. */
  index: number
  final: boolean
  t0: number
  t1: number
}

export type TranscribeRealtimeEvent = {
  contextId: number
  jobId: number
  /** false: the last event. */
  isCapturing: boolean
  isStoppedByAction?: boolean
  code: number
  data?: { result: string; segments: TranscribeSegment[] }
  error?: string
  processTime: number
  recordingTime: number
  slices?: TranscribeRealtimeSlice[]
  /** hark. */
  sliceIndex?: number
  droppedSamples?: number
}

export type PcmChunk = Float32Array | Int16Array | Uint8Array | ArrayBuffer

export type TranscribeRealtimeHandle = {
  /** Ends capture; what was captured is still transcribed (whisper.rn aborts the slice: abort()). */
  stop: () => Promise<void>
  /** Ends at once, abandoning the slice in progress (whisper.rn's stop()). */
  abort: () => Promise<void>
  /** Adds a listener (the first also gets the events before it). */
  subscribe: (callback: (event: TranscribeRealtimeEvent) => void) => void
  /** hark, audioSource 'push'. */
  push: (chunk: PcmChunk) => Promise<void>
  end: () => void
  /** hark: true once the last event has been delivered. */
  readonly ended: boolean
  /** hark: the last event, once the stream has ended. */
  done: Promise<TranscribeRealtimeEvent | undefined>
  jobId: number
}

export type BenchResult = {
  config: string
  nThreads: number
  encodeMs: number
  decodeMs: number
  batchMs: number
  promptMs: number
}

export declare class WhisperContext {
  private constructor()
  id: number
  /** The native context's address (whisper.rn's). */
  ptr: number
  gpu: boolean
  reasonNoGPU: string
  /** hark. */
  device: string
  model: { path: string; type: string; weightType: string; multilingual: boolean }
  transcribe(filePathOrBase64: string, options?: TranscribeFileOptions): TranscribeJob
  transcribeFile(filePathOrBase64: string, options?: TranscribeFileOptions): TranscribeJob
  transcribeData(data: string | ArrayBuffer | Float32Array | Int16Array | Uint8Array, options?: TranscribeDataOptions): TranscribeJob
  transcribeRealtime(options?: TranscribeRealtimeOptions): Promise<TranscribeRealtimeHandle>
  bench(maxThreads: number): Promise<BenchResult>
  release(): Promise<void>
}

export type ContextOptions = {
  filePath: string
  isBundleAsset?: boolean
  /** Default true. */
  useGpu?: boolean
  /** Default false (whisper.rn's). */
  useFlashAttn?: boolean
  /** Accepted, ignored (Core ML on iOS). */
  useCoreMLIos?: boolean
  /** Accepted, ignored (Core ML on iOS). */
  coreMLModelAsset?: { filename: string; assets: Array<string | number> }
  /** hark: a device by name ('cpu', 'cpu-ref'). */
  device?: string
  /** hark: the cross-attention K/V cache's type. Default 'f16' (the reference's results); 'q8_0'
   * takes 0.53x the memory and the bytes each decode step reads per window (fastest with
   * batchSize > 1), logits move by ~1e-3. Needs useFlashAttn: true. */
  crossKvType?: 'f16' | 'q8_0'
}

export declare function initWhisper(options: ContextOptions): Promise<WhisperContext>
export declare function releaseAllWhisper(): Promise<void>

export type VadOptions = {
  threshold?: number
  minSpeechDurationMs?: number
  minSilenceDurationMs?: number
  maxSpeechDurationS?: number
  speechPadMs?: number
  samplesOverlap?: number
}

export type VadSegment = { t0: number; t1: number }

export type VadContextOptions = {
  filePath: string
  isBundleAsset?: boolean
  useGpu?: boolean
  nThreads?: number
}

export declare class WhisperVadContext {
  private constructor()
  id: number
  gpu: boolean
  reasonNoGPU: string
  detectSpeech(filePathOrBase64: string, options?: VadOptions): Promise<VadSegment[]>
  detectSpeechData(audioData: string | ArrayBuffer | Float32Array | Int16Array | Uint8Array, options?: VadOptions & PcmOptions): Promise<VadSegment[]>
  release(): Promise<void>
}

export declare function initWhisperVad(options: VadContextOptions): Promise<WhisperVadContext>
export declare function releaseAllWhisperVad(): Promise<void>

export declare function toggleNativeLog(enabled: boolean): Promise<void>
/** hark: whether toggleNativeLog(true) is in effect (whisper.node's name). */
export declare function isNativeLogEnabled(): boolean
export declare function addNativeLogListener(listener: (level: string, text: string) => void): { remove: () => void }

/** hark's version. */
export declare const libVersion: string
export declare const isUseCoreML: boolean
export declare const isCoreMLAllowFallback: boolean
/** hark: SIMD levels and devices. */
export declare const systemInfo: string
/** hark: whether microphone capture is built in. */
export declare const captureSupported: boolean

/** hark: what a rejected promise carries when the library refused or failed: `code` is
 * `ERR_HARK_` and the category (INVALID_ARGUMENT, NOT_FOUND, UNSUPPORTED, CORRUPT_DATA, IO,
 * RESOURCE_EXHAUSTED, ABORTED, INTERNAL); `field` the library's name of the option it is about. */
export interface HarkError extends Error {
  code?: string
  field?: string
}

/** whisper.rn's iOS audio session settings; there is no audio session here. */
export declare enum AudioSessionCategoryIos {
  Ambient = 'Ambient',
  SoloAmbient = 'SoloAmbient',
  Playback = 'Playback',
  Record = 'Record',
  PlayAndRecord = 'PlayAndRecord',
  MultiRoute = 'MultiRoute',
}
export declare enum AudioSessionCategoryOptionIos {
  MixWithOthers = 'MixWithOthers',
  DuckOthers = 'DuckOthers',
  InterruptSpokenAudioAndMixWithOthers = 'InterruptSpokenAudioAndMixWithOthers',
  AllowBluetooth = 'AllowBluetooth',
  AllowBluetoothA2DP = 'AllowBluetoothA2DP',
  AllowAirPlay = 'AllowAirPlay',
  DefaultToSpeaker = 'DefaultToSpeaker',
}
export declare enum AudioSessionModeIos {
  Default = 'Default',
  VoiceChat = 'VoiceChat',
  VideoChat = 'VideoChat',
  GameChat = 'GameChat',
  VideoRecording = 'VideoRecording',
  Measurement = 'Measurement',
  MoviePlayback = 'MoviePlayback',
  SpokenAudio = 'SpokenAudio',
}
export type AudioSessionSettingIos = {
  category: AudioSessionCategoryIos
  options?: AudioSessionCategoryOptionIos[]
  mode?: AudioSessionModeIos
  active?: boolean
}
/** The setters resolve without effect; the getters reject ('Only supported on iOS'), as whisper.rn's off iOS. */
export declare const AudioSessionIos: {
  Category: typeof AudioSessionCategoryIos
  CategoryOption: typeof AudioSessionCategoryOptionIos
  Mode: typeof AudioSessionModeIos
  getCurrentCategory: () => Promise<{ category: AudioSessionCategoryIos; options: AudioSessionCategoryOptionIos[] }>
  getCurrentMode: () => Promise<AudioSessionModeIos>
  setCategory: (category: AudioSessionCategoryIos, options: AudioSessionCategoryOptionIos[]) => Promise<void>
  setMode: (mode: AudioSessionModeIos) => Promise<void>
  setActive: (active: boolean) => Promise<void>
}
