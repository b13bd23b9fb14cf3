// Types of hark-whisper/whisper.node: @fugood/whisper.node 1.1's API on hark's engine.
import type { TranscribeOptions as RnTranscribeOptions, VadOptions, VadSegment } from './index'

export type { VadOptions, VadSegment }
export type LibVariant = 'default' | 'vulkan' | 'cuda'

export interface NativeContextOptions {
  filePath: string
  modelUrl?: string
  useFlashAttn?: boolean
  useGpu?: boolean
  maxModelBytes?: number
}

export interface NativeVadContextOptions {
  filePath: string
  modelUrl?: string
  useGpu?: boolean
  nThreads?: number
  maxModelBytes?: number
}

export interface NativeParakeetContextOptions {
  filePath: string
  modelUrl?: string
  useGpu?: boolean
  maxModelBytes?: number
}

export interface TranscribeResult {
  language?: string
  result: string
  /** t0 / t1 in milliseconds. */
  segments: Array<{ text: string; t0: number; t1: number }>
  isAborted: boolean
}

export interface TranscribeNewSegmentsResult {
  nNew: number
  totalNNew: number
  result: string
  segments: TranscribeResult['segments']
}

/** whisper.rn's options (`language` 'en' by default; offset and duration in ms), segments in ms. */
export type TranscribeOptions = Pick<
  RnTranscribeOptions,
  | 'language' | 'translate' | 'maxThreads' | 'nProcessors' | 'maxContext' | 'maxLen' | 'tokenTimestamps'
  | 'tdrzEnable' | 'wordThold' | 'offset' | 'duration' | 'temperature' | 'temperatureInc' | 'beamSize'
  | 'bestOf' | 'prompt'
> & {
  onProgress?: (progress: number) => void
  onNewSegments?: (result: TranscribeNewSegmentsResult) => void
}

export interface ParakeetTranscribeOptions {
  maxThreads?: number
  audioCtx?: number
}

export interface BenchResult {
  config: string
  nThreads: number
  encodeMs: number
  decodeMs: number
  batchdMs: number
  promptMs: number
}

export interface TranscribeJob {
  stop: () => Promise<void>
  /** Rejects with 'Transcription cancelled' after stop(). */
  promise: Promise<TranscribeResult>
}

export declare class WhisperContext {
  private constructor()
  getModelInfo(): { filePath: string; useGpu: boolean; useFlashAttn: boolean }
  transcribeFile(filePath: string, options?: TranscribeOptions): TranscribeJob
  transcribe(filePath: string, options?: TranscribeOptions): TranscribeJob
  /** 16 kHz mono 16-bit PCM. */
  transcribeData(audioData: ArrayBuffer, options?: TranscribeOptions): TranscribeJob
  bench(nThreads: number): Promise<BenchResult>
  release(): Promise<void>
}

export declare class WhisperVadContext {
  private constructor()
  getModelInfo(): { filePath: string; useGpu: boolean; nThreads: number }
  detectSpeech(filePath: string, options?: VadOptions): Promise<VadSegment[]>
  detectSpeechFile(filePath: string, options?: VadOptions): Promise<VadSegment[]>
  detectSpeechData(audioData: ArrayBuffer, options?: VadOptions): Promise<VadSegment[]>
  release(): Promise<void>
}

/** whisper.node's; hark runs Whisper models only: always rejects. */
export interface ParakeetContext {
  transcribeData(audioData: ArrayBuffer, options?: ParakeetTranscribeOptions): TranscribeJob
  release(): Promise<void>
}

export interface WasmRuntimeOptions {
  [key: string]: unknown
}

export declare function initWhisper(options: NativeContextOptions, variant?: LibVariant): Promise<WhisperContext>
export declare function initWhisperVad(options: NativeVadContextOptions, variant?: LibVariant): Promise<WhisperVadContext>
export declare function initParakeet(options: NativeParakeetContextOptions, variant?: LibVariant): Promise<ParakeetContext>
export declare function loadWhisperModule(variant?: LibVariant): Promise<unknown>
export declare function toggleNativeLog(enable: boolean): Promise<void>
export declare function addNativeLogListener(listener: (level: string, text: string) => void): { remove: () => void }
export declare function isNativeLogEnabled(): boolean
export declare function configureWasm(options: WasmRuntimeOptions): void
export declare function isWasmThreadsSupported(): boolean
export declare const WASM_CONFIG_PATHS: {
  index: string
  js: string
  wasm: string
  threadsJs: string
  threadsWasm: string
  worker: string
}

declare const whisper: {
  initWhisper: typeof initWhisper
  initWhisperVad: typeof initWhisperVad
  initParakeet: typeof initParakeet
  loadWhisperModule: typeof loadWhisperModule
  toggleNativeLog: typeof toggleNativeLog
  addNativeLogListener: typeof addNativeLogListener
  isNativeLogEnabled: typeof isNativeLogEnabled
  configureWasm: typeof configureWasm
  isWasmThreadsSupported: typeof isWasmThreadsSupported
  WASM_CONFIG_PATHS: typeof WASM_CONFIG_PATHS
}
export default whisper
