// An app written against whisper.rn 0.7's realtime-transcription types, as its README shows one;
// only the imports are changed (whisper.rn -> hark-whisper, and Node's adapters for React
// Native's). `tsc --noEmit -p test/types` checks it against this package's .d.ts files.
import { initWhisper, initWhisperVad } from 'hark-whisper'
import {
  RealtimeTranscriber,
  RingBufferVad,
  VAD_PRESETS,
  type RealtimeTranscribeEvent,
  type RealtimeVadEvent,
  type RealtimeStatsEvent,
  type RealtimeOptions,
  type RealtimeTranscriberCallbacks,
  type AudioStreamInterface,
  type AudioStreamData,
  type WavFileWriterFs,
} from 'hark-whisper/realtime-transcription'
import { AudioPcmStreamAdapter } from 'hark-whisper/realtime-transcription/adapters/AudioPcmStreamAdapter'
import { SimulateFileAudioStreamAdapter } from 'hark-whisper/realtime-transcription/adapters/SimulateFileAudioStreamAdapter'

declare const RNFS: WavFileWriterFs

async function app(): Promise<void> {
  const whisperContext = await initWhisper({ filePath: 'ggml-tiny.en.bin' })
  const vad = await initWhisperVad({ filePath: 'ggml-silero-v6.2.0.bin', useGpu: true, nThreads: 4 })
  const vadContext = new RingBufferVad(vad, { vadPreset: 'meeting', vadOptions: { minSilenceDurationMs: 300 } })
  const audioStream: AudioStreamInterface = new AudioPcmStreamAdapter()

  const options: RealtimeOptions = {
    audioSliceSec: 30,
    audioMinSec: 0.5,
    maxSlicesInMemory: 3,
    transcribeOptions: { language: 'en', maxThreads: 4 },
    initialPrompt: 'A meeting about the budget.',
    promptPreviousSlices: true,
    audioOutputPath: 'recording.wav',
    logger: (message: string) => console.log(message),
  }
  const callbacks: RealtimeTranscriberCallbacks = {
    onBeginTranscribe: async ({ sliceIndex, duration }) => sliceIndex >= 0 && duration > 0,
    onTranscribe: (event: RealtimeTranscribeEvent) => {
      if (event.type === 'transcribe' && event.data) {
        console.log(event.sliceIndex, event.data.result, event.processTime, event.recordingTime)
        for (const s of event.data.segments) console.log(s.t0, s.t1, s.text)
      }
      if (event.memoryUsage) console.log(event.memoryUsage.estimatedMB)
    },
    onBeginVad: async ({ audioData }) => audioData.length > 0,
    onVad: (event: RealtimeVadEvent) => console.log(event.type, event.confidence, event.sliceIndex),
    onError: (error: string) => console.error(error),
    onStatusChange: (isActive: boolean) => console.log(isActive ? 'on' : 'off'),
    onStatsUpdate: (event: RealtimeStatsEvent) => console.log(event.type, event.data.sliceStats.totalSlices),
    onSliceTranscriptionStabilized: (text: string) => console.log('stable:', text),
  }
  const transcriber = new RealtimeTranscriber({ whisperContext, vadContext, audioStream, fs: RNFS }, options, callbacks)
  await transcriber.start()
  await transcriber.nextSlice()
  transcriber.updateVadOptions({ threshold: VAD_PRESETS.sensitive.threshold })
  transcriber.updateCallbacks({ onError: (e: string) => console.warn(e) })
  const stats = transcriber.getStatistics()
  console.log(stats.isActive, stats.vadStats?.lastSpeechDetectedTime, stats.sliceStats.memoryUsage.totalSamples)
  for (const { slice, transcribeEvent } of transcriber.getTranscriptionResults())
    console.log(slice.index, slice.sampleCount, transcribeEvent.data?.result)
  await transcriber.stop()
  transcriber.reset()
  await transcriber.release()

  // A file played in real time instead of the microphone.
  const file = new SimulateFileAudioStreamAdapter({ filePath: 'talk.wav', playbackSpeed: 1, chunkDurationMs: 100 })
  file.onData((d: AudioStreamData) => console.log(d.data.length, d.sampleRate))
  const fromFile = new RealtimeTranscriber({ whisperContext, audioStream: file })
  await fromFile.start()
  await fromFile.stop()
}

void app()
