// Types of hark-whisper/realtime-transcription: whisper.rn 0.7's realtime-transcription API.
import type { WhisperContext, WhisperVadContext, TranscribeOptions, TranscribeResult, VadOptions } from '..'

export type { VadOptions }

export declare const VAD_PRESETS: {
  readonly default: Required<VadOptions>
  readonly sensitive: Required<VadOptions>
  readonly 'very-sensitive': Required<VadOptions>
  readonly conservative: Required<VadOptions>
  readonly 'very-conservative': Required<VadOptions>
  readonly continuous: Required<VadOptions>
  readonly meeting: Required<VadOptions>
  readonly noisy: Required<VadOptions>
}

export interface AudioStreamData {
  /** 16-bit little-endian PCM. */
  data: Uint8Array
  sampleRate: number
  channels: number
  timestamp: number
}

export interface AudioStreamConfig {
  sampleRate?: number
  channels?: number
  bitsPerSample?: number
  bufferSize?: number
  audioSource?: number
}

export interface AudioStreamInterface {
  initialize(config: AudioStreamConfig): Promise<void>
  start(): Promise<void>
  stop(): Promise<void>
  isRecording(): boolean
  onData(callback: (data: AudioStreamData) => void): void
  onError(callback: (error: string) => void): void
  onStatusChange(callback: (isRecording: boolean) => void): void
  onEnd?(callback: () => void): void
  release(): Promise<void>
}

export interface RealtimeVadEvent {
  type: 'speech_start' | 'speech_end' | 'speech_continue' | 'silence'
  timestamp: number
  lastSpeechDetectedTime: number
  confidence: number
  /** Seconds of the current slice. */
  duration: number
  sliceIndex: number
  analysis?: { averageAmplitude: number; peakAmplitude: number; spectralCentroid?: number; zeroCrossingRate?: number }
  currentThreshold?: number
  environmentNoise?: number
}

export interface MemoryUsage {
  slicesInMemory: number
  totalSamples: number
  estimatedMB: number
}

export interface RealtimeTranscribeEvent {
  type: 'start' | 'transcribe' | 'end' | 'error'
  sliceIndex: number
  data?: TranscribeResult
  isCapturing: boolean
  processTime: number
  recordingTime: number
  memoryUsage?: MemoryUsage
  vadEvent?: RealtimeVadEvent
}

export interface RealtimeStatistics {
  isActive: boolean
  isTranscribing: boolean
  vadEnabled: boolean
  audioStats: { isRecording: boolean; accumulatedSamples: number }
  vadStats: { enabled: boolean; contextAvailable: boolean; lastSpeechDetectedTime: number } | null
  sliceStats: { currentSliceIndex: number; transcribeSliceIndex: number; totalSlices: number; memoryUsage: MemoryUsage }
}

export interface RealtimeStatsEvent {
  timestamp: number
  type: 'slice_processed' | 'vad_change' | 'memory_change' | 'status_change'
  data: RealtimeStatistics
}

export interface AudioSlice {
  index: number
  data: Uint8Array
  sampleCount: number
  startTime: number
  endTime: number
  isProcessed: boolean
  isReleased: boolean
}

export type AudioSliceNoData = Omit<AudioSlice, 'data'>

/** whisper.rn's file system interface (react-native-fs style; data as base64). */
export interface WavFileWriterFs {
  writeFile(filePath: string, data: string, encoding: string): Promise<void>
  appendFile(filePath: string, data: string, encoding: string): Promise<void>
  readFile(filePath: string, encoding: string): Promise<string>
  exists(filePath: string): Promise<boolean>
  unlink(filePath: string): Promise<void>
}

export interface RealtimeVadContextLike {
  processAudio(data: Uint8Array): void
  onSpeechStart(callback: (confidence: number, data: Uint8Array) => void): void
  onSpeechContinue(callback: (confidence: number, data: Uint8Array) => void): void
  onSpeechEnd(callback: (confidence: number) => void): void
  onError(callback: (error: string) => void): void
  updateOptions(options: Partial<VadOptions>): void
  flush(): Promise<void>
  reset(): Promise<void>
}

export type RealtimeTranscriberDependencies = {
  whisperContext: WhisperContext
  /** hark: a RingBufferVad or WhisperVadContext of this package. */
  vadContext?: RingBufferVad | WhisperVadContext
  audioStream: AudioStreamInterface
  fs?: WavFileWriterFs
}

export interface RealtimeOptions {
  audioSliceSec?: number
  audioMinSec?: number
  maxSlicesInMemory?: number
  transcribeOptions?: TranscribeOptions
  initialPrompt?: string
  promptPreviousSlices?: boolean
  audioOutputPath?: string
  audioStreamConfig?: AudioStreamConfig
  logger?: (message: string) => void
  realtimeProcessingPauseMs?: number
  initRealtimeAfterMs?: number
}

export interface RealtimeTranscriberCallbacks {
  onBeginTranscribe?: (info: { audioData: Uint8Array; sliceIndex: number; duration: number; vadEvent?: RealtimeVadEvent }) => Promise<boolean>
  onTranscribe?: (event: RealtimeTranscribeEvent) => void
  onBeginVad?: (info: { audioData: Uint8Array; sliceIndex: number; duration: number }) => Promise<boolean>
  onVad?: (event: RealtimeVadEvent) => void
  onError?: (error: string) => void
  onStatusChange?: (isActive: boolean) => void
  onStatsUpdate?: (event: RealtimeStatsEvent) => void
  onSliceTranscriptionStabilized?: (text: string) => void
}

export declare class RealtimeTranscriber {
  constructor(dependencies: RealtimeTranscriberDependencies, options?: RealtimeOptions, callbacks?: RealtimeTranscriberCallbacks)
  start(): Promise<void>
  /** Ends capture after transcribing what was captured (hark; whisper.rn drops it: abort()). */
  stop(): Promise<void>
  /** hark: ends at once, dropping the slice in progress. */
  abort(): Promise<void>
  nextSlice(): Promise<void>
  reset(): void
  release(): Promise<void>
  updateCallbacks(callbacks: Partial<RealtimeTranscriberCallbacks>): void
  updateVadOptions(options: Partial<VadOptions>): void
  getStatistics(): RealtimeStatistics
  getTranscriptionResults(): Array<{ slice: AudioSliceNoData; transcribeEvent: RealtimeTranscribeEvent }>
}

export interface RingBufferVadOptions {
  vadOptions?: VadOptions
  vadPreset?: keyof typeof VAD_PRESETS
  preRecordingBufferMs?: number
  sampleRate?: number
  inferenceIntervalMs?: number
  speechRateThreshold?: number
  logger?: (message: string) => void
}

// The methods of RealtimeVadContextLike, by declaration merging.
export interface RingBufferVad extends RealtimeVadContextLike {}
export declare class RingBufferVad {
  constructor(vadContext: WhisperVadContext, options?: RingBufferVadOptions)
}

export declare class RingBuffer {
  constructor(capacity: number)
  readonly capacity: number
  readonly size: number
  write(data: Uint8Array): void
  read(): Uint8Array
  clear(): void
}

export declare class SliceManager {
  constructor(sliceDurationSec?: number, maxSlicesInMemory?: number, sampleRate?: number)
  addAudioData(data: Uint8Array): { slice?: AudioSlice }
  forceNextSlice(): { slice?: AudioSlice }
  getSliceByIndex(index: number): AudioSlice | undefined
  getAudioDataForTranscription(index: number): Uint8Array | null
  getCurrentSliceInfo(): { currentSliceIndex: number; transcribeSliceIndex: number; totalSlices: number; memoryUsage: MemoryUsage }
  getSliceForTranscription(): AudioSlice | undefined
  markSliceAsProcessed(index: number): void
  moveToNextTranscribeSlice(): void
  getMemoryUsage(): MemoryUsage
  reset(): void
}

// The adapters have AudioStreamInterface's methods (by declaration merging), onEnd included.
interface NativeSourceAdapter extends Required<AudioStreamInterface> {}
declare class NativeSourceAdapter {}

/** hark: the microphone (PulseAudio / PipeWire source; 'default' or a source name). */
export declare class MicrophoneAudioStreamAdapter extends NativeSourceAdapter {
  constructor(options?: { device?: string })
}

/** A file (any format) played as if recorded, at playbackSpeed x real time (0: as fast as taken). */
export declare class SimulateFileAudioStreamAdapter extends NativeSourceAdapter {
  constructor(options: {
    filePath: string
    playbackSpeed?: number
    chunkDurationMs?: number
    loop?: boolean
    onEndOfFile?: () => void
    logger?: (message: string) => void
    /** whisper.rn's; not needed in Node. */
    fs?: unknown
  })
  setPlaybackSpeed(speed: number): void
}

/** hark: audio the app pushes (16-bit PCM). */
export interface PushAudioStreamAdapter extends Required<AudioStreamInterface> {}
export declare class PushAudioStreamAdapter {
  constructor(options?: { sampleRate?: number; channels?: number; live?: boolean })
  push(chunk: Uint8Array | Int16Array | ArrayBuffer): void
  end(): void
}
